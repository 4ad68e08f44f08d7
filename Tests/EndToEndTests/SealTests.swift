import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The seal a settled build leaves: while nothing in the site, the output or the cache's records of
/// the site's images changed, the next build does nothing, without reading a page state. Whatever
/// changed breaks it, and that build does what it would have done without a seal.
@Suite struct SealTests {
    /// One width: what a seal holds does not depend on how many variants an image has, and encoding
    /// the example images at every default width was two thirds of this suite's time.
    static func configuration(_ site: TestSite, _ origin: Origin, out: Bool = true) -> Configuration {
        var config = site.configuration(origin: origin, out: out)
        config.images.widths = [320]
        return config
    }

    /// Six pages with remote images, a page without, one with a remote and a local image, a stylesheet
    /// and a folder, built once (with `--out` unless told).
    func sealedSite(out: Bool = true) async throws -> (Origin, TestSite) {
        let origin = try Origin()
        let site = TestSite()
        for n in 0..<6 { site.page("p\(n).html", "<p>page \(n)</p><img src=\"\(origin.url("img/" + Paths.exampleImages[n]))\">") }
        site.page("plain.html", "<p>no images</p>")
        site.folder.write("site/img/coffee.png", Paths.image("coffee.png"))
        site.page("notes/m.md", "# Notes\n\n![a](\(origin.url("img/hubble.jpg")))\n\n![c](/img/coffee.png)\n")
        site.page("style.css", "p { color: red }")
        site.page("notes/readme.txt", "read me")
        let first = try await site.build(Self.configuration(site, origin, out: out))
        #expect(first.exitCode == 0 && first.diagnostics.isEmpty && !first.summary.nothingChanged)
        try await origin.reset()
        return (origin, site)
    }

    @Test(arguments: [true, false])
    func aSiteWhereNothingChangedIsLetOffWithoutLookingAtAPage(out: Bool) async throws {
        let (origin, site) = try await sealedSite(out: out)
        let before = site.folder.snapshot()
        let again = try await site.build(Self.configuration(site, origin, out: out))
        #expect(again.summary.nothingChanged && again.summary.pagesUnchanged == 9)
        #expect(again.summary.pagesScanned == 0 && again.summary.filesWritten == 0 && again.diagnostics.isEmpty && again.exitCode == 0)
        #expect(try await origin.stats().requests_total == 0)
        #expect(site.folder.snapshot().filter { !$0.key.hasPrefix("cache/") } == before.filter { !$0.key.hasPrefix("cache/") })
        #expect(again.summary.lines[0] == "0 pages scanned, 0 rewritten, 9 unchanged (nothing changed since the last build); 0 of 0 image references localised")
    }

    enum Change: String, CaseIterable, Sendable {
        case pageEdited, pageEditedSameSize, pageTouched, pageAdded, pageDeleted, otherFileEdited, fileAdded, folderAdded
        case outputPageEdited, outputPageDeleted, outputCopyDeleted, imageFileDeleted, imageFileEdited, localImageEdited
        case settingsChanged, imagesStale, cacheCleaned, pageStateGone, pageStateRewritten, placedFileForgotten
        case sealUnreadable, refresh, report

        /// Changes to an output other than the site itself.
        var needsOutput: Bool { [.outputPageEdited, .outputPageDeleted, .outputCopyDeleted].contains(self) }
    }

