import Foundation
@testable import ImgBake
import ImgBakeTestSupport
import Testing

/// `output.relative_urls = "auto"` on a site with both kinds of pages (a relative one, as Sphinx and
/// MkDocs write, and a root-absolute one, as a 404 page or Hugo does) sharing one image: each page
/// gets its own kind of URL; `--check`, the seal and the clean-up read both; an in-place rebuild
/// changes nothing, and a warm build after edits gives the cold build's site.
@Suite struct RelativeURLAutoTests {
    static let relative = #"<link rel="stylesheet" href="../style.css"><a href="../index.html">Home</a><img src="http://images.test/img/coffee.png" alt="c">"#
    static let rootAbsolute = #"<link rel="stylesheet" href="/style.css"><a href="/">Home</a><img src="http://images.test/img/coffee.png" alt="c">"#

    @Test func eachPageFollowsItsOwnLinksAndEveryReaderSeesBoth() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("docs/a.html", Self.relative)
        site.page("404.html", Self.rootAbsolute)
        let config = site.configuration(origin: origin, out: false)
        #expect(config.output.relativeURLs == .auto)
        let first = try await site.build(config)
        #expect(first.exitCode == 0 && first.diagnostics.isEmpty, "\(first.diagnostics)")
        let a = try #require(site.folder.text("site/docs/a.html")), notFound = try #require(site.folder.text("site/404.html"))
        #expect(a.contains("src=\"../_img/coffee-") && !a.contains("\"/_img/"), "\(a)")
        #expect(notFound.contains("src=\"/_img/coffee-") && !notFound.contains("../_img/"), "\(notFound)")

        // --check reads both spellings as outputs that exist; the next build is let off by the seal.
        let check = try await runImgbake(["build", site.site, "--check", "--cache-dir", site.cache, "--quiet"])
        #expect(check.status == 0, "\(check.stderr)")
        let before = site.folder.digests(under: "site")
        let again = try await site.build(config)
        #expect(again.summary.lines[0].contains("nothing changed since the last build") && site.folder.digests(under: "site") == before,
                "\(again.summary.lines)")

        // The relative page alone keeps the image files; with neither, they go.
        site.page("404.html", #"<link rel="stylesheet" href="/style.css"><p>Not here</p>"#)
        _ = try await site.build(config)
        let kept = site.folder.files(under: "site/_img")
        #expect(!kept.isEmpty && kept.allSatisfy { a.contains($0) }, "\(kept)")
        site.page("docs/a.html", #"<link rel="stylesheet" href="../style.css"><p>No picture</p>"#)
        _ = try await site.build(config)
        #expect(site.folder.files(under: "site/_img").isEmpty)

        // Back to both pages: the warm, incremental build writes what a cold build of them writes.
        site.page("docs/a.html", Self.relative)
        site.page("404.html", Self.rootAbsolute)
        _ = try await site.build(config)
        let cold = TestSite()
        cold.page("docs/a.html", Self.relative)
        cold.page("404.html", Self.rootAbsolute)
        _ = try await cold.build(cold.configuration(origin: origin, out: false))
        #expect(site.folder.snapshot(under: "site") == cold.folder.snapshot(under: "site"))
    }
}
