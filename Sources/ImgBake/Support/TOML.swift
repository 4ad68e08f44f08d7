/// A TOML value with the line it was written on, so configuration errors can name the line. (In
/// Support/: the configuration and Markdown front matter both read TOML.)
indirect enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case float(Double)
    case bool(Bool)
    case dateTime(TOMLDateTime)
    case array([TOMLNode])
    case table([String: TOMLNode])

    var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a number"
        case .bool: "true or false"
        case .dateTime: "a date or time"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

package struct TOMLNode: Sendable, Equatable {
    var value: TOMLValue
    var line: Int
    /// The bytes the value was written as (a string with its quotes), so that a value can be replaced
    /// in place (Markdown front matter) without writing the document again.
    var span: Range<Int>?

    init(value: TOMLValue, line: Int, span: Range<Int>? = nil) {
        self.value = value
        self.line = line
        self.span = span
    }

    /// Where a value was written is not part of what it is.
    package static func == (a: TOMLNode, b: TOMLNode) -> Bool { a.value == b.value && a.line == b.line }
}

/// An offset date-time (date, time and offset), a local date-time (no offset), a local date or a
/// local time, field by field as written; fractions of a second beyond nanoseconds are cut off.
struct TOMLDateTime: Sendable, Equatable {
    struct Date: Sendable, Equatable { var year, month, day: Int }
    struct Time: Sendable, Equatable { var hour, minute, second, nanosecond: Int }
    var date: Date?
    var time: Time?
    /// Minutes east of UTC (`Z` is 0); only an offset date-time has one.
    var offset: Int?
}

package struct TOMLError: Error, Equatable {
    package var line: Int
    package var message: String
}

