import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

@Suite struct CacheTests {
    static let names = Paths.exampleImages

    @Test func twoBuildProcessesAtOnceOnOneCacheAreBothCorrectAndTheCacheVerifiesClean() async throws {
        let origin = try Origin(latencyMilliseconds: 100)
        let site = TestSite()
        for n in 0..<10 {
            site.page("p\(n).html", Self.names.map { "<img src=\"\(origin.url("img/" + $0))\">" }.joined(separator: "\n"))
        }
        site.page("imgbake.toml", TestSite.fixedQualityTOML)
        let arguments = { @Sendable (out: String) in
            ["build", site.site, "--out", out, "--cache-dir", site.cache, "--connect-to", origin.connectTo, "--quiet"]
        }
        async let a = runImgbake(arguments(site.folder.path + "/out-a"))
        async let b = runImgbake(arguments(site.folder.path + "/out-b"))
        let results = try await (a: a, b: b)
        #expect(results.a.status == 0 && results.b.status == 0, "\(results.a.stderr) \(results.b.stderr)")
        #expect(site.folder.digests(under: "out-a") == site.folder.digests(under: "out-b"))
        // WebP widths per image: hubble 3, hubble-wide 4, astronaut 2, the rest 1; and one fallback file
        // each in the source's format.
        let webpWidths = 3 + 4 + 2 + 1 + 1 + 1
        #expect(site.folder.files(under: "out-a/_img").count == webpWidths + 6)

        let verify = try await runImgbake(["cache", "verify", "--cache-dir", site.cache])
        #expect(verify.status == 0)
        #expect(verify.stdout.hasSuffix("blobs checked, 0 corrupt, 0 missing\n"))
        let stats = try await runImgbake(["cache", "stats", "--cache-dir", site.cache])
        #expect(stats.stdout.contains("originals: 6 ("))

        try await origin.reset()
        let third = try await runImgbake(arguments(site.folder.path + "/out-c"))
        #expect(third.status == 0)
        #expect(try await origin.stats().requests_total == 0)
    }

    @Test func verifyReportsDamageDropsItAndExitsOne() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        _ = try await site.build(origin: origin)
        let cache = try ImageCache(directory: site.cache)
        let (blob, _) = try #require(CacheMaintenance.blobFiles(cache.blobs).first)
        FileManager.default.createFile(atPath: cache.blobs.path(of: blob), contents: Data("garbage".utf8))
        let verify = try await runImgbake(["cache", "verify", "--cache-dir", site.cache])
        #expect(verify.status == 1)
        #expect(verify.stderr == "corrupt: \(blob) (removed)\n")
        #expect(try await runImgbake(["cache", "verify", "--cache-dir", site.cache]).status == 0)
    }

    @Test func gcEvictsTheLeastRecentlyUsedUntilUnderBudget() async throws {
        let origin = try Origin()
        let site = TestSite()
        let clock = TestClock()
        var config = site.configuration(origin: origin)
        site.page("a.html", "<img src=\"\(origin.url("img/hubble-wide.jpg"))\">")
        _ = try await site.build(config, clock: clock)          // used first
        let wideBytes = try CacheMaintenance.stats(ImageCache(directory: site.cache)).blobBytes
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        clock.advance(hours: 1)
        config.outputDirectory = site.folder.path + "/out2"
        _ = try await site.build(config, clock: clock)          // used last
        let cache = try ImageCache(directory: site.cache)
        let before = try CacheMaintenance.stats(cache)
        #expect(before.originals == 2)

        let coffeeBytes = before.blobBytes - wideBytes
        let budget = coffeeBytes + 1_000 // room for coffee only
        let report = try CacheMaintenance.collect(cache, maxBytes: budget)
        let after = try CacheMaintenance.stats(cache)
        #expect(after.blobBytes <= budget && report.removedEntries > 0)
        #expect(after.originals == 1)
        #expect(try cache.index.original(OriginalKey(origin.url("img/coffee.png"))) != nil)

        try await origin.reset()
        config.outputDirectory = site.folder.path + "/out3"
        _ = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 0) // coffee survived
    }

    @Test func theEndOfBuildBudgetNeverEvictsWhatTheBuildUsed() async throws {
        let origin = try Origin()
        let site = TestSite()
        let clock = TestClock()
        var config = site.configuration(origin: origin)
        site.page("a.html", "<img src=\"\(origin.url("img/hubble-wide.jpg"))\">")
        _ = try await site.build(config, clock: clock)
        clock.advance(hours: 1)
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        config.cache.maxSize = 1 // far too small: everything older goes, this build's entries stay
        let result = try await site.build(config, clock: clock)
        #expect(result.diagnostics.contains { $0.message.hasPrefix("cache: evicted") }, "\(result.diagnostics)")
        #expect(result.diagnostics.contains { $0.message.contains("over the 1 B budget: this build alone uses more") })
        let cache = try ImageCache(directory: site.cache)
        #expect(try cache.index.original(OriginalKey(origin.url("img/coffee.png"))) != nil)
        #expect(try cache.index.original(OriginalKey(origin.url("img/hubble-wide.jpg"))) == nil)
    }

    @Test func gcAndCleanFromTheCommandLine() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", Self.names.map { "<img src=\"\(origin.url("img/" + $0))\">" }.joined())
        _ = try await site.build(origin: origin)
        let gc = try await runImgbake(["cache", "gc", "--cache-dir", site.cache, "--max-size", "300KB"])
        #expect(gc.status == 0)
        #expect(gc.stdout.hasPrefix("evicted "))
        #expect(try CacheMaintenance.stats(try ImageCache(directory: site.cache)).blobBytes <= 300_000)
        #expect(try await runImgbake(["cache", "gc", "--cache-dir", site.cache, "--max-size", "lots"]).status == 2)
        let clean = try await runImgbake(["cache", "clean", "--cache-dir", site.cache])
        #expect(clean.status == 0)
        let stats = try CacheMaintenance.stats(try ImageCache(directory: site.cache))
        #expect(stats.originals == 0 && stats.variants == 0 && stats.blobFiles == 0)
    }

    /// A CI runner building into a new temporary output each time leaves a set of page states per run:
    /// `cache gc` forgets those whose output (or site) folder is gone, keeps the others, and a build of
    /// a kept one still knows its pages (nothing to do), while the blobs of forgotten pages go.
    @Test func gcForgetsTheStatesOfSitesWhoseFolderIsGone() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        var config = site.configuration(origin: origin)
        for run in 1...3 {
            config.outputDirectory = site.folder.path + "/out\(run)"
            _ = try await site.build(config)
        }
        try FileManager.default.removeItem(atPath: site.folder.path + "/out1")
        try FileManager.default.removeItem(atPath: site.folder.path + "/out2")
        let before = try ImageCache(directory: site.cache)
        #expect(try before.index.stateRoots().count == 3)
        let pageBlobs = try before.index.pageBlobs()

        let gc = try await runImgbake(["cache", "gc", "--cache-dir", site.cache, "--max-size", "1GB"])
        #expect(gc.status == 0)
        #expect(gc.stdout.contains("forgot the page states of 2 sites whose folder is gone"), "\(gc.stdout)")
        let after = try ImageCache(directory: site.cache)
        let kept = try after.index.stateRoots()
        #expect(kept.count == 1 && kept.first?.hasSuffix("/out3") == true, "\(kept)")
        #expect(try after.index.pageBlobs().count == pageBlobs.count - 2 || pageBlobs.count == 1, "one page blob per output, unless they are the same bytes")
        let again = try await site.build(config)
        #expect(again.summary.pagesWritten == 0 && again.summary.pagesScanned == 0, "a kept site's pages are known: \(again.summary)")

        let twice = try await runImgbake(["cache", "gc", "--cache-dir", site.cache, "--max-size", "1GB"])
        #expect(!twice.stdout.contains("forgot"), "nothing more to forget: \(twice.stdout)")
    }

    @Test func sizesParse() {
        #expect(ByteSize.parse("50MB") == 50_000_000)
        #expect(ByteSize.parse("5GB") == 5_000_000_000)
        #expect(ByteSize.parse("1.5 G") == 1_500_000_000)
        #expect(ByteSize.parse("800KiB") == 819_200)
        #expect(ByteSize.parse("1_048_576") == 1_048_576)
        #expect(ByteSize.parse("lots") == nil)
        #expect(ByteSize.parse("5XB") == nil)
    }
}