    /// Each change breaks the seal, in place and with `--out`; the build that follows does what the
    /// change asks (checked by what it did and by every reference resolving), seals again, and the
    /// build after that is let off.
    @Test(arguments: Change.allCases, [true, false])
    func anyChangeBreaksTheSeal(change: Change, out useOut: Bool) async throws {
        guard useOut || !change.needsOutput else { return }
        let (origin, site) = try await sealedSite(out: useOut)
        var config = Self.configuration(site, origin, out: useOut)
        var clock: any WallClock = SystemClock()
        let output = { (path: String) in site.folder.text((useOut ? "out/" : "site/") + path) }
        try make(change, site, origin, useOut: useOut, config: &config, clock: &clock)
        let result = try await site.build(config, clock: clock)
        let s = result.summary
        #expect(!s.nothingChanged && result.exitCode == 0, "\(s.lines)")
        expectWhatTheChangeAsks(change, useOut: useOut, result, site, output)
        #expect(output("notes/readme.txt") == site.folder.text("site/notes/readme.txt"))
        expectEveryReferencedImageThere(site, useOut: useOut, output)
        if change == .refresh || change == .report { config = Self.configuration(site, origin, out: useOut) }
        let after = try await site.build(config, clock: clock)
        #expect(after.summary.nothingChanged, "sealed again: \(after.summary.lines)")
    }

