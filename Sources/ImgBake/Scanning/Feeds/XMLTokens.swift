/// A small XML tokenizer for RSS and Atom feeds that keeps the byte range of every attribute value and
/// text run. No maintained Swift XML library with byte offsets is in the package mirror (XMLCoder and
/// SWXMLHash decode into values; Foundation's XMLParser reports line and column, not byte ranges of
/// values), and feeds are rewritten by splicing bytes, so this reads just enough of XML 1.0: tags,
/// attributes, text, CDATA, and skips comments, processing instructions and the doctype.
struct XMLToken {
    enum Kind {
        case start(name: String, attributes: [XMLAttribute], selfClosing: Bool)
        case end(name: String)
        /// Raw text (character references not decoded).
        case text
        /// The contents of `<![CDATA[...]]>`.
        case cdata
    }

    var kind: Kind
    /// For text and CDATA, the contents; for tags, the whole tag.
    var range: Range<Int>
}

struct XMLAttribute {
    var name: String
    /// Between the quotes.
    var valueRange: Range<Int>
    var quote: UInt8
}

enum XMLTokens {
    /// The tokens of `bytes`, or nil where it is not well-formed enough to be sure of them (an
    /// unterminated tag, comment or CDATA; an unquoted attribute).
    static func tokenize(_ bytes: [UInt8]) -> [XMLToken]? {
        var tokens: [XMLToken] = []
        var i = ByteOrderMark.length(bytes)
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<") else {
                let start = i
                while i < bytes.count, bytes[i] != UInt8(ascii: "<") { i += 1 }
                tokens.append(XMLToken(kind: .text, range: start..<i))
                continue
            }
            if bytes[i...].starts(with: Array("<![CDATA[".utf8)) {
                guard let end = find("]]>", in: bytes, from: i + 9) else { return nil }
                tokens.append(XMLToken(kind: .cdata, range: i + 9..<end))
                i = end + 3
            } else if bytes[i...].starts(with: Array("<!--".utf8)) {
                guard let end = find("-->", in: bytes, from: i + 4) else { return nil }
                i = end + 3
            } else if bytes[i...].starts(with: Array("<?".utf8)) {
                guard let end = find("?>", in: bytes, from: i + 2) else { return nil }
                i = end + 2
            } else if bytes[i...].starts(with: Array("<!".utf8)) {
                guard let end = doctypeEnd(bytes, from: i + 2) else { return nil }
                i = end
            } else {
                guard let (token, end) = tag(bytes, at: i) else { return nil }
                tokens.append(token)
                i = end
            }
        }
        return tokens
    }

    private static func find(_ text: String, in bytes: [UInt8], from start: Int) -> Int? {
        guard start <= bytes.count else { return nil }
        return bytes[start...].firstRange(of: Array(text.utf8))?.lowerBound
    }

    /// Past the `>` closing `<!DOCTYPE ...>`, whose internal subset (`[...]`) may hold `>`.
    private static func doctypeEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var i = start, brackets = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "["): brackets += 1
            case UInt8(ascii: "]"): brackets -= 1
            case UInt8(ascii: ">") where brackets <= 0: return i + 1
            default: break
            }
            i += 1
        }
        return nil
    }

    private static func tag(_ bytes: [UInt8], at start: Int) -> (XMLToken, Int)? {
        var i = start + 1
        let closing = i < bytes.count && bytes[i] == UInt8(ascii: "/")
        if closing { i += 1 }
        let name = self.name(bytes, &i)
        guard !name.isEmpty else { return nil }
        var attributes: [XMLAttribute] = []
        while true {
            skipSpace(bytes, &i)
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: ">") {
                let kind: XMLToken.Kind = closing ? .end(name: name) : .start(name: name, attributes: attributes, selfClosing: false)
                return (XMLToken(kind: kind, range: start..<i + 1), i + 1)
            }
            if bytes[i...].starts(with: [UInt8(ascii: "/"), UInt8(ascii: ">")]), !closing {
                return (XMLToken(kind: .start(name: name, attributes: attributes, selfClosing: true), range: start..<i + 2), i + 2)
            }
            let attributeName = self.name(bytes, &i)
            skipSpace(bytes, &i)
            guard !closing, !attributeName.isEmpty, i < bytes.count, bytes[i] == UInt8(ascii: "=") else { return nil }
            i += 1
            skipSpace(bytes, &i)
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else { return nil }
            let quote = bytes[i]
            guard let end = bytes[(i + 1)...].firstIndex(of: quote) else { return nil }
            attributes.append(XMLAttribute(name: attributeName, valueRange: i + 1..<end, quote: quote))
            i = end + 1
        }
    }

    private static func name(_ bytes: [UInt8], _ i: inout Int) -> String {
        let start = i
        while i < bytes.count, !bytes[i].isHTMLSpace, ![UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "<")].contains(bytes[i]) {
            i += 1
        }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    private static func skipSpace(_ bytes: [UInt8], _ i: inout Int) {
        while i < bytes.count, bytes[i].isHTMLSpace { i += 1 }
    }
}