/// A TOML 1.0 parser (https://toml.io/en/v1.0.0) that keeps the line of every key, checked against the
/// toml-test suite (Tests/Conformance). Documents are UTF-8; `\r\n` in multi-line strings reads as `\n`.
package struct TOMLParser {
    private let bytes: [UInt8]
    private var position = 0
    /// Where each line starts, to turn a position into a line number.
    private let lineStarts: [Int]
    /// Counts table headers: a table made by dotted keys may be extended by dotted keys under the same header only.
    private var section = 0
    /// Tables and arrays between the root and the value being read: headers, dotted keys, nesting.
    private var depth = 0
    /// How deep values may be. Reading, converting and freeing a value recurse once per level, so a
    /// document of 10,000 `[` overflowed the stack; configuration needs three levels.
    static let maximumDepth = 100

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
        lineStarts = [0] + bytes.indices.filter { bytes[$0] == 0x0A }.map { $0 + 1 }
        position = ByteOrderMark.length(bytes)
    }

    static func parse(_ text: String) throws(TOMLError) -> [String: TOMLNode] {
        try parse(Array(text.utf8))
    }

    package static func parse(_ bytes: [UInt8]) throws(TOMLError) -> [String: TOMLNode] {
        var parser = TOMLParser(bytes)
        try parser.checkEncoding()
        return try parser.document()
    }

    private func checkEncoding() throws(TOMLError) {
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch decoder.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return
            case .error: throw error("the file is not valid UTF-8 here", at: offset)
            }
        }
    }

    private mutating func document() throws(TOMLError) -> [String: TOMLNode] {
        let root = Table(line: 1)
        var current = root
        while true {
            try skipBlankLines()
            guard let c = peek() else { return root.entries.mapValues(\.node) }
            let start = position
            if c == UInt8(ascii: "[") {
                section += 1
                let isArray = starts(with: "[[")
                position += isArray ? 2 : 1
                skipSpaces()
                let path = try key()
                depth = 0
                try deepen(by: path.count + (isArray ? 1 : 0), at: start)
                skipSpaces()
                try expect(isArray ? "]]" : "]")
                current = isArray ? try appendTable(path, to: root, at: start) : try defineTable(path, in: root, at: start)
            } else {
                let (path, node) = try keyValue()
                try assign(node, to: path, in: current, at: start)
            }
            try endOfLine()
        }
    }

    // MARK: Tables

    /// A table while the document is read: shared, so headers and dotted keys can reach into it later.
    private final class Table {
        enum Entry {
            case value(TOMLNode) // inline tables and arrays are values too: nothing can be added to them
            case table(Table)
            case tables([Table], line: Int) // an array of tables ([[name]])

            var node: TOMLNode {
                switch self {
                case .value(let node): node
                case .table(let table): TOMLNode(value: .table(table.entries.mapValues(\.node)), line: table.line)
                case .tables(let tables, let line): TOMLNode(value: .array(tables.map { Entry.table($0).node }), line: line)
                }
            }
        }

        var entries: [String: Entry] = [:]
        let line: Int
        /// Defined by a [header] or as an element of an array of tables.
        var hasHeader = false
        /// Made or extended by dotted keys under header number `dottedIn`.
        var dottedIn: Int?

        init(line: Int, hasHeader: Bool = false) {
            self.line = line
            self.hasHeader = hasHeader
        }
    }

    /// The table that holds the last key of a header, made on the way where missing: `[a.b.c]` makes `a` and `a.b`.
    private func parent(of path: [String], in root: Table, at start: Int) throws(TOMLError) -> Table {
        var table = root
        for (index, key) in path.dropLast().enumerated() {
            switch table.entries[key] {
            case nil:
                let child = Table(line: line(at: start))
                table.entries[key] = .table(child)
                table = child
            case .table(let child): table = child
            case .tables(let tables, _): table = tables[tables.count - 1] // the latest [[element]]
            case .value: throw error("\(Self.name(path.prefix(index + 1))) is already a value, not a table", at: start)
            }
        }
        return table
    }

    private func defineTable(_ path: [String], in root: Table, at start: Int) throws(TOMLError) -> Table {
        let parent = try parent(of: path, in: root, at: start)
        let name = Self.name(path[...])
        switch parent.entries[path[path.count - 1]] {
        case nil:
            let table = Table(line: line(at: start), hasHeader: true)
            parent.entries[path[path.count - 1]] = .table(table)
            return table
        case .table(let table):
            if table.hasHeader { throw error("table [\(name)] is defined twice", at: start) }
            if table.dottedIn != nil { throw error("table [\(name)] is already defined by dotted keys (\(name).key = ...)", at: start) }
            table.hasHeader = true
            return table
        case .tables: throw error("[\(name)] is already an array of tables ([[\(name)]])", at: start)
        case .value: throw error("\(name) is already a value, not a table", at: start)
        }
    }

    private func appendTable(_ path: [String], to root: Table, at start: Int) throws(TOMLError) -> Table {
        let parent = try parent(of: path, in: root, at: start)
        let name = Self.name(path[...])
        let element = Table(line: line(at: start), hasHeader: true)
        switch parent.entries[path[path.count - 1]] {
        case nil: parent.entries[path[path.count - 1]] = .tables([element], line: element.line)
        case .tables(let tables, let line): parent.entries[path[path.count - 1]] = .tables(tables + [element], line: line)
        case .table: throw error("[[\(name)]] names a table, not an array of tables", at: start)
        case .value: throw error("\(name) is already a value, not an array of tables", at: start)
        }
        return element
    }

    /// `a.b.c = v` in `table`: makes `a` and `a.b` where missing; they must not have a header of their own.
    private func assign(_ node: TOMLNode, to path: [String], in table: Table, at start: Int) throws(TOMLError) {
        var table = table
        for (index, key) in path.dropLast().enumerated() {
            let name = Self.name(path.prefix(index + 1))
            switch table.entries[key] {
            case nil:
                let child = Table(line: node.line)
                table.entries[key] = .table(child)
                table = child
            case .table(let child):
                guard !child.hasHeader, child.dottedIn == nil || child.dottedIn == section else {
                    throw error("\(name) is a table defined elsewhere: add to it under its own [header]", at: start)
                }
                table = child
            case .tables: throw error("\(name) is an array of tables: add to it under its [[header]]", at: start)
            case .value: throw error("\(name) is already a value, not a table", at: start)
            }
            table.dottedIn = section
        }
        let name = Self.name(path[...])
        switch table.entries[path[path.count - 1]] {
        case nil: table.entries[path[path.count - 1]] = .value(node)
        case .value: throw error("\(name) is set twice", at: start)
        case .table: throw error("\(name) is already a table", at: start)
        case .tables: throw error("\(name) is already an array of tables", at: start)
        }
    }

    /// A key as written in a header or message: bare parts as they are, others quoted.
    private static func name(_ path: ArraySlice<String>) -> String {
        path.map { key in
            !key.isEmpty && key.utf8.allSatisfy(\.isBareKeyByte) ? key : "\"" + key.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
        }.joined(separator: ".")
    }

    // MARK: Keys

    private mutating func key() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            if starts(with: "\"\"\"") || starts(with: "'''") { throw error("a key cannot be a multi-line string") }
            switch peek() {
            case UInt8(ascii: "\""): parts.append(try basicString())
            case UInt8(ascii: "'"): parts.append(try literalString())
            default:
                let start = position
                while let b = peek(), b.isBareKeyByte { advance() }
                guard position > start else { throw error("expected a key, found \(describe())") }
                parts.append(String(decoding: bytes[start..<position], as: UTF8.self))
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return parts }
            advance()
        }
    }

    private mutating func keyValue() throws(TOMLError) -> ([String], TOMLNode) {
        let keyLine = line(at: position)
        let start = position
        let path = try key()
        skipSpaces()
        try expect("=")
        skipSpaces()
        let outer = depth
        defer { depth = outer }
        try deepen(by: path.count, at: start)
        let valueStart = position
        let value = try value()
        return (path, TOMLNode(value: value, line: keyLine, span: valueStart..<position))
    }

    private mutating func deepen(by levels: Int, at start: Int) throws(TOMLError) {
        depth += levels
        guard depth <= Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels deep", at: start) }
    }

    // MARK: Values

    private mutating func value() throws(TOMLError) -> TOMLValue {
        switch peek() {
        case UInt8(ascii: "\""):
            return .string(starts(with: "\"\"\"") ? try multilineString(quote: UInt8(ascii: "\"")) : try basicString())
        case UInt8(ascii: "'"):
            return .string(starts(with: "'''") ? try multilineString(quote: UInt8(ascii: "'")) : try literalString())
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "{"): return try inlineTable()
        default: return try scalar()
        }
    }

    /// A boolean, number, date or time: one word of letters, digits and `_+-.:` (a date and a time may be
    /// separated by a space).
    private mutating func scalar() throws(TOMLError) -> TOMLValue {
        let start = position
        while let b = peek(), b.isScalarByte { advance() }
        if position - start == 10, starts(with: " "), position + 3 < bytes.count,
           bytes[position + 1].isDigit, bytes[position + 2].isDigit, bytes[position + 3] == UInt8(ascii: ":") {
            advance() // `1979-05-27 07:32:00`
            while let b = peek(), b.isScalarByte { advance() }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard !text.isEmpty else { throw error("expected a value, found \(describe())") }
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        if text.contains(":") || text.wholeMatch(of: /[0-9]+-[0-9]+-.*/) != nil {
            guard let dateTime = TOMLDateTime(text) else { throw error("not a valid date or time: \(text)", at: start) }
            return .dateTime(dateTime)
        }
        if let number = try number(text, at: start) { return number }
        guard text.first!.isNumber || text.first == "+" || text.first == "-" || text.first == "." else {
            throw error("not a valid value: \(text) (strings need quotes)", at: start)
        }
        throw error("not a valid number: \(text)", at: start)
    }

    /// Integers (decimal without leading zeros, `0x`, `0o`, `0b`) and floats; `_` only between digits.
    private func number(_ text: String, at start: Int) throws(TOMLError) -> TOMLValue? {
        let digits = text.replacingAll("_", with: "")
        let integer: Int??
        if text.wholeMatch(of: /[+-]?(0|[1-9](_?[0-9])*)/) != nil {
            integer = Int(digits)
        } else if text.wholeMatch(of: /0x[0-9A-Fa-f](_?[0-9A-Fa-f])*/) != nil {
            integer = Int(digits.dropFirst(2), radix: 16)
        } else if text.wholeMatch(of: /0o[0-7](_?[0-7])*/) != nil {
            integer = Int(digits.dropFirst(2), radix: 8)
        } else if text.wholeMatch(of: /0b[01](_?[01])*/) != nil {
            integer = Int(digits.dropFirst(2), radix: 2)
        } else {
            integer = .none
        }
        switch integer {
        case .some(.some(let value)): return .integer(value)
        case .some(.none): throw error("integer out of range (64-bit): \(text)", at: start)
        case .none:
            guard text.wholeMatch(of: /[+-]?(0|[1-9](_?[0-9])*)(\.[0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?/) != nil,
                  let value = Double(digits) else { return nil }
            return .float(value)
        }
    }

    private mutating func array() throws(TOMLError) -> TOMLValue {
        let start = position
        advance() // [
        let outer = depth
        defer { depth = outer }
        try deepen(by: 1, at: start)
        var items: [TOMLNode] = []
        while true {
            try skipBlankLines()
            if peek() == nil { throw error("unterminated array: no ] before the end of the file", at: start) }
            if peek() == UInt8(ascii: "]") {
                advance()
                return .array(items)
            }
            let itemLine = line(at: position)
            let itemStart = position
            let item = try value()
            items.append(TOMLNode(value: item, line: itemLine, span: itemStart..<position))
            try skipBlankLines()
            if peek() == UInt8(ascii: ",") {
                advance()
            } else if peek() != UInt8(ascii: "]") {
                throw error("expected , or ] in an array, found \(describe())")
            }
        }
    }

    /// `{ a = 1, b.c = 2 }` on one line; its dotted keys follow the rules of a table of its own.
    private mutating func inlineTable() throws(TOMLError) -> TOMLValue {
        advance() // {
        let table = Table(line: line(at: position))
        skipSpaces()
        if peek() == UInt8(ascii: "}") {
            advance()
            return .table([:])
        }
        while true {
            skipSpaces()
            let start = position
            let (path, node) = try keyValue()
            try assign(node, to: path, in: table, at: start)
            skipSpaces()
            if peek() == UInt8(ascii: ",") {
                advance()
                continue
            }
            guard peek() == UInt8(ascii: "}") else { throw error("expected , or } in an inline table, found \(describe())") }
            advance()
            return .table(table.entries.mapValues(\.node))
        }
    }

    // MARK: Strings

    private mutating func basicString() throws(TOMLError) -> String {
        advance() // "
        var out: [UInt8] = []
        while true {
            guard let c = peek(), !isNewline() else { throw error("unterminated string") }
            advance()
            switch c {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"): try escape(into: &out)
            default:
                try checkNotControl(c, at: position - 1)
                out.append(c)
            }
        }
    }

    private mutating func literalString() throws(TOMLError) -> String {
        advance() // '
        let start = position
        while true {
            guard let c = peek(), !isNewline() else { throw error("unterminated string") }
            if c == UInt8(ascii: "'") { break }
            try checkNotControl(c, at: position)
            advance()
        }
        advance()
        return String(decoding: bytes[start..<position - 1], as: UTF8.self)
    }

    /// `"""…"""` (with escapes, and `\` at the end of a line joining it to the next non-blank text) or `'''…'''`.
    private mutating func multilineString(quote: UInt8) throws(TOMLError) -> String {
        let start = position
        position += 3
        if isNewline() { skipNewline() } // a newline right after the opening quotes is not part of the string
        var out: [UInt8] = []
        while true {
            guard let c = peek() else { throw error("unterminated multi-line string", at: start) }
            if c == quote {
                var run = 0
                while peek() == quote, run < 5 { advance(); run += 1 }
                // Up to two quotes may come right before the closing three.
                out.append(contentsOf: repeatElement(quote, count: run >= 3 ? run - 3 : run))
                if run >= 3 { return String(decoding: out, as: UTF8.self) }
            } else if isNewline() {
                skipNewline()
                out.append(0x0A)
            } else if c == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") {
                advance()
                if try !skipLineEndingBackslash() { try escape(into: &out) }
            } else {
                try checkNotControl(c, at: position)
                advance()
                out.append(c)
            }
        }
    }

    /// After a `\` in a multi-line basic string: if only spaces follow on the line, skips them, the newline
    /// and all blank space up to the next text.
    private mutating func skipLineEndingBackslash() throws(TOMLError) -> Bool {
        var end = position
        while end < bytes.count, bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
        let save = position
        position = end
        guard isNewline() else {
            position = save
            return false
        }
        while let c = peek(), c == 0x20 || c == 0x09 || isNewline() {
            if c == 0x0D { skipNewline() } else { advance() }
        }
        return true
    }

    private mutating func escape(into out: inout [UInt8]) throws(TOMLError) {
        guard let e = peek(), !isNewline() else { throw error("unterminated string") }
        advance()
        switch e {
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(e)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = e == UInt8(ascii: "u") ? 4 : 8
            let hex = bytes[position..<min(position + count, bytes.count)]
            guard hex.count == count, hex.allSatisfy(\.isHexDigit),
                  let scalar = Unicode.Scalar(UInt32(String(decoding: hex, as: UTF8.self), radix: 16)!) else {
                throw error("\\\(Character(Unicode.Scalar(e))) needs \(count) hex digits of a Unicode scalar value")
            }
            position += count
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        case 0x20, 0x09:
            throw error("\\ followed by a space is not an escape (only in a multi-line string may spaces follow a \\ that ends the line)")
        default:
            position -= 1
            throw error("unknown escape \\\(describe(quoted: false)); the escapes are \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX")
        }
    }

    /// Control characters other than tab must be escaped in strings and cannot appear in comments.
    private func checkNotControl(_ c: UInt8, at offset: Int, in place: String = "a string") throws(TOMLError) {
        guard c.isControl else { return }
        let escape = place == "a string" ? " (write it as an escape, such as \\u\(Self.hex(UInt32(c))))" : ""
        throw error("\(describe(at: offset)) is not allowed in \(place)\(escape)", at: offset)
    }

    // MARK: Lexing

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }
    private mutating func advance() { position += 1 }

    private func starts(with text: String) -> Bool {
        bytes[position...].starts(with: text.utf8)
    }

    /// `\n` or `\r\n`.
    private func isNewline() -> Bool { starts(with: "\n") || starts(with: "\r\n") }
    private mutating func skipNewline() { position += bytes[position] == 0x0D ? 2 : 1 }

    private mutating func skipSpaces() {
        while let c = peek(), c == 0x20 || c == 0x09 { advance() }
    }

    private mutating func skipComment() throws(TOMLError) {
        guard peek() == UInt8(ascii: "#") else { return }
        while let c = peek(), !isNewline() {
            try checkNotControl(c, at: position, in: "a comment")
            advance()
        }
    }

    /// Spaces, comments and newlines between key/value pairs, tables and array items.
    private mutating func skipBlankLines() throws(TOMLError) {
        while true {
            skipSpaces()
            try skipComment()
            guard position < bytes.count, isNewline() else { return }
            skipNewline()
        }
    }

    /// After a key/value pair or a table header: only a comment may follow on the line.
    private mutating func endOfLine() throws(TOMLError) {
        skipSpaces()
        try skipComment()
        guard position < bytes.count, !isNewline() else { return }
        throw error("expected the end of the line, found \(describe())")
    }

    private mutating func expect(_ text: String) throws(TOMLError) {
        guard starts(with: text) else { throw error("expected \(text), found \(describe())") }
        position += text.utf8.count
    }

    /// The character at `offset` for a message: `'x'`, `'é' (U+00E9)`, `control character U+000C`, or the end of the line or file.
    private func describe(at offset: Int? = nil, quoted: Bool = true) -> String {
        let offset = offset ?? position
        guard offset < bytes.count else { return "the end of the file" }
        if bytes[offset] == 0x0A || bytes[offset...].starts(with: [0x0D, 0x0A]) { return "the end of the line" }
        if bytes[offset] == 0x0D { return "a carriage return (U+000D) without a line feed" }
        var iterator = bytes[offset...].makeIterator()
        var decoder = Unicode.UTF8.ForwardParser()
        guard case .valid(let encoded) = decoder.parseScalar(from: &iterator) else { return "a byte that is not UTF-8" }
        let scalar = Unicode.UTF8.decode(encoded)
        let code = "U+" + Self.hex(scalar.value)
        if scalar.properties.generalCategory == .control { return "control character " + code }
        if scalar.properties.isWhitespace && scalar != " " { return code }
        let text = quoted ? "'\(scalar)'" : "\(scalar)"
        return scalar.isASCII ? text : "\(text) (\(code))"
    }

    /// At least four hex digits, as in U+000C.
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private func line(at offset: Int) -> Int {
        var low = 0, high = lineStarts.count // the line is the last start <= offset
        while high - low > 1 {
            let middle = (low + high) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle }
        }
        return low + 1
    }

    private func error(_ message: String, at offset: Int? = nil) -> TOMLError {
        TOMLError(line: line(at: offset ?? position), message: message)
    }
}

