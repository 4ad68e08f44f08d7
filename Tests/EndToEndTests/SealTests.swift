import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The seal a settled build leaves: while nothing in the site, the output or the cache's records of
/// the site's images changed, the next build does nothing, without reading a page state. Whatever
/// changed breaks it, and that build does what it would have done without a seal.
@Suite struct SealTests {
    /// Six pages with images, a page without, a stylesheet and a folder, built once with `--out`.
    func sealedSite(out: Bool = true) async throws -> (Origin, TestSite) {
        let origin = try Origin()
        let site = TestSite()
        for n in 0..<6 { site.page("p\(n).html", "<p>page \(n)</p><img src=\"\(origin.url("img/" + Paths.exampleImages[n]))\">") }
        site.page("plain.html", "<p>no images</p>")
        site.page("notes/m.md", "# Notes\n\n![a](\(origin.url("img/hubble.jpg")))\n")
        site.page("style.css", "p { color: red }")
        site.page("notes/readme.txt", "read me")
        let first = try await site.build(origin: origin, out: out)
        #expect(first.exitCode == 0 && first.diagnostics.isEmpty && !first.summary.nothingChanged)
        try await origin.reset()
        return (origin, site)
    }

    @Test(arguments: [true, false])
    func aSiteWhereNothingChangedIsLetOffWithoutLookingAtAPage(out: Bool) async throws {
        let (origin, site) = try await sealedSite(out: out)
        let before = site.folder.snapshot()
        let again = try await site.build(origin: origin, out: out)
        #expect(again.summary.nothingChanged && again.summary.pagesUnchanged == 9)
        #expect(again.summary.pagesScanned == 0 && again.summary.filesWritten == 0 && again.diagnostics.isEmpty && again.exitCode == 0)
        #expect(try await origin.stats().requests_total == 0)
        #expect(site.folder.snapshot().filter { !$0.key.hasPrefix("cache/") } == before.filter { !$0.key.hasPrefix("cache/") })
        #expect(again.summary.lines[0] == "0 pages scanned, 0 rewritten, 9 unchanged (nothing changed since the last build); 0 of 0 image references localised")
    }

    enum Change: String, CaseIterable, Sendable {
        case pageEdited, pageEditedSameSize, pageTouched, pageAdded, pageDeleted, otherFileEdited, fileAdded, folderAdded
        case outputPageEdited, outputPageDeleted, outputCopyDeleted, imageFileDeleted
        case settingsChanged, imagesStale, cacheCleaned, pageStateGone, refresh, report
    }

