/// A TOML value with the line it was written on, so configuration errors can name the line.
indirect enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case float(Double)
    case bool(Bool)
    case array([TOMLNode])
    case table([String: TOMLNode])

    var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a number"
        case .bool: "true or false"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

struct TOMLNode: Sendable, Equatable {
    var value: TOMLValue
    var line: Int
}

struct TOMLError: Error, Equatable {
    var line: Int
    var message: String
}

/// A parser for the TOML that configuration files use: tables (`[a."b.c"]`), dotted and quoted keys,
/// basic and literal strings (also multi-line), integers, floats, booleans, arrays (also multi-line)
/// and inline tables. Dates and arrays of tables are reported as unsupported.
struct TOMLParser {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1

    init(_ text: String) { bytes = Array(text.utf8) }

    static func parse(_ text: String) throws(TOMLError) -> [String: TOMLNode] {
        var parser = TOMLParser(text)
        return try parser.document()
    }

    private mutating func document() throws(TOMLError) -> [String: TOMLNode] {
        var root: [String: TOMLNode] = [:]
        var current: [String] = []
        var definedTables: Set<[String]> = []
        while true {
            skipWhitespaceCommentsAndNewlines()
            guard let c = peek() else { return root }
            if c == UInt8(ascii: "[") {
                let headerLine = line
                advance()
                if peek() == UInt8(ascii: "[") { throw error("arrays of tables ([[...]]) are not supported") }
                skipSpaces()
                let path = try key()
                skipSpaces()
                try expect("]")
                try endOfLine()
                guard definedTables.insert(path).inserted else { throw TOMLError(line: headerLine, message: "table [\(path.joined(separator: "."))] is defined twice") }
                try Self.ensureTable(&root, path: path, line: headerLine)
                current = path
            } else {
                let keyLine = line
                let path = try key()
                skipSpaces()
                try expect("=")
                skipSpaces()
                let value = try value()
                try endOfLine()
                try Self.insert(&root, path: current + path, node: TOMLNode(value: value, line: keyLine))
            }
        }
    }

    // MARK: Tables

    private static func ensureTable(_ table: inout [String: TOMLNode], path: [String], line: Int) throws(TOMLError) {
        guard let first = path.first else { return }
        var child = table[first] ?? TOMLNode(value: .table([:]), line: line)
        guard case .table(var inner) = child.value else {
            throw TOMLError(line: line, message: "\(first) is already a value, not a table")
        }
        try ensureTable(&inner, path: Array(path.dropFirst()), line: line)
        child.value = .table(inner)
        table[first] = child
    }

    private static func insert(_ table: inout [String: TOMLNode], path: [String], node: TOMLNode) throws(TOMLError) {
        let first = path[0]
        if path.count == 1 {
            guard table[first] == nil else { throw TOMLError(line: node.line, message: "\(first) is set twice") }
            table[first] = node
            return
        }
        var child = table[first] ?? TOMLNode(value: .table([:]), line: node.line)
        guard case .table(var inner) = child.value else {
            throw TOMLError(line: node.line, message: "\(first) is already a value, not a table")
        }
        try insert(&inner, path: Array(path.dropFirst()), node: node)
        child.value = .table(inner)
        table[first] = child
    }

    // MARK: Keys

