/// One key of `imgbake.toml`: its name, what it takes, its default, what it does, and how it is read.
///
/// `ConfigurationKey.all` is the one list of keys. The reader looks every key up in it (a key missing
/// from it is unknown to the reader), `imgbake config keys` prints it, and `make docs` writes the
/// configuration reference from `imgbake config keys --json`: the reference cannot name a key the reader
/// does not take, nor miss one it does. A new key is one entry here; a new value of a choice is a new
/// case of its enum (the allowed values are read from `allCases`).
public struct ConfigurationKey: Encodable {
    /// Dotted, from the file's top: `output.dir`, `images.quality.auto.ssim`.
    public let name: String
    /// What it takes, as it is written in the file: `"picture" | "img" | "localize"`, `integer, 0 to 1000`.
    public let type: String
    /// The default as TOML (`"_img"`, `8`, `"30s"`); empty when the key has no value of its own by default.
    public let defaultValue: String
    /// What holds without the key, in words, where `defaultValue` cannot say it (worked out, or nothing).
    public let defaultNote: String
    /// A value the reader takes, as TOML: the default, or an example where there is none.
    public let example: String
    /// One line: what the key does.
    public let summary: String
    /// Read before the table's other keys, wherever it is written (`cache.remote`: `remote_*` refine it).
    let first: Bool
    /// Reads the value into the configuration; nil for a key its parent reads (those of `images.quality`).
    let read: Read?

    typealias Read = (Reader, _ name: String, TOMLNode, inout Configuration) throws(ConfigurationError) -> Void

    private enum CodingKeys: String, CodingKey {
        case name, type, defaultValue = "default", defaultNote = "default_note", example, summary
    }

    init(_ name: String, _ type: String, default defaultValue: String = "", note: String = "", example: String? = nil,
         first: Bool = false, _ summary: String, read: Read?) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.defaultNote = note
        self.example = example ?? defaultValue
        self.first = first
        self.summary = summary
        self.read = read
    }

    /// The file's tables, in the order of the list: `output`, `images`, `fetch`, `cache`, `build`.
    public static var sections: [String] {
        var seen: [String] = []
        for key in all {
            let section = String(key.name.prefix { $0 != "." })
            if !seen.contains(section) { seen.append(section) }
        }
        return seen
    }

    /// The keys one level under `parent` (`images.quality` → `webp`, `avif`, `jpeg`, `auto`), in the list's order.
    static func children(of parent: String) -> [(short: String, key: ConfigurationKey)] {
        all.compactMap { key in
            guard key.name.hasPrefix(parent + ".") else { return nil }
            let rest = key.name.dropFirst(parent.count + 1)
            return rest.contains(".") ? nil : (String(rest), key)
        }
    }
}

// MARK: Entries whose type and default come from the code

extension ConfigurationKey {
    /// What `imgbake.toml` changes: the defaults documented here are read from this value, not written twice.
    static let defaults = Configuration(site: ".", cacheDirectory: "")