    /// Each change breaks the seal; the build that follows does what the change asks (checked by what
    /// it did and by every reference resolving), seals again, and the build after that is let off.
    @Test(arguments: Change.allCases)
    func anyChangeBreaksTheSeal(change: Change) async throws {
        let (origin, site) = try await sealedSite()
        var config = site.configuration(origin: origin)
        var now: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        let out = site.out
        switch change {
        case .pageEdited: site.page("p1.html", "<p>edited</p><img src=\"\(origin.url("img/hubble.jpg"))\">")
        case .pageEditedSameSize: site.page("p1.html", "<p>PAGE 1</p><img src=\"\(origin.url("img/" + Paths.exampleImages[1]))\">")
        case .pageTouched: setTime(site.site + "/p1.html", 1_700_000_000)
        case .pageAdded: site.page("notes/new.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        case .pageDeleted: try FileManager.default.removeItem(atPath: site.site + "/p2.html")
        case .otherFileEdited: site.page("notes/readme.txt", "read me again")
        case .fileAdded: site.page("notes/robots.txt", "User-agent: *")
        case .folderAdded: try FileManager.default.createDirectory(atPath: site.site + "/empty", withIntermediateDirectories: false)
        case .outputPageEdited: site.folder.write("out/p1.html", "<p>replaced by hand</p>")
        case .outputPageDeleted: unlink(out + "/p1.html")
        case .outputCopyDeleted: unlink(out + "/notes/readme.txt")
        case .imageFileDeleted: unlink(out + "/_img/" + (site.folder.files(under: "out/_img").sorted().first)!)
        case .settingsChanged: config.images.widths = [200]
        case .imagesStale: now = { Date().timeIntervalSince1970 + 60 * 86_400 }
        case .cacheCleaned: try CacheMaintenance.clean(try ImageCache(directory: site.cache))
        case .pageStateGone:
            let index = try CacheIndex(path: site.cache + "/index.sqlite3")
            try index.database.withLock { db in _ = try db.query("DELETE FROM pages WHERE path = 'p3.html'") }
        case .refresh: config.fetch.policy = .refresh
        case .report: config.reportPath = site.folder.path + "/report.json"
        }
        let result = try await site.build(config, now: now)
        #expect(!result.summary.nothingChanged && result.exitCode == 0, "\(result.summary.lines)")
        let s = result.summary
        switch change {
        case .pageEdited, .pageEditedSameSize:
            #expect(s.pagesScanned == 1 && site.output("p1.html")?.contains("PAGE 1") == (change == .pageEditedSameSize))
        case .pageTouched, .pageDeleted, .otherFileEdited, .fileAdded, .folderAdded: #expect(s.pagesScanned == 0 && s.pagesWritten == 0)
        case .pageAdded: #expect(s.pagesScanned == 1 && site.output("notes/new.html")?.contains("/_img/") == true)
        case .outputPageEdited: #expect(s.pagesScanned == 1 && site.output("p1.html")?.contains("page 1") == true)
        case .outputPageDeleted, .imageFileDeleted: #expect(s.pagesScanned == 0 && s.pagesRestored == 1 && s.requests == 0)
        case .outputCopyDeleted: #expect(s.pagesScanned == 0 && s.requests == 0)
        case .settingsChanged: #expect(s.pagesScanned == 9 && s.variantsEncoded > 0)
        case .imagesStale, .refresh: #expect(s.requests > 0)
        case .cacheCleaned: #expect(s.requests > 0 && s.pagesScanned == 9) // the page states went with the cache
        case .pageStateGone: #expect(s.pagesScanned == 1 && s.requests == 0)
        case .report: #expect(FileManager.default.fileExists(atPath: site.folder.path + "/report.json"))
        }
        #expect(site.output("notes/readme.txt") == site.folder.text("site/notes/readme.txt"))
        for page in site.folder.files(under: "out") where page.hasSuffix(".html") || page.hasSuffix(".md") {
            for name in referencedImages(site.output(page) ?? "") {
                #expect(FileManager.default.fileExists(atPath: out + "/_img/" + name), "\(page) refers to /_img/\(name)")
            }
        }
        if change == .refresh || change == .report { config = site.configuration(origin: origin) }
        let after = try await site.build(config, now: now)
        #expect(after.summary.nothingChanged, "sealed again: \(after.summary.lines)")
    }

    /// A page with an image that cannot be had is not settled: no seal, and the next build tries again.
    @Test func aBuildWithAFailedImageLeavesNoSeal() async throws {
        let (origin, site) = try await sealedSite()
        site.page("p1.html", "<img src=\"\(origin.url("img/gone.jpg"))\">")
        var config = site.configuration(origin: origin)
        config.fetch.failureTTL = .zero
        _ = try await site.build(config)
        let again = try await site.build(config)
        #expect(!again.summary.nothingChanged && again.summary.pagesScanned == 1)
    }

    /// The seal goes before a build changes anything: one that stops half-way (here, a page whose output
    /// cannot be written) leaves none behind for the next build to trust.
    @Test func aBuildThatStopsHalfWayLeavesNoSeal() async throws {
        let (origin, site) = try await sealedSite()
        let config = site.configuration(origin: origin)
        let plan = try BuildPlan(config, now: 0)
        #expect(await seal(site, plan) != nil)
        site.page("p1.html", "<p>edited</p><img src=\"\(origin.url("img/hubble.jpg"))\">")
        unlink(site.out + "/p1.html")
        try FileManager.default.createDirectory(atPath: site.out + "/p1.html/blocked", withIntermediateDirectories: true)
        _ = try? await site.build(config)
        #expect(await seal(site, plan) == nil)
        try FileManager.default.removeItem(atPath: site.out + "/p1.html")
        let repaired = try await site.build(config)
        #expect(repaired.summary.pagesScanned == 1 && site.output("p1.html")?.contains("edited") == true)
    }

    func seal(_ site: TestSite, _ plan: BuildPlan) async -> SiteSeal? {
        let cache = try? ImageCache(directory: site.cache)
        let seal = await cache?.seal(root: plan.stateRoot)?.seal
        await cache?.shutdown()
        return seal
    }

    func setTime(_ path: String, _ seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// `/_img/<name>` in a page, by a pattern of the test's own.
    func referencedImages(_ text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "/_img/([A-Za-z0-9._-]+)")
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
    }
}
