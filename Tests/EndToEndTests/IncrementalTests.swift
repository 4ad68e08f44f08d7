import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

@Suite struct IncrementalTests {
    func pages(_ site: TestSite, _ origin: Origin, count: Int) {
        for n in 0..<count {
            site.page("p\(n).html", "<img src=\"\(origin.url("img/" + Paths.exampleImages[n % 6]))\">")
        }
    }

    @Test func unchangedPagesAreNeitherReadNorRewritten() async throws {
        let origin = try Origin()
        let site = TestSite()
        pages(site, origin, count: 8)
        site.page("plain.html", "<p>no images</p>")
        let first = try await site.build(origin: origin)
        #expect(first.summary.pagesScanned == 9)
        let outputs = site.folder.files(under: "out").reduce(into: [String: FileStamp?]()) { $0[$1] = FileStamp.of(site.out + "/" + $1) }
        try await origin.reset()

        let second = try await site.build(origin: origin)
        #expect(second.summary.pagesScanned == 0 && second.summary.pagesUnchanged == 9 && second.summary.pagesWritten == 0)
        #expect(second.summary.uniqueImages == 0 && second.diagnostics.isEmpty)
        #expect(try await origin.stats().requests_total == 0)
        for (file, stamp) in outputs { #expect(FileStamp.of(site.out + "/" + file) == stamp, "\(file) untouched") }
    }

    @Test func onlyWhatChangedIsReadAgain() async throws {
        let origin = try Origin()
        let site = TestSite()
        pages(site, origin, count: 6)
        _ = try await site.build(origin: origin)

        site.page("p1.html", "<img src=\"\(origin.url("img/hubble.jpg"))\" alt=\"edited\">")   // changed
        let touched = site.site + "/p2.html"                                                   // same bytes, new time
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, touched, &times, 0) == 0)
        try FileManager.default.removeItem(atPath: site.out + "/_img/" + (site.folder.files(under: "out/_img").first { $0.hasPrefix("coffee-") && $0.hasSuffix(".webp") })!)
        let result = try await site.build(origin: origin)
        // p1 changed; p3 (coffee.png) lost an image file; p2 was only touched.
        #expect(result.summary.pagesScanned == 2 && result.summary.pagesUnchanged == 4)
        #expect(site.output("p1.html")?.contains("alt=\"edited\"") == true)
        #expect(site.folder.files(under: "out/_img").contains { $0.hasPrefix("coffee-") && $0.hasSuffix(".webp") })
    }

    @Test func changedSettingsRebuildEveryPage() async throws {
        let origin = try Origin()
        let site = TestSite()
        pages(site, origin, count: 3)
        var config = site.configuration(origin: origin)
        _ = try await site.build(config)
        config.images.widths = [320, 640]
        let result = try await site.build(config)
        #expect(result.summary.pagesScanned == 3 && result.summary.pagesUnchanged == 0)
        #expect(site.output("p0.html")?.contains("-320.webp 320w") == true)
    }

    @Test func aPageWithAFailedImageIsReadAgainNextTime() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/503/x.png"))\">")
        var config = site.configuration(origin: origin)
        config.fetch.retries = 0
        _ = try await site.build(config)
        let again = try await site.build(config)
        #expect(again.summary.pagesScanned == 1 && again.summary.imagesFailed == 1)
    }

    @Test func inPlaceASecondRunChangesNothingAndFetchesNothing() async throws {
        let origin = try Origin()
        let site = TestSite()
        pages(site, origin, count: 6)
        site.page("post.md", "![h](\(origin.url("img/hubble.jpg")))\n")
        _ = try await site.build(origin: origin, out: false)
        let rewritten = site.folder.digests(under: "site")
        try await origin.reset()
        let second = try await site.build(origin: origin, out: false)
        #expect(second.summary.pagesWritten == 0 && second.summary.filesWritten == 0 && second.summary.pagesUnchanged == 7)
        #expect(site.folder.digests(under: "site") == rewritten)
        #expect(try await origin.stats().requests_total == 0)

        // With no state (an empty cache), our own /_img/ references are recognised: still nothing to do.
        try FileManager.default.removeItem(atPath: site.cache)
        let fresh = try await site.build(origin: origin, out: false)
        #expect(fresh.summary.references == 0 && fresh.summary.pagesWritten == 0)
        #expect(site.folder.digests(under: "site") == rewritten)
    }

    @Test func anAbsolutePublicPathIsRecognisedAsOurOwnOutput() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        var config = site.configuration(origin: origin, out: false)
        config.output.publicPath = "https://cdn.example.com/img/"
        _ = try await site.build(config)
        #expect(site.folder.text("site/a.html")?.contains("https://cdn.example.com/img/coffee-") == true)
        try FileManager.default.removeItem(atPath: site.cache)
        try await origin.reset()
        let second = try await site.build(config)
        #expect(second.summary.references == 0 && second.diagnostics.isEmpty)
        #expect(try await origin.stats().requests_total == 0)
    }
}

@Suite struct OutputCleanupTests {
    @Test func imagesNoPageUsesAreRemovedButNotFilesImgbakeDidNotCreate() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\"><img src=\"\(origin.url("img/astronaut.jpg"))\">")
        _ = try await site.build(origin: origin)
        site.folder.write("out/_img/mine.png", Paths.image("coffee.png")) // someone else's file
        site.folder.write("out/notes.txt", "mine")
        #expect(site.folder.files(under: "out/_img").contains { $0.hasPrefix("astronaut-") })

        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        let result = try await site.build(origin: origin)
        let files = site.folder.files(under: "out/_img")
        #expect(!files.contains { $0.hasPrefix("astronaut-") })
        #expect(files.contains("mine.png") && files.contains { $0.hasPrefix("coffee-") })
        #expect(site.folder.exists("out/notes.txt"))
        #expect(result.diagnostics.contains { $0.message == "removed 4 output file(s) no page uses any more" })
    }

    @Test func aFileRemovedFromTheSiteIsRemovedFromTheOutput() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<p>a</p>")
        site.page("old.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        site.page("old.css", "p {}")
        _ = try await site.build(origin: origin)
        #expect(site.folder.exists("out/old.html") && site.folder.exists("out/old.css"))
        try FileManager.default.removeItem(atPath: site.site + "/old.html")
        try FileManager.default.removeItem(atPath: site.site + "/old.css")
        _ = try await site.build(origin: origin)
        #expect(!site.folder.exists("out/old.html") && !site.folder.exists("out/old.css") && site.folder.exists("out/a.html"))
        #expect(site.folder.files(under: "out/_img").isEmpty)
    }
}