    static func integer(_ name: String, _ range: ClosedRange<Int>, _ path: WritableKeyPath<Configuration, Int>, _ summary: String) -> Self {
        let type = range.upperBound == Int.max ? "integer, at least \(range.lowerBound)"
            : "integer, \(TOMLText.integer(range.lowerBound)) to \(TOMLText.integer(range.upperBound))"
        return Self(name, type, default: TOMLText.integer(defaults[keyPath: path]), summary) { (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = try reader.integer(name, node, in: range)
        }
    }

    static func bool(_ name: String, _ path: WritableKeyPath<Configuration, Bool>, _ summary: String) -> Self {
        Self(name, "true | false", default: "\(defaults[keyPath: path])", summary) { (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = try reader.bool(name, node)
        }
    }

    static func string(_ name: String, _ path: WritableKeyPath<Configuration, String>, _ summary: String) -> Self {
        Self(name, "string", default: TOMLText.string(defaults[keyPath: path]), summary) { (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = try reader.string(name, node)
        }
    }

    static func strings(_ name: String, _ path: WritableKeyPath<Configuration, [String]>, _ summary: String) -> Self {
        Self(name, "array of strings", default: TOMLText.strings(defaults[keyPath: path]), summary) { (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = try reader.strings(name, node)
        }
    }

    static func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ path: WritableKeyPath<Configuration, T>, _ summary: String) -> Self
        where T.RawValue == String {
        Self(name, TOMLText.choices(T.self), default: TOMLText.string(defaults[keyPath: path].rawValue), summary) {
            (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = try reader.choice(name, node)
        }
    }

    static func duration(_ name: String, _ path: WritableKeyPath<Configuration, Duration>, _ summary: String) -> Self {
        Self(name, "duration", default: TOMLText.duration(defaults[keyPath: path]), summary) { (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = try reader.duration(name, node)
        }
    }

    static func size(_ name: String, _ path: WritableKeyPath<Configuration, Int>, _ summary: String) -> Self {
        Self(name, "size", default: TOMLText.size(defaults[keyPath: path]), summary) { (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = try reader.size(name, node)
        }
    }

    /// A path: `~/` is the home folder, a relative one is relative to the configuration file.
    static func path(_ name: String, _ path: WritableKeyPath<Configuration, String?>, note: String, example: String, _ summary: String) -> Self {
        Self(name, "path", note: note, example: example, summary) { (reader, name, node, config) throws(ConfigurationError) in
            config[keyPath: path] = reader.path(try reader.string(name, node))
        }
    }

    /// The default of one remote-cache setting, from a remote cache with nothing else said.
    static var remoteDefaults: RemoteSettings { RemoteSettings(location: .http(base: "")) }

    /// The default of `images.quality.<format>` and `images.quality.auto.<format>`.
    static func quality(_ format: ImageFormat) -> (choice: String, bounds: String) {
        let choice = switch defaults.images.quality.choice(for: format) {
        case .fixed(let quality): "\(quality)"
        default: TOMLText.string("auto")
        }
        let auto = AutoQuality.defaults(for: format)
        return (choice, "[\(auto.floor), \(auto.ceiling)]")
    }
}

extension ImageFormat {
    /// As the reference names it: WebP, AVIF, JPEG.
    var displayName: String { self == .webp ? "WebP" : self == .jxl ? "JPEG XL" : rawValue.uppercased() }
}

/// Values written as TOML, for defaults shown in the reference (and read back by `ConfigurationKeyTests`).
enum TOMLText {
    static func string(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func strings(_ items: [String]) -> String { "[" + items.map(string).joined(separator: ", ") + "]" }

    static func integers(_ items: [Int]) -> String { "[" + items.map { "\($0)" }.joined(separator: ", ") + "]" }

    /// `100_000_000`: large numbers in groups of three, as TOML allows.
    static func integer(_ value: Int) -> String {
        guard value >= 100_000 else { return "\(value)" }
        var digits = String(value), groups: [Substring] = []
        while digits.count > 3 { groups.insert(Substring(digits.suffix(3)), at: 0); digits.removeLast(3) }
        return ([Substring(digits)] + groups).joined(separator: "_")
    }

    static func choices<T: RawRepresentable & CaseIterable>(_: T.Type) -> String where T.RawValue == String {
        T.allCases.map { string($0.rawValue) }.joined(separator: " | ")
    }

    /// The largest unit that divides it: `"7d"`, `"24h"`, `"30s"`, `"500ms"`.
    static func duration(_ value: Duration) -> String {
        let milliseconds = value.components.seconds * 1000 + value.components.attoseconds / 1_000_000_000_000_000
        for (unit, size) in [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)] as [(String, Int64)]
        where milliseconds > 0 && milliseconds % size == 0 {
            return string("\(milliseconds / size)\(unit)")
        }
        return string("\(milliseconds)ms")
    }

    /// `"50MB"`, `"16MiB"`, or a number of bytes.
    static func size(_ bytes: Int) -> String {
        for (unit, size) in [("GB", 1_000_000_000), ("GiB", 1 << 30), ("MB", 1_000_000), ("MiB", 1 << 20), ("KB", 1000), ("KiB", 1024)]
        where bytes > 0 && bytes % size == 0 {
            return string("\(bytes / size)\(unit)")
        }
        return "\(bytes)"
    }
}
