/// The image URLs of a stylesheet (a `.css` file, a `<style>` element, a `style` attribute), found
/// with a tokenizer of CSS Syntax Level 3 that knows what it must: comments, strings with their escapes,
/// `url(...)` as an unquoted URL token or a function with a string, and `image-set()` candidates. (No
/// CSS library is in Debian or the package mirror; libcss is not packaged.) Only what could be an image
/// is reported: `@import`, fonts and fragments are left alone by the reference resolver.
public enum CSSScanner {
    public struct Found: Sendable, Equatable {
        /// The URL as CSS means it (escapes decoded).
        public var url: String
        /// The bytes to replace: the URL inside its quotes, or the unquoted URL token's text.
        public var range: Range<Int>
        public var quote: UInt8?
        /// In `image-set()`: the whole candidate (URL and descriptors) and its resolution as written.
        public var candidate: (range: Range<Int>, resolution: String?)?

        public static func == (a: Found, b: Found) -> Bool {
            a.url == b.url && a.range == b.range && a.quote == b.quote && a.candidate?.range == b.candidate?.range
                && a.candidate?.resolution == b.candidate?.resolution
        }
    }

    /// Every `url()` and `image-set()` candidate in `bytes`, in order.
    public static func urls(in bytes: [UInt8]) -> [Found] {
        var tokenizer = Tokenizer(bytes: bytes)
        var tokens = tokenizer.all()[...]
        var found: [Found] = []
        var imageSetDepth: [Int] = [] // parenthesis depths at which an image-set() is open
        var depth = 0
        var candidateStart: Int?
        var pending: Found?
        func closeCandidate(at end: Int) {
            if var current = pending, let start = candidateStart {
                let resolution = resolutionText(bytes, from: current.range.upperBound, to: end)
                current.candidate = (trimmed(bytes, start..<end), resolution)
                found.append(current)
            }
            pending = nil
            candidateStart = nil
        }
        while let token = tokens.popFirst() {
            let inImageSet = imageSetDepth.last == depth
            switch token.kind {
            case .function(let name):
                if inImageSet && candidateStart == nil { candidateStart = token.range.lowerBound }
                depth += 1
                if name == "image-set" || name == "-webkit-image-set" { imageSetDepth.append(depth) }
                if name == "url", let argument = tokens.first(where: { $0.kind != CSSToken.Kind.whitespace }), case .string(let value) = argument.kind {
                    let url = Found(url: value, range: argument.range.lowerBound + 1..<argument.range.upperBound - (argument.closed ? 1 : 0),
                                    quote: bytes[argument.range.lowerBound], candidate: nil)
                    if imageSetDepth.last == depth - 1 { pending = url } else { found.append(url) }
                }
            case .url(let value, let content):
                let url = Found(url: value, range: content, quote: nil, candidate: nil)
                if inImageSet {
                    if candidateStart == nil { candidateStart = token.range.lowerBound }
                    pending = url
                } else {
                    found.append(url)
                }
            case .string(let value) where inImageSet:
                if candidateStart == nil { candidateStart = token.range.lowerBound }
                pending = Found(url: value, range: token.range.lowerBound + 1..<token.range.upperBound - (token.closed ? 1 : 0),
                                quote: bytes[token.range.lowerBound], candidate: nil)
            case .comma where inImageSet:
                closeCandidate(at: token.range.lowerBound)
            case .closeParenthesis:
                if inImageSet {
                    closeCandidate(at: token.range.lowerBound)
                    imageSetDepth.removeLast()
                }
                depth = max(0, depth - 1)
            case .openParenthesis:
                depth += 1
            default:
                if inImageSet, candidateStart == nil, token.kind != CSSToken.Kind.whitespace { candidateStart = token.range.lowerBound }
            }
        }
        return found
    }

    /// `2x`, `1.5dppx`, `192dpi` after a candidate's image, before any `type()`.
    private static func resolutionText(_ bytes: [UInt8], from start: Int, to end: Int) -> String? {
        var index = start
        // Past the closing quote and parenthesis of the URL itself.
        while index < end, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") || bytes[index] == UInt8(ascii: ")") {
            index += 1
        }
        let rest = String(decoding: bytes[index..<end], as: UTF8.self)
        return rest.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            .first { $0.first.map { $0.isNumber || $0 == "." } ?? false }.map(String.init)
    }

    private static func trimmed(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        var range = range
        while range.lowerBound < range.upperBound, bytes[range.upperBound - 1].isHTMLSpace { range = range.lowerBound..<range.upperBound - 1 }
        return range
    }
}

