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
        // p1 changed; p2 was only touched; p3 (coffee.png) lost an image file, written again from the
        // cache without reading the page.
        #expect(result.summary.pagesScanned == 1 && result.summary.pagesUnchanged == 5 && result.summary.pagesRestored == 1)
        #expect(site.output("p1.html")?.contains("alt=\"edited\"") == true)
        #expect(site.folder.files(under: "out/_img").contains { $0.hasPrefix("coffee-") && $0.hasSuffix(".webp") })
    }

    // MARK: Lost outputs

    /// `count` pages built once with `--out`: the origin, the site, and what the build wrote.
    func builtSite(_ count: Int) async throws -> (Origin, TestSite, [String: String]) {
        let origin = try Origin()
        let site = TestSite()
        pages(site, origin, count: count)
        _ = try await site.build(origin: origin)
        return (origin, site, site.folder.digests(under: "out"))
    }

    /// What the last build of `site` recorded for each page (`previous` of its partition).
    func pageStates(_ site: TestSite, _ origin: Origin) async throws -> [String: PageState] {
        let plan = try BuildPlan(site.configuration(origin: origin), now: 0)
        let cache = try ImageCache(directory: site.cache)
        let pool = WorkerPool(threads: 1, name: "test")
        let states = await SiteStateStore(cache: cache, root: plan.stateRoot, decoding: pool).pageStates()
        await cache.shutdown()
        await pool.shutdown()
        return states
    }

    /// A wiped `--out` (a fresh CI checkout with the cache restored): every page and image file is
    /// written again from the cache, byte for byte, without reading a page or asking the origin.
    @Test func aLostOutputIsWrittenAgainFromTheCacheWithoutReadingAPage() async throws {
        let origin = try Origin()
        let site = TestSite()
        pages(site, origin, count: 8)
        site.page("plain.html", "<p>no images</p>")
        site.page("style.css", "p { color: red }")
        _ = try await site.build(origin: origin)
        let built = site.folder.digests(under: "out")
        try FileManager.default.removeItem(atPath: site.out)
        try await origin.reset()

        let again = try await site.build(origin: origin)
        #expect(again.summary.pagesScanned == 0 && again.summary.pagesUnchanged == 10 && again.summary.pagesRestored == 8, "\(again.summary.lines)")
        #expect(again.summary.lines[0].contains("(8 written again from the cache)"))
        #expect(try await origin.stats().requests_total == 0)
        #expect(site.folder.digests(under: "out") == built)
        #expect(again.diagnostics.isEmpty, "\(again.diagnostics)")
        // Recorded as placed: a page deleted from the site takes its output with it.
        try FileManager.default.removeItem(atPath: site.site + "/p0.html")
        _ = try await site.build(origin: origin)
        #expect(!FileManager.default.fileExists(atPath: site.out + "/p0.html"))
    }

    /// A page whose kept copy is damaged or gone is read and rewritten instead; one whose image file's
    /// blob is damaged is written from its copy once the images folder has that image made again (the
    /// same file). The output is the same.
    @Test func aPageTheCacheCannotGiveBackWholeIsReadAgain() async throws {
        let (origin, site, built) = try await builtSite(6)
        let states = try await pageStates(site, origin)
        let blobs = BlobStore(root: site.cache + "/blobs")
        let damaged = try #require(states["p0.html"]?.kept), gone = try #require(states["p1.html"]?.kept)
        FileManager.default.createFile(atPath: blobs.path(of: damaged), contents: Data("<p>not the page</p>".utf8))
        blobs.remove(gone)
        // p2's fallback image damaged in the cache: the file is made again from the cached original.
        let index = try CacheIndex(path: site.cache + "/index.sqlite3")
        let image = try #require(states["p2.html"]?.images.first { $0.hasSuffix(".jpg") })
        let record = try #require(try index.output(named: image))
        FileManager.default.createFile(atPath: blobs.path(of: record.blob), contents: Data("not a jpeg".utf8))
        try FileManager.default.removeItem(atPath: site.out)

        let again = try await site.build(origin: origin)
        #expect(again.summary.pagesScanned == 2 && again.summary.pagesRestored == 4, "\(again.summary.lines)")
        #expect(again.summary.variantsEncoded > 0, "p2's file was made again: \(again.summary.lines)")
        #expect(site.folder.digests(under: "out") == built)
        #expect(try await origin.stats().requests_total == 6, "no request beyond the first build's")
    }

    /// Garbage collection keeps the blobs page states name; a page state that stops naming one lets it go.
    @Test func garbageCollectionKeepsTheBlobsOfPages() async throws {
        let (origin, site, _) = try await builtSite(2)
        let first = try #require(try await pageStates(site, origin)["p0.html"]?.kept)
        let blobs = BlobStore(root: site.cache + "/blobs")
        let cache = try ImageCache(directory: site.cache)
        _ = try CacheMaintenance.collect(cache, maxBytes: .max)
        #expect(blobs.exists(first))
        site.page("p0.html", "<img src=\"\(origin.url("img/" + Paths.exampleImages[1]))\" alt=\"edited\">")
        _ = try await site.build(origin: origin)
        _ = try CacheMaintenance.collect(cache, maxBytes: .max)
        #expect(!blobs.exists(first))
        #expect(try await pageStates(site, origin)["p0.html"]?.kept.map(blobs.exists) == true)
        await cache.shutdown()
    }

    /// Over budget, pages' blobs go before any image: the pages are then rewritten from their sources,
    /// with no request.
    @Test func overBudgetPageBlobsGoFirst() async throws {
        let (origin, site, built) = try await builtSite(3)
        let states = try await pageStates(site, origin)
        let blobs = BlobStore(root: site.cache + "/blobs")
        let pageBytes = states.values.compactMap { $0.kept.flatMap(blobs.size) }.reduce(0, +)
        let cache = try ImageCache(directory: site.cache)
        let total = CacheMaintenance.blobFiles(blobs).map(\.1).reduce(0, +)
        let report = try CacheMaintenance.collect(cache, maxBytes: total - pageBytes)
        await cache.shutdown()
        #expect(report.removedEntries == 0 && report.freedBytes == pageBytes && !report.overBudget)
        #expect(states.values.allSatisfy { $0.kept.map(blobs.exists) == false })
        try FileManager.default.removeItem(atPath: site.out)
        try await origin.reset()
        let again = try await site.build(origin: origin)
        #expect(again.summary.pagesScanned == 3 && again.summary.pagesRestored == 0)
        #expect(site.folder.digests(under: "out") == built)
        #expect(try await origin.stats().requests_total == 0)
    }

    /// An output page that is there but not as the last build recorded it may be newer than the
    /// record (a build killed before recording): it is rewritten from its source, never replaced by
    /// the older page from the cache.
    @Test func anOutputPageThatDiffersFromItsRecordIsRewrittenNotRestored() async throws {
        let (origin, site, _) = try await builtSite(2)
        let image = try #require(try await pageStates(site, origin)["p0.html"]?.images.first)
        unlink(site.out + "/_img/" + image)
        site.folder.write("out/p0.html", "<p>written by a build that was not recorded</p>")
        let again = try await site.build(origin: origin)
        #expect(again.summary.pagesScanned == 1 && again.summary.pagesRestored == 0, "\(again.summary.lines)")
        #expect(FileManager.default.fileExists(atPath: site.out + "/_img/" + image))
        #expect(site.output("p0.html")?.contains("/_img/") == true)
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
        #expect(result.diagnostics.contains { $0.message == "removed 3 output file(s) no page uses any more" })
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
