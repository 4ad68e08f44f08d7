import Foundation

/// A configuration problem, named by file, line and key: `imgbake.toml:12: error: fetch.timout: unknown key`.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var line: Int
    public var key: String
    public var message: String

    public var description: String {
        "\(file):\(line): error: " + (key.isEmpty ? message : "\(key): \(message)")
    }
}

/// Reads `imgbake.toml` into a `Configuration`: the keys are `ConfigurationKey.all`. Every key is
/// optional; unknown keys and bad values are errors. Relative paths are relative to the file's folder.
public enum ConfigurationFile {
    public static let defaultName = "imgbake.toml"

    public static func load(_ path: String, into config: inout Configuration) throws(ConfigurationError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(file: path, line: 0, key: "", message: "cannot read the configuration file")
        }
        let root: [String: TOMLNode]
        do { root = try TOMLParser.parse([UInt8](data)) } catch {
            throw ConfigurationError(file: path, line: error.line, key: "", message: error.message)
        }
        let folder = PathName.parent(path)
        var reader = Reader(file: path, folder: folder.isEmpty ? "." : folder)
        try reader.apply(root, to: &config)
        config.configurationFile = path
    }
}

/// Decodes the parsed tables key by key, with the file and line for every error. Which keys there are,
/// and how each is read, is `ConfigurationKey.all`.
struct Reader {
    let file: String
    let folder: String

    func fail(_ key: String, _ node: TOMLNode, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: node.line, key: key, message: message)
    }

    mutating func apply(_ root: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        let sections = ConfigurationKey.sections
        for (name, node) in root.sorted(by: { $0.value.line < $1.value.line }) {
            let table = try self.table(name, node)
            guard sections.contains(name) else { throw unknown(name, node, known: sections) }
            try applySection(name, table, to: &config)
        }
    }

    private func applySection(_ section: String, _ table: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        let keys = ConfigurationKey.children(of: section)
        let reads = Dictionary(keys.map { ($0.short, $0.key) }, uniquingKeysWith: { first, _ in first })
        // Keys read first (`cache.remote`) before the others, wherever they are written; then in file order.
        for early in [true, false] {
            for (key, node) in Self.ordered(table) where (reads[key]?.first ?? false) == early {
                guard let read = reads[key]?.read else { throw unknown(section + "." + key, node, known: keys.map(\.short)) }
                try read(self, section + "." + key, node, &config)
            }
        }
        guard section == "output" else { return }
        // What was not given follows from what was: the site root from base_url, the public path
        // from the site root and the images folder.
        if table["site_root"] == nil, let base = config.output.baseURL { config.output.siteRoot = base.path }
        if table["public_path"] == nil { config.output.publicPath = config.output.localPublicPath }
    }

    /// `[fetch.headers."images.example.com"] Authorization = "Bearer ${TOKEN}"`.
    func headers(_ name: String, _ node: TOMLNode) throws(ConfigurationError) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for (host, headers) in Self.ordered(try table(name, node)) {
            var values: [String: String] = [:]
            for (header, value) in Self.ordered(try table("\(name).\(host)", headers)) {
                guard header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                    throw fail("\(name).\(host).\(header)", value, "not a valid header name")
                }
                values[header] = try string("\(name).\(host).\(header)", value)
            }
            result[host.lowercased()] = values
        }
        return result
    }

    /// `[fetch.key_rules."cdn.example.com"] keep_query = ["w"]`, or `ignore_query = true`.
    func keyRules(_ name: String, _ node: TOMLNode) throws(ConfigurationError) -> [String: HostKeyRule] {
        var result: [String: HostKeyRule] = [:]
        for (host, ruleNode) in Self.ordered(try table(name, node)) {
            let rule = try table("\(name).\(host)", ruleNode)
            let ruleName = "\(name).\(host)"
            if let keep = rule["keep_query"], rule.count == 1 {
                result[host.lowercased()] = .keepOnly(try strings(ruleName + ".keep_query", keep))
            } else if let ignore = rule["ignore_query"], rule.count == 1 {
                if try bool(ruleName + ".ignore_query", ignore) { result[host.lowercased()] = .ignoreQuery }
            } else {
                throw fail(ruleName, ruleNode, "expected exactly one of keep_query = [...] or ignore_query = true")
            }
        }
        return result
    }
}
