import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The journal carries plans out on real files, with the store and the cache's blobs in memory
/// (`InMemorySiteStates`, `InMemoryBlobs`): every record comes in the order the crash-safety argument
/// at `BuildJournal` needs, and what cannot be carried out leaves the page for the next build.
@Suite struct BuildJournalTests {
    /// A site of one page, a journal for `target`, and the page's plan made from what is on disk.
    final class World: Sendable {
        let folder = TemporaryFolder()
        let blobs = InMemoryBlobs()
        let store: InMemorySiteStates
        let pool = WorkerPool(threads: 2, name: "journal-test")
        let target: OutputTarget

        var site: String { folder.path + "/site" }
        var out: String { folder.path + "/out" }
        var root: String { target.separateOutput ? out : site }

        init(_ target: OutputTarget, refusesCopies: Bool = false) {
            self.target = target
            let folder = self.folder, root = target.separateOutput ? folder.path + "/out" : folder.path + "/site"
            var contents = InMemorySiteStates.Contents()
            contents.refusesCopies = refusesCopies
            // What each change saw on disk: the page's bytes and which image files were there.
            store = InMemorySiteStates(contents) { _ in
                let page = (try? String(contentsOfFile: root + "/p.html", encoding: .utf8)).map { $0.contains("/_img/") ? "rewritten" : "source" } ?? "none"
                let images = (try? FileManager.default.contentsOfDirectory(atPath: root + "/_img").filter { !$0.hasPrefix(".") }.count) ?? 0
                return "page \(page), \(images) image file(s)"
            }
            folder.write("site/p.html", PagePlanTests.html(.resolved))
        }

        func journal() throws -> BuildJournal {
            var config = Configuration(site: site, cacheDirectory: folder.path + "/cache", jobs: 2)
            if target.separateOutput { config.outputDirectory = out }
            return journal(try BuildPlan(config, now: 0), store: store)
        }

        /// A journal of `plan` writing through an images folder of its own.
        func journal(_ plan: BuildPlan, store: any SiteStates) -> BuildJournal {
            BuildJournal(plan: plan, store: store, folder: ImagesFolder(plan, store: store, cache: blobs, repairs: NoRepairs(), pool: pool), pool: pool)
        }

        /// The page's plan as the stream would make it: read from the site now, its images' blobs in the cache.
        func plan(_ images: PagePlanTests.Images = .resolved, previous: PageState? = nil) throws -> PagePlan {
            var input = PagePlanTests.input(images, previous: previous)
            let bytes = PagePlanTests.html(images)
            let stamp = try #require(FileStamp.of(site + "/p.html"))
            input.source = .success(LoadedPage(path: "p.html", bytes: bytes, hash: BlobID(of: bytes), siteStamp: stamp, siteHash: BlobID(of: bytes)))
            for case .resolved(let image, _) in input.images.resolutions.values { blobs.add(Array(image.url.serialized.utf8)) }
            return PagePlan.make(input, try PagePlanTests.settings(target))
        }

        func text(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

        deinit { let pool = self.pool; Task { await pool.shutdown() } }
    }