    private mutating func key() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            guard let c = peek() else { throw error("expected a key") }
            if c == UInt8(ascii: "\"") {
                parts.append(try basicString())
            } else if c == UInt8(ascii: "'") {
                parts.append(try literalString())
            } else {
                let start = position
                while let b = peek(), b.isBareKeyByte { advance() }
                guard position > start else { throw error("expected a key, found \(describe(peek()))") }
                parts.append(String(decoding: bytes[start..<position], as: UTF8.self))
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return parts }
            advance()
        }
    }

    // MARK: Values

    private mutating func value() throws(TOMLError) -> TOMLValue {
        guard let c = peek() else { throw error("expected a value") }
        switch c {
        case UInt8(ascii: "\""):
            return .string(starts(with: "\"\"\"") ? try multilineString(quote: UInt8(ascii: "\"")) : try basicString())
        case UInt8(ascii: "'"):
            return .string(starts(with: "'''") ? try multilineString(quote: UInt8(ascii: "'")) : try literalString())
        case UInt8(ascii: "["):
            return try array()
        case UInt8(ascii: "{"):
            return try inlineTable()
        case UInt8(ascii: "t") where starts(with: "true"):
            position += 4
            return .bool(true)
        case UInt8(ascii: "f") where starts(with: "false"):
            position += 5
            return .bool(false)
        default:
            return try number()
        }
    }

    private mutating func number() throws(TOMLError) -> TOMLValue {
        let start = position
        while let b = peek(), b.isNumberByte { advance() }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard !text.isEmpty else { throw error("expected a value, found \(describe(peek()))") }
        if text.firstMatch(of: /^\d{4}-\d{2}-\d{2}/) != nil || text.contains(":") {
            throw TOMLError(line: line, message: "dates and times are not supported here: \(text)")
        }
        let clean = text.replacingAll("_", with: "")
        if clean.hasPrefix("0x"), let value = Int(clean.dropFirst(2), radix: 16) { return .integer(value) }
        if let value = Int(clean) { return .integer(value) }
        if clean.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let value = Double(clean) { return .float(value) }
        throw TOMLError(line: line, message: "not a valid value: \(text) (strings need quotes)")
    }

    private mutating func array() throws(TOMLError) -> TOMLValue {
        advance() // [
        var items: [TOMLNode] = []
        while true {
            skipWhitespaceCommentsAndNewlines()
            if peek() == UInt8(ascii: "]") {
                advance()
                return .array(items)
            }
            let itemLine = line
            items.append(TOMLNode(value: try value(), line: itemLine))
            skipWhitespaceCommentsAndNewlines()
            if peek() == UInt8(ascii: ",") {
                advance()
            } else if peek() != UInt8(ascii: "]") {
                throw error("expected , or ] in an array, found \(describe(peek()))")
            }
        }
    }

    private mutating func inlineTable() throws(TOMLError) -> TOMLValue {
        advance() // {
        var table: [String: TOMLNode] = [:]
        skipSpaces()
        if peek() == UInt8(ascii: "}") {
            advance()
            return .table(table)
        }
        while true {
            skipSpaces()
            let keyLine = line
            let path = try key()
            skipSpaces()
            try expect("=")
            skipSpaces()
            try Self.insert(&table, path: path, node: TOMLNode(value: try value(), line: keyLine))
            skipSpaces()
            if peek() == UInt8(ascii: ",") {
                advance()
                continue
            }
            try expect("}")
            return .table(table)
        }
    }

    // MARK: Strings

    private mutating func basicString() throws(TOMLError) -> String {
        advance() // "
        var out: [UInt8] = []
        while true {
            guard let c = peek(), c != 0x0A else { throw error("unterminated string") }
            advance()
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if c == UInt8(ascii: "\\") { try escape(into: &out) } else { out.append(c) }
        }
    }

    private mutating func literalString() throws(TOMLError) -> String {
        advance() // '
        let start = position
        while let c = peek(), c != UInt8(ascii: "'") {
            if c == 0x0A { throw error("unterminated string") }
            advance()
        }
        guard peek() != nil else { throw error("unterminated string") }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        advance()
        return text
    }

    private mutating func multilineString(quote: UInt8) throws(TOMLError) -> String {
        position += 3
        if peek() == 0x0D { advance() }
        if peek() == 0x0A { advance(); line += 1 } // a newline right after the opening quotes is dropped
        var out: [UInt8] = []
        while true {
            guard let c = peek() else { throw error("unterminated multi-line string") }
            if c == quote, position + 2 < bytes.count, bytes[position + 1] == quote, bytes[position + 2] == quote {
                position += 3
                return String(decoding: out, as: UTF8.self)
            }
            advance()
            if c == 0x0A { line += 1 }
            if c == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") { try escape(into: &out) } else { out.append(c) }
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(TOMLError) {
        guard let e = peek() else { throw error("unterminated string") }
        advance()
        switch e {
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(e)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = e == UInt8(ascii: "u") ? 4 : 8
            guard position + count <= bytes.count,
                  let code = UInt32(String(decoding: bytes[position..<position + count], as: UTF8.self), radix: 16),
                  let scalar = Unicode.Scalar(code) else { throw error("bad \\u escape") }
            position += count
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            throw error("unknown escape \\\(String(UnicodeScalar(e)))")
        }
    }

    // MARK: Lexing

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }
    private mutating func advance() { position += 1 }

    private func starts(with text: String) -> Bool {
        let needle = Array(text.utf8)
        return position + needle.count <= bytes.count && Array(bytes[position..<position + needle.count]) == needle
    }

    private mutating func skipSpaces() {
        while let c = peek(), c == 0x20 || c == 0x09 { advance() }
    }

    private mutating func skipComment() {
        if peek() == UInt8(ascii: "#") { while let c = peek(), c != 0x0A { advance() } }
    }

    private mutating func skipWhitespaceCommentsAndNewlines() {
        while true {
            skipSpaces()
            skipComment()
            if peek() == 0x0D { advance() }
            guard peek() == 0x0A else { return }
            advance()
            line += 1
        }
    }

    /// After a key/value pair or a table header: only a comment may follow on the line.
    private mutating func endOfLine() throws(TOMLError) {
        skipSpaces()
        skipComment()
        if peek() == 0x0D { advance() }
        guard let c = peek() else { return }
        guard c == 0x0A else { throw error("expected the end of the line, found \(describe(c))") }
    }

    private mutating func expect(_ text: String) throws(TOMLError) {
        guard starts(with: text) else { throw error("expected \(text), found \(describe(peek()))") }
        position += text.utf8.count
    }

    private func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "the end of the file" }
        if byte == 0x0A { return "the end of the line" }
        return "'\(String(decoding: [byte], as: UTF8.self))'"
    }

    private func error(_ message: String) -> TOMLError { TOMLError(line: line, message: message) }
}

extension UInt8 {
    fileprivate var isBareKeyByte: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || (0x30...0x39).contains(self)
            || self == UInt8(ascii: "_") || self == UInt8(ascii: "-")
    }

    fileprivate var isNumberByte: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
            || self == UInt8(ascii: "_") || self == UInt8(ascii: "-") || self == UInt8(ascii: "+")
            || self == UInt8(ascii: ".") || self == UInt8(ascii: ":")
    }
}
