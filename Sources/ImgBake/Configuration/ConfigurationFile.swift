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

/// Reads `imgbake.toml` (the contract in ARCHITECTURE.md) into a `Configuration`. Every key is
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

/// Decodes the parsed tables key by key, with the file and line for every error.
struct Reader {
    let file: String
    let folder: String

    func fail(_ key: String, _ node: TOMLNode, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: node.line, key: key, message: message)
    }

    mutating func apply(_ root: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        for (name, node) in root.sorted(by: { $0.value.line < $1.value.line }) {
            let table = try self.table(name, node)
            switch name {
            case "output": try applyOutput(table, to: &config)
            case "images": try applyImages(table, to: &config)
            case "fetch": try applyFetch(table, to: &config)
            case "cache": try applyCache(table, to: &config)
            case "build": try applyBuild(table, to: &config)
            default: throw unknown(name, node, known: ["output", "images", "fetch", "cache", "build"])
            }
        }
    }

    private func applyOutput(_ table: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        for (key, node) in Self.ordered(table) {
            let name = "output." + key
            switch key {
            case "dir": config.outputDirectory = path(try string(name, node))
            case "images_dir":
                let value = try string(name, node)
                guard !value.isEmpty, !value.hasPrefix("/"), !value.split(separator: "/").contains("..") else {
                    throw fail(name, node, "must be a folder inside the output, such as \"_img\"")
                }
                config.output.imagesDirectory = value
            case "public_path":
                config.output.publicPath = try string(name, node)
                guard config.output.publicPath.hasPrefix("/") || config.output.publicPathIsAbsolute else {
                    throw fail(name, node, "must be a path starting with / or an http(s) URL, not \"\(config.output.publicPath)\"")
                }
            case "markup": config.output.markup = try choice(name, node)
            case "markdown": config.output.markdown = try choice(name, node)
            case "sizes": config.output.sizes = try string(name, node)
            case "templates_dir": config.output.templatesDirectory = path(try string(name, node))
            case "eager": config.output.eager = try integer(name, node, in: 0...1000)
            case "image_links": config.output.imageLinks = try choice(name, node)
            case "originals": config.output.originals = try choice(name, node)
            case "fold": config.output.foldBytes = try integer(name, node, in: 0...10_000_000)
            case "lcp": config.output.lcp = try choice(name, node)
            case "relative_urls":
                switch node.value {
                case .bool(let value): config.output.relativeURLs = value ? .always : .never
                case .string("auto"): config.output.relativeURLs = .auto
                case .string(let text): throw fail(name, node, "\"\(text)\" is not true, false or \"auto\"")
                default: throw fail(name, node, "expected true, false or \"auto\", found \(node.value.typeName)")
                }
            case "inline_images": config.output.inlineBytes = try integer(name, node, in: 0...65_536)
            case "base_url":
                let text = try string(name, node)
                guard let url = RemoteURL.resolve(text.hasSuffix("/") ? text : text + "/"), text.contains("://") else {
                    throw fail(name, node, "must be the absolute http(s) URL the site is served at, such as \"https://example.com/\"")
                }
                config.output.baseURL = url
            case "site_root":
                let text = try string(name, node)
                guard text.hasPrefix("/") else { throw fail(name, node, "must be a URL path starting with /, such as \"/blog/\"") }
                config.output.siteRoot = text.hasSuffix("/") ? text : text + "/"
            default: throw unknown(name, node, known: ["dir", "images_dir", "public_path", "markup", "markdown", "sizes", "templates_dir",
                                                       "eager", "base_url", "site_root", "image_links", "originals", "fold", "lcp", "inline_images", "relative_urls"])
            }
        }
        // What was not given follows from what was: the site root from base_url, the public path
        // from the site root and the images folder.
        if table["site_root"] == nil, let base = config.output.baseURL { config.output.siteRoot = base.path }
        if table["public_path"] == nil { config.output.publicPath = config.output.siteRoot + config.output.imagesDirectory + "/" }
    }

    private func applyImages(_ table: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        for (key, node) in Self.ordered(table) {
            let name = "images." + key
            switch key {
            case "widths":
                let widths = try integers(name, node, in: 1...16384)
                guard !widths.isEmpty else { throw fail(name, node, "needs at least one width") }
                config.images.widths = widths
            case "formats":
                let formats: [OutputFormat] = try choices(name, node)
                guard !formats.isEmpty else { throw fail(name, node, "needs at least one format") }
                config.images.formats = formats
            case "quality": try applyQuality(name, node, to: &config.images.quality)
            case "keep_metadata":
                let fields = try strings(name, node).map { $0.lowercased() }
                let allowed: Set<String> = ["copyright", "artist"]
                if let bad = fields.first(where: { !allowed.contains($0) }) {
                    throw fail(name, node, "\"\(bad)\" cannot be kept; allowed: copyright, artist (GPS, serial numbers and MakerNotes never are)")
                }
                config.images.keepMetadata = fields
            case "max_pixels": config.images.maxPixels = try integer(name, node, in: 1...Int.max)
            case "max_frames": config.images.maxFrames = try integer(name, node, in: 1...100_000)
            case "placeholder": config.images.placeholder = try choice(name, node)
            case "svg": config.images.svg = try choice(name, node)
            case "local": config.images.local = try bool(name, node)
            case "front_matter_keys": config.images.frontMatterKeys = try strings(name, node)
            default: throw unknown(name, node, known: ["widths", "formats", "quality", "keep_metadata", "max_pixels", "max_frames",
                                                       "placeholder", "svg", "local", "front_matter_keys"])
            }
        }
    }

    private func applyFetch(_ table: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        for (key, node) in Self.ordered(table) {
            let name = "fetch." + key
            switch key {
            case "concurrency": config.fetch.concurrency = try integer(name, node, in: 1...256)
            case "per_host": config.fetch.perHost = try integer(name, node, in: 1...64)
            case "timeout": config.fetch.timeout = try duration(name, node)
            case "connect_timeout": config.fetch.connectTimeout = try duration(name, node)
            case "max_bytes": config.fetch.maxBytes = try size(name, node)
            case "retries": config.fetch.retries = try integer(name, node, in: 0...20)
            case "ttl": config.fetch.ttl = try duration(name, node)
            case "failure_ttl": config.fetch.failureTTL = try duration(name, node)
            case "allow_private_networks": config.fetch.allowPrivateNetworks = try bool(name, node)
            case "strip_query": config.fetch.stripQuery = try strings(name, node)
            case "policy": config.fetch.policy = try choice(name, node)
            case "retry_failed": config.fetch.retryFailed = try bool(name, node)
            case "connect_to":
                let entries = try strings(name, node)
                if let bad = entries.first(where: { ConnectTo.split($0).count != 4 }) {
                    throw fail(name, node, "\"\(bad)\": expected HOST:PORT:CONNECT_HOST:CONNECT_PORT")
                }
                config.fetch.connectTo = entries
            case "cacert": config.fetch.caFile = path(try string(name, node))
            case "headers":
                for (host, headers) in Self.ordered(try self.table(name, node)) {
                    var values: [String: String] = [:]
                    for (header, value) in Self.ordered(try self.table("\(name).\(host)", headers)) {
                        guard header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                            throw fail("\(name).\(host).\(header)", value, "not a valid header name")
                        }
                        values[header] = try string("\(name).\(host).\(header)", value)
                    }
                    config.fetch.headers[host.lowercased()] = values
                }
            case "key_rules":
                for (host, ruleNode) in Self.ordered(try self.table(name, node)) {
                    let rule = try self.table("\(name).\(host)", ruleNode)
                    let ruleName = "\(name).\(host)"
                    if let keep = rule["keep_query"], rule.count == 1 {
                        config.fetch.hostRules[host.lowercased()] = .keepOnly(try strings(ruleName + ".keep_query", keep))
                    } else if let ignore = rule["ignore_query"], rule.count == 1 {
                        if try bool(ruleName + ".ignore_query", ignore) { config.fetch.hostRules[host.lowercased()] = .ignoreQuery }
                    } else {
                        throw fail(ruleName, ruleNode, "expected exactly one of keep_query = [...] or ignore_query = true")
                    }
                }
            default:
                throw unknown(name, node, known: ["concurrency", "per_host", "timeout", "connect_timeout", "max_bytes", "retries", "ttl",
                                                  "failure_ttl", "allow_private_networks", "strip_query", "policy", "retry_failed",
                                                  "connect_to", "cacert", "headers", "key_rules"])
            }
        }
    }

    private func applyCache(_ table: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        // `remote` first: the other remote keys refine it, wherever they are written.
        if let node = table["remote"] { config.cache.remote = try remoteSettings("cache.remote", node) }
        for (key, node) in Self.ordered(table) {
            let name = "cache." + key
            switch key {
            case "dir": config.cache.directory = path(try string(name, node))
            case "max_size": config.cache.maxSize = try size(name, node)
            case "remote": continue
            case _ where RemoteKeys.all.contains(key): try applyRemote(key, node, to: &config.cache)
            default: throw unknown(name, node, known: ["dir", "max_size", "remote"] + RemoteKeys.all)
            }
        }
    }

    private func applyBuild(_ table: [String: TOMLNode], to config: inout Configuration) throws(ConfigurationError) {
        for (key, node) in Self.ordered(table) {
            let name = "build." + key
            switch key {
            case "jobs": config.jobs = try integer(name, node, in: 1...256)
            case "strict": config.strict = try bool(name, node)
            case "report": config.reportPath = path(try string(name, node))
            case "depfile": config.depfilePath = path(try string(name, node))
            case "max_page_size": config.maxPageBytes = try size(name, node)
            case "require_alt": config.requireAlt = try choice(name, node)
            case "exclude":
                config.exclude = []
                for item in try array(name, node) {
                    guard let glob = Glob(try string(name, item)) else { throw fail(name, item, "an empty pattern matches nothing") }
                    config.exclude.append(glob)
                }
            default: throw unknown(name, node, known: ["jobs", "strict", "report", "depfile", "max_page_size", "require_alt", "exclude"])
            }
        }
    }
}