extension TOMLDateTime {
    /// `1979-05-27T07:32:00Z`, `1979-05-27 07:32:00.5-07:00`, `1979-05-27T07:32:00`, `1979-05-27`, `07:32:00`.
    init?(_ text: String) {
        let clock = /([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?/
        if let match = text.wholeMatch(of: clock) {
            self.init(time: Self.time(match.output))
        } else if let match = text.wholeMatch(of: /([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ](.+?)([Zz]|[+-][0-9]{2}:[0-9]{2})?)?/) {
            let (year, month, day) = (Int(match.1)!, Int(match.2)!, Int(match.3)!)
            let days = [31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            guard (1...12).contains(month), (1...days[month - 1]).contains(day) else { return nil }
            self.init(date: Date(year: year, month: month, day: day))
            if let written = match.4 {
                guard let timeMatch = written.wholeMatch(of: clock) else { return nil }
                self.time = Self.time(timeMatch.output)
            }
            if let offset = match.5 {
                let sign = offset.first == "-" ? -1 : 1
                let (hours, minutes) = offset.count == 1 ? (0, 0) : (Int(offset.dropFirst().prefix(2))!, Int(offset.suffix(2))!)
                guard hours < 24, minutes < 60 else { return nil }
                self.offset = sign * (hours * 60 + minutes)
            }
        } else {
            return nil
        }
        guard let time else { return }
        guard time.hour < 24, time.minute < 60, time.second <= 60 else { return nil } // 60: a leap second
    }

    private static func time(_ match: (Substring, Substring, Substring, Substring, Substring?)) -> Time {
        let nanosecond = match.4.map { Int(($0 + "00000000").prefix(9))! } ?? 0 // cut, not rounded
        return Time(hour: Int(match.1)!, minute: Int(match.2)!, second: Int(match.3)!, nanosecond: nanosecond)
    }
}

extension UInt8 {
    fileprivate var isBareKeyByte: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || isDigit
            || self == UInt8(ascii: "_") || self == UInt8(ascii: "-")
    }

    fileprivate var isScalarByte: Bool {
        isBareKeyByte || self == UInt8(ascii: "+") || self == UInt8(ascii: ".") || self == UInt8(ascii: ":")
    }

    fileprivate var isDigit: Bool { (0x30...0x39).contains(self) }
    /// C0 controls but tab, and DEL.
    fileprivate var isControl: Bool { (self < 0x20 && self != 0x09) || self == 0x7F }
}
