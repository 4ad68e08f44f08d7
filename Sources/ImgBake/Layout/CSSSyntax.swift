/// The tokens of CSS Syntax Level 3 that rules, selectors and declarations are made of. The URL
/// finder (`CSSScanner`) needs less and keeps byte ranges; this one decodes names and keeps
/// everything a selector or a declaration value can hold. Hand-written: no CSS library is in Debian
/// or the package mirror (libcss, LibWeb's, Servo's are not packaged), and a rule's structure is all
/// that is needed, not a cascade engine.
enum CSSSyntax {
    enum Token: Equatable, Sendable {
        case ident(String)
        /// `name(`: the name lower-cased.
        case function(String)
        /// `@name`, lower-cased.
        case atKeyword(String)
        /// `#name`; `isID` when the name could be an ID selector.
        case hash(String, isID: Bool)
        case string(String)
        case url(String)
        case number(Double)
        case percentage(Double)
        case dimension(Double, unit: String)
        case delim(UInt8)
        case whitespace, colon, semicolon, comma
        case openSquare, closeSquare, openParen, closeParen, openCurly, closeCurly
        /// `<!--`, `-->`, a bad string or URL: kept so that nothing is silently glued together.
        case other
    }

    /// The parts of a list between commas outside any parentheses (`:is(a, b), c` is two parts).
    static func split(_ tokens: ArraySlice<Token>) -> [ArraySlice<Token>] {
        var parts: [ArraySlice<Token>] = []
        var depth = 0, start = tokens.startIndex
        for index in tokens.indices {
            switch tokens[index] {
            case .function, .openParen, .openSquare: depth += 1
            case .closeParen, .closeSquare: depth = max(0, depth - 1)
            case .comma where depth == 0:
                parts.append(tokens[start..<index])
                start = index + 1
            default: break
            }
        }
        parts.append(tokens[start..<tokens.endIndex])
        return parts
    }

    static func tokens(_ bytes: [UInt8]) -> [Token] {
        var tokenizer = Tokenizer(bytes: bytes)
        var tokens: [Token] = []
        tokens.reserveCapacity(bytes.count / 3)
        while let token = tokenizer.next() { tokens.append(token) }
        return tokens
    }

    private struct Tokenizer {
        let bytes: [UInt8]
        var index = 0