/// CSS tokens, as far as finding URLs needs them.
struct CSSToken: Sendable {
    enum Kind: Sendable, Equatable {
        case whitespace, comma, openParenthesis, closeParenthesis, other
        /// An identifier followed by `(`: its name, lower-cased and unescaped.
        case function(String)
        /// A string, escapes decoded.
        case string(String)
        /// An unquoted `url(...)`: its value, and the range of its text without surrounding white space.
        case url(String, content: Range<Int>)
    }
    var kind: Kind
    var range: Range<Int>
    /// For strings: whether the closing quote was there.
    var closed = true
}

private struct Tokenizer {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func all() -> [CSSToken] {
        var tokens: [CSSToken] = []
        while let token = next() { tokens.append(token) }
        return tokens
    }

    mutating func next() -> CSSToken? {
        guard index < bytes.count else { return nil }
        let start = index
        let byte = bytes[index]
        if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
            index += 2
            while index < bytes.count, !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/")) {
                index += 1
            }
            index = min(bytes.count, index + 2)
            return CSSToken(kind: .whitespace, range: start..<index)
        }
        if byte.isHTMLSpace {
            while index < bytes.count, bytes[index].isHTMLSpace { index += 1 }
            return CSSToken(kind: .whitespace, range: start..<index)
        }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return string(quote: byte)
        case UInt8(ascii: ","): index += 1; return CSSToken(kind: .comma, range: start..<index)
        case UInt8(ascii: "("): index += 1; return CSSToken(kind: .openParenthesis, range: start..<index)
        case UInt8(ascii: ")"): index += 1; return CSSToken(kind: .closeParenthesis, range: start..<index)
        default: break
        }
        if startsIdentifier(at: index) {
            let name = identifier()
            if index < bytes.count, bytes[index] == UInt8(ascii: "(") {
                index += 1
                if name == "url" { return urlOrFunction(start: start) }
                return CSSToken(kind: .function(name), range: start..<index)
            }
            return CSSToken(kind: .other, range: start..<index)
        }
        if byte == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 2 } else { index += 1 }
        return CSSToken(kind: .other, range: start..<index)
    }

    /// After `url(`: a function when a string follows (white space allowed), else an unquoted URL token.
    private mutating func urlOrFunction(start: Int) -> CSSToken {
        var look = index
        while look < bytes.count, bytes[look].isHTMLSpace { look += 1 }
        if look < bytes.count, bytes[look] == UInt8(ascii: "\"") || bytes[look] == UInt8(ascii: "'") {
            return CSSToken(kind: .function("url"), range: start..<index)
        }
        index = look
        let contentStart = index
        var value: [UInt8] = []
        var contentEnd = index
        var bad = false
        while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
            let byte = bytes[index]
            if byte.isHTMLSpace {
                contentEnd = index
                while index < bytes.count, bytes[index].isHTMLSpace { index += 1 }
                if index < bytes.count, bytes[index] != UInt8(ascii: ")") { bad = true }
                continue
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "(") || byte < 0x20 {
                bad = true
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                value += escape()
                contentEnd = index
                continue
            }
            value.append(byte)
            index += 1
            contentEnd = index
        }
        if index < bytes.count { index += 1 } // the `)`
        if bad { return CSSToken(kind: .other, range: start..<index) }
        return CSSToken(kind: .url(String(decoding: value, as: UTF8.self), content: contentStart..<max(contentStart, contentEnd)),
                        range: start..<index)
    }

    private mutating func string(quote: UInt8) -> CSSToken {
        let start = index
        index += 1
        var value: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == quote {
                index += 1
                return CSSToken(kind: .string(String(decoding: value, as: UTF8.self)), range: start..<index)
            }
            if byte == 0x0A { break } // a bad string: ends at the line
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                if bytes[index + 1] == 0x0A { index += 2; continue } // an escaped newline continues the string
                value += escape()
                continue
            }
            value.append(byte)
            index += 1
        }
        return CSSToken(kind: .string(String(decoding: value, as: UTF8.self)), range: start..<index, closed: false)
    }

    /// `\` then up to six hex digits (and one white space), or any other character.
    private mutating func escape() -> [UInt8] {
        index += 1
        var value: UInt32 = 0, digits = 0
        while index < bytes.count, digits < 6, let digit = bytes[index].hexValue {
            value = value << 4 | UInt32(digit)
            digits += 1
            index += 1
        }
        if digits > 0 {
            if index < bytes.count, bytes[index].isHTMLSpace { index += 1 } // CSS white space is HTML's
            let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
            return Array(String(Character(scalar)).utf8)
        }
        guard index < bytes.count else { return [] }
        index += 1
        return [bytes[index - 1]]
    }

    private func startsIdentifier(at at: Int) -> Bool {
        guard at < bytes.count else { return false }
        let byte = bytes[at]
        if byte == UInt8(ascii: "-") {
            guard at + 1 < bytes.count else { return false }
            return bytes[at + 1] == UInt8(ascii: "-") || isNameStart(bytes[at + 1])
        }
        return isNameStart(byte) || byte == UInt8(ascii: "\\")
    }

    private mutating func identifier() -> String {
        var name: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if isNameStart(byte) || byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) {
                name.append(byte)
                index += 1
            } else if byte == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] != 0x0A {
                name += escape()
            } else {
                break
            }
        }
        return String(decoding: name, as: UTF8.self).lowercased()
    }

    private func isNameStart(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte == UInt8(ascii: "_") || byte >= 0x80
    }
}

