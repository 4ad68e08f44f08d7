import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Byte-exact markup, compared with the files in Fixtures/golden (content hashes in file names are
/// written `HASH`). `IMGBAKE_UPDATE_GOLDEN=1 swift test --filter MarkupGoldenTests` rewrites them;
/// review the diff before committing.
@Suite struct MarkupGoldenTests {
    static let folder = Paths.fixtures + "/golden"

    func check(_ output: String?, against golden: String) throws {
        let actual = normalizingHashes(try #require(output))
        let path = Self.folder + "/" + golden
        if ProcessInfo.processInfo.environment["IMGBAKE_UPDATE_GOLDEN"] == "1" {
            FileManager.default.createFile(atPath: path, contents: Data(actual.utf8))
        }
        let expected = try #require(FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) })
        #expect(actual == expected, "differs from \(golden)")
    }

    func build(_ page: String, configure: (inout Configuration) -> Void) async throws -> (TestSite, BuildResult) {
        let origin = try Origin()
        let site = TestSite()
        site.page(page, String(decoding: Paths.fixture("golden/" + page), as: UTF8.self))
        var config = site.configuration(origin: origin)
        configure(&config)
        let result = try await site.build(config)
        return (site, result)
    }

    @Test func pictureMarkup() async throws {
        // The first screen ends after the first image (30 bytes into <body>, counted twice there): it is
        // the page's likely LCP image (fetchpriority="high"), the rest are lazy.
        let (site, result) = try await build("page.html") { $0.output.foldBytes = 30 }
        try check(site.output("page.html"), against: "page.picture.html")
        #expect(result.diagnostics.map(\.description) == [
            "page.html:8:11: warning: data-imgbake-widths=\"wide\": expected widths in pixels, such as \"400, 800\"; using the configured ones",
        ])
    }

    @Test func imgMarkupWithAColourPlaceholderAndNothingEager() async throws {
        let (site, _) = try await build("page.html") {
            $0.output.markup = .img
            $0.output.eager = 0
            $0.output.foldBytes = 0
            $0.output.lcp = .off
            $0.images.placeholder = .color
        }
        try check(site.output("page.html"), against: "page.img.html")
    }

    @Test func localizeMarkupReplacesURLsOnly() async throws {
        let (site, _) = try await build("page.html") { $0.output.markup = .localize }
        try check(site.output("page.html"), against: "page.localize.html")
    }

    @Test func markdownAsHTML() async throws {
        let (site, result) = try await build("post.md") { $0.output.markdown = .html }
        #expect(result.diagnostics.isEmpty)
        try check(site.output("post.md"), against: "post.html-mode.md")
    }

    @Test func templatesGetCreditsAndPlaceholders() async throws {
        let (site, _) = try await build("credits.html") {
            $0.output.templatesDirectory = Self.folder + "/templates"
            $0.images.placeholder = .blurhash
        }
        try check(site.output("credits.html"), against: "credits.out.html")
    }
}