        mutating func next() -> Token? {
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            if byte == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                index += 2
                while index < bytes.count, !(bytes[index] == UInt8(ascii: "*") && peek(1) == UInt8(ascii: "/")) { index += 1 }
                index = min(bytes.count, index + 2)
                return .whitespace
            }
            if byte.isHTMLSpace {
                while index < bytes.count, bytes[index].isHTMLSpace { index += 1 }
                return .whitespace
            }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): return string(quote: byte)
            case UInt8(ascii: "#"):
                if index + 1 < bytes.count, isNameByte(bytes[index + 1]) || startsEscape(at: index + 1) {
                    index += 1
                    let isID = startsIdentifier(at: index)
                    return .hash(name(), isID: isID)
                }
            case UInt8(ascii: "("): index += 1; return .openParen
            case UInt8(ascii: ")"): index += 1; return .closeParen
            case UInt8(ascii: "["): index += 1; return .openSquare
            case UInt8(ascii: "]"): index += 1; return .closeSquare
            case UInt8(ascii: "{"): index += 1; return .openCurly
            case UInt8(ascii: "}"): index += 1; return .closeCurly
            case UInt8(ascii: ","): index += 1; return .comma
            case UInt8(ascii: ":"): index += 1; return .colon
            case UInt8(ascii: ";"): index += 1; return .semicolon
            case UInt8(ascii: "<"):
                if peek(1) == UInt8(ascii: "!"), peek(2) == UInt8(ascii: "-"), peek(3) == UInt8(ascii: "-") { index += 4; return .other }
            case UInt8(ascii: "@"):
                if startsIdentifier(at: index + 1) {
                    index += 1
                    return .atKeyword(name().lowercased())
                }
            case UInt8(ascii: "-"):
                if startsNumber(at: index) { return numeric() }
                if peek(1) == UInt8(ascii: "-"), peek(2) == UInt8(ascii: ">") { index += 3; return .other }
                if startsIdentifier(at: index) { return identLike() }
            case UInt8(ascii: "+"), UInt8(ascii: "."):
                if startsNumber(at: index) { return numeric() }
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                return numeric()
            case UInt8(ascii: "\\"):
                if startsEscape(at: index) { return identLike() }
            default:
                if isNameStart(byte) { return identLike() }
            }
            index += 1
            return .delim(byte)
        }

        private func peek(_ offset: Int) -> UInt8? {
            index + offset < bytes.count ? bytes[index + offset] : nil
        }

        private mutating func identLike() -> Token {
            let value = name()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "(") else { return .ident(value) }
            index += 1
            let lowered = value.lowercased()
            if lowered == "url" {
                var look = index
                while look < bytes.count, bytes[look].isHTMLSpace { look += 1 }
                if look < bytes.count, bytes[look] == UInt8(ascii: "\"") || bytes[look] == UInt8(ascii: "'") { return .function("url") }
                index = look
                return url()
            }
            return .function(lowered)
        }

        private mutating func url() -> Token {
            var value: [UInt8] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                if bytes[index] == UInt8(ascii: "\\"), startsEscape(at: index) {
                    value += escape()
                } else {
                    value.append(bytes[index])
                    index += 1
                }
            }
            if index < bytes.count { index += 1 }
            return .url(String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }

        private mutating func string(quote: UInt8) -> Token {
            index += 1
            var value: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                if byte == quote { index += 1; return .string(String(decoding: value, as: UTF8.self)) }
                if byte == 0x0A { return .other }
                if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    if bytes[index + 1] == 0x0A { index += 2; continue }
                    value += escape()
                    continue
                }
                value.append(byte)
                index += 1
            }
            return .string(String(decoding: value, as: UTF8.self))
        }

        private mutating func numeric() -> Token {
            let start = index
            if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            while index < bytes.count, bytes[index].isASCIIDigit { index += 1 }
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "."), bytes[index + 1].isASCIIDigit {
                index += 1
                while index < bytes.count, bytes[index].isASCIIDigit { index += 1 }
            }
            if index + 1 < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                var look = index + 1
                if bytes[look] == UInt8(ascii: "+") || bytes[look] == UInt8(ascii: "-") { look += 1 }
                if look < bytes.count, bytes[look].isASCIIDigit {
                    index = look
                    while index < bytes.count, bytes[index].isASCIIDigit { index += 1 }
                }
            }
            let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) ?? 0
            if index < bytes.count, bytes[index] == UInt8(ascii: "%") { index += 1; return .percentage(value) }
            if startsIdentifier(at: index) { return .dimension(value, unit: name().lowercased()) }
            return .number(value)
        }

        /// A name's code points, escapes decoded.
        private mutating func name() -> String {
            var value: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                if isNameByte(byte) {
                    value.append(byte)
                    index += 1
                } else if startsEscape(at: index) {
                    value += escape()
                } else {
                    break
                }
            }
            return String(decoding: value, as: UTF8.self)
        }

        /// After `\`: up to six hex digits and one white space, or the next character as it is.
        private mutating func escape() -> [UInt8] {
            index += 1
            var value: UInt32 = 0, digits = 0
            while index < bytes.count, digits < 6, let digit = bytes[index].hexValue {
                value = value << 4 | UInt32(digit)
                digits += 1
                index += 1
            }
            if digits > 0 {
                if index < bytes.count, bytes[index].isHTMLSpace { index += 1 }
                let scalar = value == 0 ? "\u{FFFD}" : Unicode.Scalar(value) ?? "\u{FFFD}"
                return Array(String(Character(scalar)).utf8)
            }
            guard index < bytes.count else { return [] }
            // A multi-byte character escaped: all of its bytes.
            var end = index + 1
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
            defer { index = end }
            return Array(bytes[index..<end])
        }

        private func startsEscape(at at: Int) -> Bool {
            at + 1 < bytes.count && bytes[at] == UInt8(ascii: "\\") && bytes[at + 1] != 0x0A
        }

        private func startsIdentifier(at at: Int) -> Bool {
            guard at < bytes.count else { return false }
            let byte = bytes[at]
            if byte == UInt8(ascii: "-") {
                guard at + 1 < bytes.count else { return false }
                return bytes[at + 1] == UInt8(ascii: "-") || isNameStart(bytes[at + 1]) || startsEscape(at: at + 1)
            }
            return isNameStart(byte) || startsEscape(at: at)
        }

        private func startsNumber(at at: Int) -> Bool {
            guard at < bytes.count else { return false }
            var i = at
            if bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count else { return false }
            if bytes[i].isASCIIDigit { return true }
            return bytes[i] == UInt8(ascii: ".") && i + 1 < bytes.count && bytes[i + 1].isASCIIDigit
        }

        private func isNameStart(_ byte: UInt8) -> Bool {
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte == UInt8(ascii: "_") || byte >= 0x80
        }

        private func isNameByte(_ byte: UInt8) -> Bool {
            isNameStart(byte) || byte == UInt8(ascii: "-") || byte.isASCIIDigit
        }
    }
}