extension CSSScanner {
    /// Where the CSS scanned sits: as written in the file from an offset (a stylesheet, a `<style>`
    /// element), or decoded from an attribute value (`style`), whose character references make the
    /// scanned bytes differ from the file's.
    enum Container {
        case text(at: Int)
        case attribute(valueStart: Int, decoded: HTMLEntities.Decoded, quote: UInt8?)

        func fileRange(_ range: Range<Int>) -> Range<Int> {
            switch self {
            case .text(let start): return start + range.lowerBound..<start + range.upperBound
            case .attribute(let start, let decoded, _):
                let raw = decoded.rawRange(of: range)
                return start + raw.lowerBound..<start + raw.upperBound
            }
        }

        /// The syntax a `url()` is replaced in, and whether an `image-set()` candidate may be (not in
        /// an unquoted attribute, where the candidates' spaces would end the value).
        func urlSyntax(quote: UInt8?) -> ImageReference.Syntax {
            if case .attribute(_, _, let attributeQuote) = self { return .cssInAttribute(quote: quote, attributeQuote: attributeQuote) }
            return .css(quote: quote)
        }

        var candidateSyntax: ImageReference.Syntax? {
            switch self {
            case .text: .cssCandidate(attributeQuote: nil)
            case .attribute(_, _, let quote?): .cssCandidate(attributeQuote: quote)
            case .attribute(_, _, nil): nil
            }
        }
    }

    /// The references of CSS in `file`, for a stylesheet, a `<style>` element and a `style` attribute
    /// alike: a `url()` is replaced inside its parentheses, an `image-set()` candidate whole (it becomes
    /// one candidate per format; not in an unquoted attribute, where its spaces would end the value).
    /// `resolve` gives the image a URL means at a byte offset of the file.
    static func references(in bytes: [UInt8], _ container: Container, file: SourceFile,
                           resolve: (String, Int) -> ImageSource?) -> [ImageReference] {
        var references: [ImageReference] = []
        for url in urls(in: bytes) {
            let range = container.fileRange(url.range)
            guard let source = resolve(url.url, range.lowerBound) else { continue }
            let location = file.location(ofByte: range.lowerBound)
            if let candidate = url.candidate, let syntax = container.candidateSyntax {
                references.append(ImageReference(kind: .cssImageSet, source: source, location: location,
                                                 range: container.fileRange(candidate.range), syntax: syntax,
                                                 target: .formatSet(resolution: candidate.resolution)))
            } else {
                references.append(ImageReference(kind: .css, source: source, location: location, range: range,
                                                 syntax: container.urlSyntax(quote: url.quote)))
            }
        }
        return references
    }
}

extension CSSScanner {
    /// The value in CSS pixels of a declaration `property: <n>px` in a `style` attribute's text (the last
    /// one wins, as in CSS); nil when absent or not in pixels (`50%`, `auto`, `20em`).
    static func pixels(_ property: String, in style: String) -> Int? {
        var found: Int?
        for declaration in style.split(separator: ";") {
            guard let colon = declaration.firstIndex(of: ":"),
                  declaration[..<colon].trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == property else { continue }
            var value = declaration[declaration.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            if value.hasSuffix("!important") { value = value.dropLast(10).trimmingCharacters(in: .whitespaces) }
            guard value.hasSuffix("px"), let number = Double(value.dropLast(2)), number > 0, number < 100_000 else {
                found = nil
                continue
            }
            found = Int(number.rounded())
        }
        return found
    }
}