@Suite struct InterruptionTests {
    @Test func aBuildKilledMidWayLeavesAUsableSiteAndCache() async throws {
        // 36 distinct URLs at 400 ms each, 4 at a time: several seconds of downloading to interrupt.
        let origin = try Origin(latencyMilliseconds: 400)
        let site = TestSite()
        for n in 0..<6 {
            site.page("p\(n).html", Paths.exampleImages.map { "<img src=\"\(origin.url("img/\($0)?p=\(n)"))\">" }.joined())
        }
        site.page("imgbake.toml", TestSite.fixedQualityTOML)
        let process = try ChildProcess(Paths.binary, ["build", site.site, "--cache-dir", site.cache, "--connect-to", origin.connectTo, "--quiet"],
                                       stderr: .pipe)
        // Kill it as soon as it has stored something, while it is still downloading and encoding. A
        // thread of its own watches, so a busy cooperative pool cannot delay the kill past the build's end.
        let pid = process.pid
        let blobs = site.cache + "/blobs"
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                while (try? CacheMaintenance.blobFiles(BlobStore(root: blobs)).isEmpty) ?? true, kill(pid, 0) == 0 { usleep(5000) }
                kill(pid, SIGKILL)
                done.resume()
            }.start()
        }
        let errors = await drain(process.stderr)
        let ended = await process.termination()
        #expect(ended.signal == SIGKILL, "exited \(ended.status): \(String(decoding: errors, as: UTF8.self))")

        // Every page is either untouched or completely rewritten; the next build finishes the job.
        for n in 0..<6 {
            let page = try #require(site.folder.text("site/p\(n).html"))
            #expect(page.hasPrefix("<img src=\"http://images.test/") || page.hasPrefix("<picture"))
        }
        let again = try await runImgbake(["build", site.site, "--cache-dir", site.cache, "--connect-to", origin.connectTo])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try await runImgbake(["cache", "verify", "--cache-dir", site.cache]).status == 0)
        for n in 0..<6 { #expect(site.folder.text("site/p\(n).html")?.hasPrefix("<picture") == true) }
        #expect(site.folder.files(under: "site/_img").allSatisfy { !$0.hasPrefix(".") })
    }
}