    /// Makes `change` to the sealed site, its output, its cache or the next build's settings.
    func make(_ change: Change, _ site: TestSite, _ origin: Origin, useOut: Bool, config: inout Configuration,
              clock: inout any WallClock) throws {
        let out = useOut ? site.out : site.site
        let index = { try CacheIndex(path: site.cache + "/index.sqlite3") }
        let firstImage = site.folder.files(under: useOut ? "out/_img" : "site/_img").sorted().first!
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
        case .imageFileDeleted: unlink(out + "/_img/" + firstImage)
        case .imageFileEdited: site.folder.write((useOut ? "out/_img/" : "site/_img/") + firstImage, "not an image any more")
        case .localImageEdited: site.folder.write("site/img/coffee.png", Paths.image("hubble.jpg"))
        case .settingsChanged: config.images.widths = [200]
        case .imagesStale: clock = OffsetClock(offset: 60 * 86_400)
        case .cacheCleaned: try CacheMaintenance.clean(try ImageCache(directory: site.cache))
        case .pageStateGone: try index().database.withLock { db in _ = try db.query("DELETE FROM pages WHERE path = 'p3.html'") }
        // As an imgbake from before seals would, writing what it found: triggers remove the seal.
        case .pageStateRewritten: try index().database.withLock { db in _ = try db.query("UPDATE pages SET state = state WHERE path = 'p3.html'") }
        case .placedFileForgotten: try index().database.withLock { db in _ = try db.query("DELETE FROM placed WHERE rowid = (SELECT min(rowid) FROM placed)") }
        case .sealUnreadable: try index().database.withLock { db in _ = try db.query("UPDATE seals SET seal = '{\"digest\": 7'") }
        case .refresh: config.fetch.policy = .refresh
        case .report: config.reportPath = site.folder.path + "/report.json"
        }
    }

    /// Every `/_img/` file a page of the output names is there.
    func expectEveryReferencedImageThere(_ site: TestSite, useOut: Bool, _ output: (String) -> String?) {
        let out = useOut ? site.out : site.site
        for page in site.folder.files(under: useOut ? "out" : "site") where page.hasSuffix(".html") || page.hasSuffix(".md") {
            for name in referencedImages(output(page) ?? "") {
                #expect(FileManager.default.fileExists(atPath: out + "/_img/" + name), "\(page) refers to /_img/\(name)")
            }
        }
    }

    /// What the build after `change` did: what the change asks, no more.
    func expectWhatTheChangeAsks(_ change: Change, useOut: Bool, _ result: BuildResult, _ site: TestSite,
                                 _ output: (String) -> String?) {
        let s = result.summary
        switch change {
        case .pageEdited, .pageEditedSameSize:
            #expect(s.pagesScanned == 1 && output("p1.html")?.contains("PAGE 1") == (change == .pageEditedSameSize))
        case .pageTouched, .pageDeleted, .otherFileEdited, .fileAdded, .folderAdded, .pageStateRewritten, .sealUnreadable:
            #expect(s.pagesScanned == 0 && s.pagesWritten == 0)
        case .pageAdded: #expect(s.pagesScanned == 1 && output("notes/new.html")?.contains("/_img/") == true)
        case .outputPageEdited: #expect(s.pagesScanned == 1 && output("p1.html")?.contains("page 1") == true)
        // In place the page is built again from the source the cache kept, which writes its files again.
        case .imageFileDeleted where !useOut: #expect(s.requests == 0 && s.pagesScanned == 1 && s.filesWritten == 1)
        case .outputPageDeleted, .imageFileDeleted: #expect(s.pagesScanned == 0 && s.pagesRestored == 1 && s.requests == 0)
        case .outputCopyDeleted, .placedFileForgotten: #expect(s.pagesScanned == 0 && s.requests == 0)
        case .imageFileEdited: #expect(s.requests == 0)
        // In place too: the page is built again from the source the cache kept.
        case .localImageEdited: #expect(s.pagesScanned == 1 && s.requests == 0 && s.imagesRead == 1)
        // In place too: the pages are built again from the sources the cache kept.
        case .settingsChanged: #expect(s.pagesScanned == 9 && s.variantsEncoded > 0)
        case .imagesStale, .refresh: #expect(s.requests > 0)
        case .cacheCleaned: #expect((s.requests > 0) == useOut && s.pagesScanned == 9) // the page states went with the cache
        case .pageStateGone: #expect(s.pagesScanned == 1 && s.requests == 0)
        case .report: #expect(FileManager.default.fileExists(atPath: site.folder.path + "/report.json"))
        }
    }

    /// Whatever a build does not look at may change without breaking the seal: hidden files and
    /// folders in the site, files beside the site and the output.
    @Test func changesOutsideWhatABuildReadsKeepTheSeal() async throws {
        let (origin, site) = try await sealedSite()
        site.page(".draft.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        site.page(".git/HEAD", "ref: refs/heads/main")
        site.folder.write("notes.txt", "beside the site")
        let again = try await site.build(Self.configuration(site, origin))
        #expect(again.summary.nothingChanged && again.diagnostics.isEmpty, "\(again.summary.lines)")
    }

    /// A seal this imgbake cannot read is removed by the next build that writes, even one that does not
    /// seal again.
    @Test func anUnreadableSealIsRemoved() async throws {
        let (origin, site) = try await sealedSite()
        let index = try CacheIndex(path: site.cache + "/index.sqlite3")
        try index.database.withLock { db in _ = try db.query("UPDATE seals SET seal = 'not a seal'") }
        site.page("p1.html", "<img src=\"\(origin.url("img/gone.jpg"))\">")
        _ = try await site.build(Self.configuration(site, origin))
        #expect(try index.database.withLock { db in try db.query("SELECT count(*) FROM seals").first?.first?.int } == 0)
    }

    /// A page with an image that cannot be had is not settled: no seal, and the next build tries again.
    @Test func aBuildWithAFailedImageLeavesNoSeal() async throws {
        let (origin, site) = try await sealedSite()
        site.page("p1.html", "<img src=\"\(origin.url("img/gone.jpg"))\">")
        var config = Self.configuration(site, origin)
        config.fetch.failureTTL = .zero
        _ = try await site.build(config)
        let again = try await site.build(config)
        #expect(!again.summary.nothingChanged && again.summary.pagesScanned == 1)
    }

    /// The seal goes before a build changes anything: one that stops half-way (here, a page whose output
    /// cannot be written) leaves none behind for the next build to trust.
    @Test func aBuildThatStopsHalfWayLeavesNoSeal() async throws {
        let (origin, site) = try await sealedSite()
        let config = Self.configuration(site, origin)
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
        guard let cache = try? ImageCache(directory: site.cache) else { return nil }
        let pool = WorkerPool(threads: 1, name: "test")
        let seal = await SiteStateStore(cache: cache, root: plan.stateRoot, decoding: pool).seal()
        await cache.shutdown()
        await pool.shutdown()
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