    @Test func inPlaceEveryRecordComesBeforeOrAfterWhatItDescribes() async throws {
        let world = World(.inPlace)
        var journal = try world.journal()
        let plan = try world.plan()
        try await journal.apply([plan])
        await journal.flush()
        let log = world.store.now.log
        let image = try #require(plan.imageFiles.first?.fileName)
        // 1. The image file recorded as placed before it is written; 3. the source kept; 4. the intent
        // recorded before the page is written over its source; 6. the state once it is.
        #expect(log.map(\.change) == [.placed(["_img/" + image]), .kept, .pages(["p.html"]), .outputs([image]), .pages(["p.html"]),
                                      .placed(["_img/" + image])])
        #expect(log.map(\.seen) == ["page source, 0 image file(s)", "page source, 1 image file(s)", "page source, 1 image file(s)",
                                    "page rewritten, 1 image file(s)", "page rewritten, 1 image file(s)", "page rewritten, 1 image file(s)"])
        let state = try #require(world.store.now.pages["p.html"])
        let write = try #require(plan.write)
        #expect(world.text(world.site + "/p.html") == String(decoding: write.bytes, as: UTF8.self))
        #expect(state.copy == .rewritten(source: BlobID(of: PagePlanTests.html(.resolved)), rewrites: [write.hash]))
        #expect(state.stamp == FileStamp.of(world.site + "/p.html") && state.complete)
        #expect(world.store.now.kept[BlobID(of: PagePlanTests.html(.resolved))] == PagePlanTests.html(.resolved))
        #expect(journal.ledger.pages.written == 1 && journal.ledger.files.written == 1 && journal.ledger.placed == ["_img/" + image: .image])
    }

    /// The intent names the rewrite standing in the site now beside the one about to be written, marked
    /// incomplete and unstamped: a build stopped between the two finds one of them and reads the kept source.
    @Test func anIntentNamesBothRewrites() async throws {
        let world = World(.inPlace)
        let source = BlobID(of: PagePlanTests.html(.resolved)), old = BlobID(of: [1])
        var plan = try world.plan()
        var input = PagePlanTests.input(previous: PageState(path: "p.html", fingerprint: plan.state.fingerprint, sourceHash: source,
                                                           stamp: .unknown, copy: .rewritten(source: source, rewrites: [old]), complete: false,
                                                           keys: [], sources: SourceDigest(), images: [], imagesKnown: true, mentions: [],
                                                           references: []))
        input.source = .success(LoadedPage(path: "p.html", bytes: PagePlanTests.html(.resolved), hash: source, kept: source,
                                           siteStamp: try #require(FileStamp.of(world.site + "/p.html")), siteHash: old))
        var settings = try PagePlanTests.settings(.inPlace)
        settings.fingerprint = plan.state.fingerprint
        plan = PagePlan.make(input, settings)
        let intents = InMemorySiteStates()
        var journal = world.journal(try world.journal().plan, store: intents)
        try await journal.apply([plan])
        let new = try #require(plan.write).hash
        // Until the turn's states are recorded, the store holds the intent.
        let intent = try #require(intents.now.pages["p.html"])
        #expect(intent.copy == .rewritten(source: source, rewrites: [old, new]) && intent.stamp == .unknown && !intent.complete)
        await journal.flush()
        let state = try #require(intents.now.pages["p.html"])
        #expect(state.copy == .rewritten(source: source, rewrites: [new]) && state.complete && state.stamp != .unknown)
        #expect(intents.now.log.filter { $0.change == .kept }.isEmpty, "the kept source is not kept again")
    }

    @Test func aPageChangedWhileTheBuildRanIsLeftForTheNextBuild() async throws {
        let world = World(.inPlace)
        var journal = try world.journal()
        let plan = try world.plan()
        world.folder.write("site/p.html", "<p>edited meanwhile</p>")
        try await journal.apply([plan])
        #expect(world.text(world.site + "/p.html") == "<p>edited meanwhile</p>")
        #expect(journal.ledger.states == [plan.unsettled] && journal.ledger.pages.written == 0)
        #expect(journal.ledger.diagnostics.map(\.message) == ["changed while imgbake was running; left for the next build"])
    }

    @Test func aCopyTheCacheCannotKeepIsTakenOutOfTheState() async throws {
        let world = World(.inPlace, refusesCopies: true)
        var journal = try world.journal()
        try await journal.apply([try world.plan()])
        #expect(journal.ledger.states.first?.copy == PageCopy.none, "the page stands as its own source")
        #expect(world.text(world.site + "/p.html")?.contains("/_img/") == true)
    }

    @Test(arguments: [OutputTarget.inPlace, .folder])
    func aMissingFileIsWrittenAgainOrNamedWhereThePageUsesIt(target: OutputTarget) async throws {
        let world = World(target)
        var journal = try world.journal()
        let writable = try world.plan(.missingWritable)
        let written = try #require(writable.missing.first)
        guard case .writable(let image) = written.file else { Issue.record("not a writable file: \(written.file)"); return }
        world.blobs.add([9])
        try await journal.apply([writable])
        #expect(FileManager.default.fileExists(atPath: world.root + "/_img/" + image.fileName))
        #expect(journal.ledger.files.again == 1 && journal.ledger.files.written == 2)
        // Written since, by an earlier page: nothing to say. Still missing, and the cache cannot: a warning.
        var again = try world.journal()
        try await again.apply([try world.plan(.missingUnavailable)])
        #expect(again.ledger.diagnostics.isEmpty)
        let fresh = World(target)
        var other = try fresh.journal()
        try await other.apply([try fresh.plan(.missingUnavailable)])
        #expect(other.ledger.diagnostics.map(\.message) == ["refers to /_img/old-0123456789-320.webp, which is missing: this cache has no record of it"])
    }

    /// A blob damaged after the page was planned (the gathering checked it): the page is left for the
    /// next build, which makes the file again, rather than going back to be resolved and planned.
    @Test func aBlobDamagedSinceThePageWasPlannedLeavesThePage() async throws {
        let world = World(.folder)
        var journal = try world.journal()
        let plan = try world.plan()
        world.blobs.damage(try #require(plan.imageFiles.first).blob)
        try await journal.apply([plan])
        #expect(!FileManager.default.fileExists(atPath: world.out + "/p.html"))
        #expect(journal.ledger.states == [plan.unsettled])
        #expect(journal.ledger.diagnostics.contains { $0.message.hasPrefix("cache: a file of this page's images was damaged") })
    }

    /// A page written again from the copy the cache kept (its `--out` output lost) is that copy only with
    /// every file it names: one whose blob went bad since it was planned leaves the page for the next
    /// build, which reads it, rather than a page naming a file that is not there.
    @Test func aRestoredPageMissingAFileIsLeft() async throws {
        let world = World(.folder)
        var journal = try world.journal()
        let built = try world.plan()
        let copy = try #require(built.write)
        var previous = built.state
        previous.copy = .written(kept: copy.hash, output: nil)
        var input = PagePlanTests.input(previous: previous)
        input.source = .success(LoadedPage(path: "p.html", bytes: [], hash: try #require(previous.sourceHash), siteStamp: previous.stamp))
        input.gathered = .lostOutput(PageElsewhere(state: previous, bytes: copy.bytes, hash: copy.hash))
        let name = try #require(previous.images.first)
        // Found whole when the page was gathered; gone from the cache by the time it is written.
        input.missing = [name: .writable(OutputImage(fileName: name, blob: BlobID(of: [42]), bytes: -1, key: OriginalKey("k")))]
        let plan = PagePlan.make(input, try PagePlanTests.settings(.folder))
        try #require(plan.outcome == .restored)
        try await journal.apply([plan])
        #expect(!FileManager.default.fileExists(atPath: world.out + "/p.html"))
        #expect(journal.ledger.states == [plan.unsettled])
        #expect(journal.ledger.diagnostics.contains { $0.message.hasPrefix("cache: a file this page names was damaged") })
    }

    /// With `--out`, an output still as the last build wrote it is not written again.
    @Test func anOutputAsWrittenBeforeIsNotWrittenAgain() async throws {
        let world = World(.folder)
        var first = try world.journal()
        let plan = try world.plan()
        try await first.apply([plan])
        let written = try #require(first.ledger.states.first)
        let stamp = try #require(written.output)
        #expect(stamp == FileStamp.of(world.out + "/p.html") && first.ledger.placed["p.html"] == .mirror)
        var previous = written
        previous.complete = false
        var again = try world.journal()
        try await again.apply([try world.plan(previous: previous)])
        #expect(again.ledger.pages.written == 0 && again.ledger.states.first?.output == stamp)
    }

    /// The clean-up removes what imgbake placed that no page uses, in the record that also saves the
    /// states; the seal comes last, and goes first.
    @Test func theCleanUpAndTheSealComeLast() async throws {
        let world = World(.inPlace)
        world.folder.write("site/_img/gone-0123456789-320.webp", "x")
        var contents = InMemorySiteStates.Contents()
        contents.placed = ["_img/gone-0123456789-320.webp": .image]
        contents.seal = SiteSeal(digest: "d", keys: [], sources: "0", images: [])
        let store = InMemorySiteStates(contents)
        var journal = world.journal(try world.journal().plan, store: store)
        await journal.begin()
        try await journal.apply([try world.plan()])
        await journal.flush()
        let inventory = await SiteInventory.walk(world.site, SiteInventory.Options(skipped: [world.site + "/_img"]), on: world.pool)
        let triage = PageTriage(previous: [:], unchanged: [], toBuild: [])
        try await journal.complete(triage, inventory)
        await journal.cleanUp(triage, inventory)
        await journal.seal(SiteSeal(digest: "e", keys: [], sources: "0", images: []))
        #expect(!FileManager.default.fileExists(atPath: world.site + "/_img/gone-0123456789-320.webp"))
        let changes = store.now.log.map(\.change)
        #expect(changes.first == .seal(false) && changes.last == .seal(true))
        #expect(changes.contains(.removed(["_img/gone-0123456789-320.webp"])))
        #expect(journal.ledger.diagnostics.map(\.message) == ["removed 1 output file(s) no page uses any more"])
    }
}
