import CommonMark

/// Small CommonMark lexers over raw bytes, used to find the exact bytes of a link destination that
/// cmark-gfm parsed (it reports where an image is, not where its URL is, and sometimes not even that).
package enum MarkdownSyntax {
    /// A link destination as written.
    package struct Destination: Equatable {
        /// Bytes of the destination, without `<` `>`.
        package var range: Range<Int>
        var angle: Bool
        /// What cmark makes of it: character references decoded, then backslash escapes removed.
        var decoded: String
    }

    /// Lexes a destination starting at `position` (after `(` or `]:`), skipping spaces, tabs and at
    /// most one line ending first.
    package static func destination(in bytes: [UInt8], at position: Int, limit: Int) -> Destination? {
        var i = skipSpaces(bytes, position, limit)
        if i < limit, bytes[i] == 0x0D { i += 1 }
        if i < limit, bytes[i] == 0x0A { i = skipSpaces(bytes, i + 1, limit) }
        guard i < limit else { return nil }
        if bytes[i] == UInt8(ascii: "<") {
            var j = i + 1
            while j < limit, bytes[j] != UInt8(ascii: ">") {
                if bytes[j] == 0x0A || bytes[j] == UInt8(ascii: "<") { return nil }
                j += bytes[j] == UInt8(ascii: "\\") && j + 1 < limit ? 2 : 1
            }
            guard j < limit else { return nil }
            return Destination(range: i + 1..<j, angle: true, decoded: decode(bytes[i + 1..<j]))
        }
        var j = i
        var depth = 0
        while j < limit {
            let c = bytes[j]
            if c <= 0x20 || c == 0x7F { break }
            if c == UInt8(ascii: "\\"), j + 1 < limit, bytes[j + 1].isASCIIPunctuation { j += 2; continue }
            if c == UInt8(ascii: "(") { depth += 1; if depth > 32 { return nil } }
            if c == UInt8(ascii: ")") { if depth == 0 { break }; depth -= 1 }
            j += 1
        }
        guard depth == 0 else { return nil }
        return Destination(range: i..<j, angle: false, decoded: decode(bytes[i..<j]))
    }

    /// Index of the `]` that closes the bracket opened just before `start`, honouring backslash
    /// escapes, code spans and nesting.
    package static func closingBracket(in bytes: [UInt8], from start: Int, limit: Int) -> Int? {
        var i = start
        var depth = 1
        while i < limit {
            switch bytes[i] {
            case UInt8(ascii: "\\"):
                i += 2
                continue
            case UInt8(ascii: "`"):
                let run = runLength(bytes, i, limit, of: UInt8(ascii: "`"))
                if let close = closingBackticks(bytes, from: i + run, count: run, limit: limit) {
                    i = close + run
                    continue
                }
                i += run
                continue
            case UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return i }
            default:
                break
            }
            i += 1
        }
        return nil
    }

    /// Every inline destination (`](destination`) in `range`, outside code spans and not behind a
    /// backslash escape: the candidates when cmark's position for an image cannot be trusted.
    package static func inlineDestinations(in bytes: [UInt8], range: Range<Int>) -> [Destination] {
        var found: [Destination] = []
        var i = range.lowerBound
        while i + 1 < range.upperBound {
            switch bytes[i] {
            case UInt8(ascii: "\\"):
                i += 2
                continue
            case UInt8(ascii: "`"):
                let run = runLength(bytes, i, range.upperBound, of: UInt8(ascii: "`"))
                if let close = closingBackticks(bytes, from: i + run, count: run, limit: range.upperBound) {
                    i = close + run
                } else {
                    i += run
                }
                continue
            case UInt8(ascii: "]") where bytes[i + 1] == UInt8(ascii: "("):
                if let destination = destination(in: bytes, at: i + 2, limit: range.upperBound) { found.append(destination) }
            default:
                break
            }
            i += 1
        }
        return found
    }

    /// Normalises a link label the way CommonMark matches them: case-folded, inner white space
    /// collapsed, trimmed.
    static func normalizedLabel(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        // Upper- then lower-casing approximates Unicode case folding (ß and SS match, as in cmark).
        return text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ").uppercased().lowercased()
    }

    /// Decodes a destination as cmark-gfm does (`cmark_clean_url`): character references first
    /// (`&ouml;`, `&#35;`, `&#x23;`, always with their `;`), then backslash escapes before ASCII
    /// punctuation, also those that a reference produced — so `\\&amp;` gives `&` and `&#92;*` gives `*`,
    /// where the spec's one pass would keep `&amp;` and `\\*`. The scanner must agree with cmark.
    package static func decode(_ raw: ArraySlice<UInt8>) -> String {
        var references: [UInt8] = []
        var i = raw.startIndex
        while i < raw.endIndex {
            if raw[i] == UInt8(ascii: "&"), let end = characterReferenceEnd(raw, from: i) {
                references += Array(characterReference(raw[i..<end]).utf8)
                i = end
            } else {
                references.append(raw[i])
                i += 1
            }
        }
        var out: [UInt8] = []
        i = 0
        while i < references.count {
            if references[i] == UInt8(ascii: "\\"), i + 1 < references.count, references[i + 1].isASCIIPunctuation { i += 1 }
            out.append(references[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// End of a character reference starting at `start` (its `&`), per CommonMark's syntax:
    /// `&name;`, `&#` and 1–7 digits `;`, `&#x` and 1–6 hex digits `;`.
    private static func characterReferenceEnd(_ raw: ArraySlice<UInt8>, from start: Int) -> Int? {
        var i = start + 1
        func run(_ allowed: (UInt8) -> Bool, max: Int) -> Int {
            var j = i
            while j < raw.endIndex, j - i < max, allowed(raw[j]) { j += 1 }
            return j - i
        }
        let digits: Int
        if i < raw.endIndex, raw[i] == UInt8(ascii: "#") {
            i += 1
            if i < raw.endIndex, raw[i] | 0x20 == UInt8(ascii: "x") {
                i += 1
                digits = run({ $0.isHexDigit }, max: 6)
            } else {
                digits = run({ $0.isASCIIDigit }, max: 7)
            }
        } else {
            guard i < raw.endIndex, raw[i].isASCIILetter else { return nil }
            digits = run({ $0.isASCIILetter || $0.isASCIIDigit }, max: 32)
        }
        i += digits
        guard digits > 0, i < raw.endIndex, raw[i] == UInt8(ascii: ";") else { return nil }
        return i + 1
    }

    /// What cmark-gfm makes of one character reference, asked of cmark itself: it knows every HTML5
    /// name and CommonMark's replacement of invalid code points; an unknown name stays as written.
    private static func characterReference(_ reference: ArraySlice<UInt8>) -> String {
        let nodes = Array(reference).withUnsafeBytes { MarkdownParser.parse($0) }
        return nodes.filter { $0.type == "text" }.compactMap(\.literal).joined()
    }

    static func skipSpaces(_ bytes: [UInt8], _ i: Int, _ limit: Int) -> Int {
        var i = i
        while i < limit, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        return i
    }

    private static func runLength(_ bytes: [UInt8], _ i: Int, _ limit: Int, of byte: UInt8) -> Int {
        var j = i
        while j < limit, bytes[j] == byte { j += 1 }
        return j - i
    }

    private static func closingBackticks(_ bytes: [UInt8], from start: Int, count: Int, limit: Int) -> Int? {
        var i = start
        while i < limit {
            if bytes[i] == UInt8(ascii: "`") {
                let run = runLength(bytes, i, limit, of: UInt8(ascii: "`"))
                if run == count { return i }
                i += run
            } else {
                i += 1
            }
        }
        return nil
    }
}

extension UInt8 {
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }

    var isASCIIDigit: Bool { (0x30...0x39).contains(self) }

    var isASCIIPunctuation: Bool {
        (0x21...0x2F).contains(self) || (0x3A...0x40).contains(self) || (0x5B...0x60).contains(self) || (0x7B...0x7E).contains(self)
    }
}
