import Foundation

/// Typed readers for configuration values; each error names the key and line.
extension Reader {
    static func ordered(_ table: [String: TOMLNode]) -> [(String, TOMLNode)] {
        table.sorted { ($0.value.line, $0.key) < ($1.value.line, $1.key) }
    }

    func unknown(_ key: String, _ node: TOMLNode, known: [String]) -> ConfigurationError {
        let last = key.split(separator: ".").last.map(String.init) ?? key
        let suggestion = known.min { EditDistance.between(last, $0) < EditDistance.between(last, $1) }
            .flatMap { EditDistance.between(last, $0) <= 2 ? " (did you mean \($0)?)" : nil } ?? ""
        return fail(key, node, "unknown key\(suggestion); known here: \(known.joined(separator: ", "))")
    }

    func table(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> [String: TOMLNode] {
        guard case .table(let table) = node.value else { throw fail(key, node, "expected a table, found \(node.value.typeName)") }
        return table
    }

    func string(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> String {
        guard case .string(let value) = node.value else { throw fail(key, node, "expected a string, found \(node.value.typeName)") }
        return value
    }

    func bool(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> Bool {
        guard case .bool(let value) = node.value else { throw fail(key, node, "expected true or false, found \(node.value.typeName)") }
        return value
    }

    func integer(_ key: String, _ node: TOMLNode, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard case .integer(let value) = node.value else { throw fail(key, node, "expected an integer, found \(node.value.typeName)") }
        guard range.contains(value) else {
            throw fail(key, node, range.upperBound == Int.max ? "must be at least \(range.lowerBound)" : "must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
        }
        return value
    }

    func array(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> [TOMLNode] {
        guard case .array(let items) = node.value else { throw fail(key, node, "expected an array, found \(node.value.typeName)") }
        return items
    }

    func strings(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> [String] {
        var values: [String] = []
        for item in try array(key, node) { values.append(try string(key, item)) }
        return values
    }

    func integers(_ key: String, _ node: TOMLNode, in range: ClosedRange<Int>) throws(ConfigurationError) -> [Int] {
        var values: [Int] = []
        for item in try array(key, node) { values.append(try integer(key, item, in: range)) }
        return values
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> T where T.RawValue == String {
        let text = try string(key, node)
        guard let value = T(rawValue: text) else {
            throw fail(key, node, "\"\(text)\" is not one of \(T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
        }
        return value
    }

    func choices<T: RawRepresentable & CaseIterable>(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> [T] where T.RawValue == String {
        var values: [T] = []
        for item in try array(key, node) { values.append(try choice(key, item)) }
        return values
    }

    /// `"30s"`, `"500ms"`, `"7d"`, `"1h30m"`, or a number of seconds.
    func duration(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> Duration {
        switch node.value {
        case .integer(let seconds) where seconds >= 0: return .seconds(seconds)
        case .string(let text):
            guard let value = DurationText.parse(text) else {
                throw fail(key, node, "\"\(text)\" is not a duration such as \"30s\", \"500ms\", \"24h\" or \"7d\"")
            }
            return value
        default: throw fail(key, node, "expected a duration such as \"30s\", found \(node.value.typeName)")
        }
    }

    /// `"50MB"`, `"5GB"`, or a number of bytes.
    func size(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> Int {
        switch node.value {
        case .integer(let bytes) where bytes > 0: return bytes
        case .string(let text):
            guard let value = ByteSize.parse(text), value > 0 else { throw fail(key, node, "\"\(text)\" is not a size such as \"50MB\" or \"5GB\"") }
            return value
        default: throw fail(key, node, "expected a size such as \"50MB\", found \(node.value.typeName)")
        }
    }

    /// `~/x` is under the home folder; a relative path is relative to the configuration file.
    func path(_ text: String) -> String {
        if text.hasPrefix("~/") { return (SystemInfo.environment("HOME") ?? NSHomeDirectory()) + text.dropFirst() }
        if text.hasPrefix("/") { return text }
        return folder + "/" + text
    }
}

/// Durations as configuration writes them: `500ms`, `30s`, `5m`, `24h`, `7d`, `2w`, `1h30m`, or seconds.
public enum DurationText {
    /// Longest first, so `ms` is not read as `m` then `s`.
    private static let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 604_800)]

    public static func parse(_ text: String) -> Duration? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { return nil }
        if let seconds = Double(rest) { return seconds >= 0 ? .milliseconds(Int(seconds * 1000)) : nil }
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            guard let (unit, scale) = units.first(where: { rest.hasPrefix($0.0) }) else { return nil }
            rest = rest.dropFirst(unit.count)
            total += value * scale
        }
        return .milliseconds(Int((total * 1000).rounded()))
    }
}

enum EditDistance {
    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
