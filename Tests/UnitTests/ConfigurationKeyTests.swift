import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// `ConfigurationKey.all` is the one list of `imgbake.toml`'s keys: the reader takes exactly these, and
/// the configuration reference (`make docs`) is written from it. These tests hold the other side: every
/// key is described, its documented default is the code's, and the hand-written documentation names no
/// key that does not exist and shows no example the reader refuses.
@Suite struct ConfigurationKeyTests {
    /// `[section]` then the key's dotted rest: `[images]` / `quality.auto.ssim = 0.965`. A `cache.remote_*`
    /// key needs a remote to refine.
    func file(_ key: ConfigurationKey, _ value: String?) -> String {
        let section = String(key.name.prefix { $0 != "." })
        let rest = key.name.dropFirst(section.count + 1)
        let needs = key.name.hasPrefix("cache.remote_") ? "remote = \"s3://imgbake-cache\"\n" : ""
        return "[\(section)]\n" + needs + (value.map { "\(rest) = \($0)\n" } ?? "")
    }

    func load(_ text: String) throws(ConfigurationError) -> Configuration {
        let folder = TemporaryFolder()
        folder.write("imgbake.toml", text)
        var config = Configuration(site: folder.path, cacheDirectory: "/default-cache")
        try ConfigurationFile.load(folder.path + "/imgbake.toml", into: &config)
        config.configurationFile = nil
        config.site = ""
        return config
    }

    /// Every stored property, nested ones too: two configurations that print the same are the same.
    func dumped(_ config: Configuration) -> String {
        var text = ""
        dump(config, to: &text)
        return text
    }

    @Test func everyKeyIsDescribed() {
        let keys = ConfigurationKey.all
        #expect(Set(keys.map(\.name)).count == keys.count, "a key is listed twice")
        #expect(ConfigurationKey.sections == ["output", "images", "fetch", "cache", "build"])
        for key in keys {
            #expect(!key.type.isEmpty && !key.summary.isEmpty && !key.summary.contains("\n"), "\(key.name): type and one line of summary")
            #expect(!key.defaultValue.isEmpty || !key.defaultNote.isEmpty, "\(key.name): says nothing about its default")
            #expect(!key.example.isEmpty, "\(key.name): no example")
            let parent = String(key.name[..<(key.name.lastIndex(of: ".") ?? key.name.startIndex)])
            #expect(ConfigurationKey.sections.contains(parent) || keys.contains { $0.name == parent }, "\(key.name): no \(parent)")
            // A key below another is read by it (images.quality reads its own); any other has a reader.
            #expect((key.read == nil) == !ConfigurationKey.sections.contains(parent), "\(key.name)")
        }
    }

    /// The reader takes each key's example, and its documented default leaves the configuration as the
    /// code's default does: the reference shows the defaults the code has.
    @Test(arguments: ConfigurationKey.all.map(\.name))
    func theReaderTakesTheKeyAndItsDefaultIsTheCodes(name: String) throws {
        let key = try #require(ConfigurationKey.all.first { $0.name == name })
        _ = try load(file(key, key.example))
        guard !key.defaultValue.isEmpty else { return }
        #expect(dumped(try load(file(key, key.defaultValue))) == dumped(try load(file(key, nil))),
                "\(key.name) = \(key.defaultValue) is not the default")
    }

    @Test func aKeyNotListedIsUnknown() {
        // Under each table and under images.quality's: the reader knows no key the list does not have.
        for text in ["[output]\nsrcset = 1\n", "[images.quality]\npng = 80\n", "[images.quality.auto]\nbutteraugli = 1\n", "[cache]\nremote_bucket = \"x\"\n"] {
            #expect(throws: ConfigurationError.self, "\(text)") { try load(text) }
        }
    }

    /// The hand-written documentation names keys as `` `fetch.ttl` `` and shows `toml` blocks: each key
    /// named must exist, and each block must load.
    @Test func theDocumentationNamesOnlyKeysThatExist() throws {
        let names = Set(ConfigurationKey.all.map(\.name))
        // Keys whose value is a table of the user's own names (hosts): `fetch.headers."host".Authorization`.
        let open = ["fetch.headers.", "fetch.key_rules."]
        let sections = ConfigurationKey.sections.joined(separator: "|")
        let mention = try Regex("`((?:\(sections))\\.[a-z_][a-z0-9_]*(?:\\.[a-z_][a-z0-9_]*)*)")
        let block = /```toml\n((?:.|\n)*?)```/
        var files = ["README.md", "Benchmarks/README.md", "Templates/README.md"]
        let docs = Paths.root + "/docs"
        files += (FileManager.default.subpaths(atPath: docs) ?? []).filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        var checked = 0
        for file in files {
            let text = try String(contentsOfFile: Paths.root + "/" + file, encoding: .utf8)
            for match in text.matches(of: mention) {
                guard let name = match.output[1].substring.map(String.init) else { continue }
                checked += 1
                #expect(names.contains(name) || open.contains { name.hasPrefix($0) }, "\(file): `\(name)` is not a key of imgbake.toml")
            }
            for match in text.matches(of: block) {
                checked += 1
                #expect(throws: Never.self, "\(file): a toml block imgbake does not take") { _ = try load(String(match.output.1)) }
            }
        }
        // The scan found the README's mentions: an empty scan would pass whatever the files said.
        #expect(checked > 10)
    }
}
