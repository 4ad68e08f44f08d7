import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// `images.svg`: a remote SVG with a script is left remote by default (copied to the site's origin it
/// would run there); "copy" copies every SVG byte for byte; "refuse" never copies one.
@Suite struct SVGPolicyTests {
    static let safe = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"><rect width=\"40\" height=\"20\" fill=\"#3a6\"/></svg>"
    static let hostile = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\" onload=\"fetch('/steal?'+document.cookie)\"><rect width=\"40\" height=\"20\"/></svg>"

    func build(_ policy: SVGPolicy?) async throws -> (TestSite, BuildResult, Origin) {
        let served = TemporaryFolder()
        served.write("safe.svg", Self.safe)
        served.write("hostile.svg", Self.hostile)
        let origin = try Origin(root: served.path)
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/safe.svg"))\" alt=s>\n<img src=\"\(origin.url("img/hostile.svg"))\" alt=h>")
        var config = site.configuration(origin: origin)
        if let policy { config.images.svg = policy }
        let result = try await site.build(config)
        _ = served // kept until the build has fetched
        return (site, result, origin)
    }

    @Test func byDefaultOnlyAnSVGWithoutScriptIsCopied() async throws {
        let (site, result, origin) = try await build(nil)
        let page = try #require(site.output("a.html"))
        #expect(!page.contains(origin.url("img/safe.svg")) && page.contains(origin.url("img/hostile.svg")))
        #expect(result.diagnostics.map(\.description) == [
            "a.html:2:11: warning: \(origin.url("img/hostile.svg")): the SVG has an event handler (onload): not copied to the site, where it would run (images.svg = \"copy\" copies it anyway)",
        ])
        let copied = try #require(site.folder.files(under: "out/_img").first)
        #expect(site.folder.text("out/_img/" + copied) == Self.safe, "copied byte for byte")
        #expect(result.exitCode == 0)
    }

    @Test func copyCopiesEverySVGByteForByte() async throws {
        let (site, result, _) = try await build(.copy)
        #expect(result.diagnostics.isEmpty)
        let texts = Set(site.folder.files(under: "out/_img").map { site.folder.text("out/_img/" + $0) })
        #expect(texts == [Self.safe, Self.hostile])
    }

    @Test func refuseCopiesNone() async throws {
        let (site, result, origin) = try await build(.refuse)
        #expect(site.folder.files(under: "out/_img").isEmpty)
        #expect(site.output("a.html") == "<img src=\"\(origin.url("img/safe.svg"))\" alt=s>\n<img src=\"\(origin.url("img/hostile.svg"))\" alt=h>")
        #expect(result.diagnostics.count == 2 && result.diagnostics.allSatisfy { $0.message.contains("images.svg = \"refuse\"") })
    }

    /// The policy decides at resolution, not at download: changing it needs no request.
    @Test func changingThePolicyNeedsNoRequest() async throws {
        let served = TemporaryFolder()
        served.write("hostile.svg", Self.hostile)
        let origin = try Origin(root: served.path)
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/hostile.svg"))\" alt=h>")
        var config = site.configuration(origin: origin)
        _ = try await site.build(config)
        try await origin.reset()
        config.images.svg = .copy
        let result = try await site.build(config)
        #expect(result.diagnostics.isEmpty && result.summary.referencesLocalised == 1)
        #expect(try await origin.stats().requests_total == 0)
    }

    @Test func theConfigurationKeyIsChecked() throws {
        var config = Configuration(site: "/s", cacheDirectory: "/c")
        let folder = TemporaryFolder()
        folder.write("imgbake.toml", "[images]\nsvg = \"copy\"\n")
        try ConfigurationFile.load(folder.path + "/imgbake.toml", into: &config)
        #expect(config.images.svg == .copy)
        folder.write("bad.toml", "[images]\nsvg = \"sanitize\"\n")
        #expect(throws: ConfigurationError.self) { try ConfigurationFile.load(folder.path + "/bad.toml", into: &config) }
    }
}
