import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

/// The image manager's rules, each against the loopback origin: revalidation, coalescing, keys,
/// retries, failure memory, fetch policies, repairs.
@Suite struct ManagerTests {
    func page(_ origin: Origin, _ names: [String]) -> String {
        names.map { "<img src=\"\(origin.url($0))\">" }.joined(separator: "\n")
    }

    @Test func staleCopiesAreRevalidatedWithOne304EachAndFreshOnesCostNothing() async throws {
        let origin = try Origin(cacheControl: "max-age=3600")
        let site = TestSite()
        site.page("a.html", page(origin, ["img/hubble.jpg", "img/coffee.png", "img/astronaut.jpg"]))
        let clock = TestClock()
        let config = site.configuration(origin: origin)
        _ = try await site.build(config, clock: clock)
        let first = site.output("a.html")
        try await origin.reset()

        clock.advance(hours: 0.5) // within max-age: the page is not even read again
        let fresh = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 0)
        #expect(fresh.summary.pagesUnchanged == 1 && fresh.summary.pagesScanned == 0)

        clock.advance(hours: 1) // past max-age: one conditional request each, answered 304
        let stale = try await site.build(config, clock: clock)
        let stats = try await origin.stats()
        #expect(stats.requests_total == 3 && stats.not_modified == 3)
        #expect(stale.summary.imagesRevalidated == 3 && stale.summary.variantsEncoded == 0)
        #expect(stats.headers["/img/hubble.jpg"]?["if-none-match"] != nil)
        #expect(site.output("a.html") == first)
        try await origin.reset()

        clock.advance(hours: 0.5) // the 304 made them fresh again
        _ = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 0)
    }

    @Test func withoutCacheControlTheConfiguredTTLDecides() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["img/coffee.png"]))
        let clock = TestClock()
        var config = site.configuration(origin: origin)
        config.fetch.ttl = .seconds(24 * 3600)
        _ = try await site.build(config, clock: clock)
        try await origin.reset()
        clock.advance(hours: 23)
        _ = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 0)
        clock.advance(hours: 2)
        _ = try await site.build(config, clock: clock)
        #expect(try await origin.stats().not_modified == 1)
    }

    @Test func refreshRevalidatesEverythingAndAChangedImageGetsNewFiles() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["img/hubble.jpg", "img/coffee.png"]))
        var config = site.configuration(origin: origin)
        _ = try await site.build(config)
        let before = try #require(site.output("a.html"))
        try await origin.reset()
        try await origin.swap("coffee.png", to: "astronaut-round.png")

        config.fetch.policy = .refresh
        let result = try await site.build(config)
        let stats = try await origin.stats()
        #expect(stats.requests_total == 2 && stats.not_modified == 1)
        #expect(result.summary.imagesRevalidated == 1 && result.summary.imagesDownloaded == 1)
        let after = try #require(site.output("a.html"))
        #expect(after.contains("/_img/coffee-") && !after.contains("coffee-HASH"))
        // coffee.png is opaque (its fallback a JPEG, smaller); astronaut-round.png has transparency.
        let oldCoffee = before.firstMatch(of: /coffee-[0-9a-f]{10}-\d+\.jpg/)!.output
        let newCoffee = after.firstMatch(of: /coffee-[0-9a-f]{10}-\d+\.png/)!.output
        #expect(oldCoffee != newCoffee)
        #expect(newCoffee.hasSuffix("-256.png")) // the new upstream image is 256 px wide
        #expect(before.firstMatch(of: /hubble-[0-9a-f]{10}-1000\.jpg/)!.output == after.firstMatch(of: /hubble-[0-9a-f]{10}-1000\.jpg/)!.output)
    }

    @Test func oneTransferPerKeyHoweverManyPagesWaitOnASlowOrigin() async throws {
        let origin = try Origin(latencyMilliseconds: 400)
        let site = TestSite()
        for n in 0..<50 { site.page("p\(n).html", page(origin, ["img/hubble.jpg", "img/coffee.png"])) }
        let result = try await site.build(origin: origin)
        let stats = try await origin.stats()
        #expect(stats.requests_total == 2)
        #expect(result.summary.pagesWritten == 50)

        // The manager itself: 50 concurrent callers, one load.
        let (manager, downloads, transforms) = try makeCountingManager(origin: origin, cache: site.folder.path + "/cache2")
        let url = try #require(RemoteURL.resolve(origin.url("img/astronaut.jpg")))
        try await origin.reset()
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { if case .resolved = await manager.resolve(.remote(url)) { true } else { false } } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 50 && results.allSatisfy { $0 })
        #expect(downloads.total == 1)
        #expect(transforms.transforms == 1, "fifty callers, one decode")
        #expect(try await origin.stats().requests_total == 1)
    }

    @Test func urlsDifferingOnlyInIgnoredParametersAreOneDownload() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["img/coffee.png?utm_source=a", "img/coffee.png?utm_source=b&fbclid=x",
                                          "img/coffee.png", "img/hubble.jpg?v=1", "img/hubble.jpg?v=2&gclid=y"]))
        let result = try await site.build(origin: origin)
        let stats = try await origin.stats()
        #expect(stats.requests_total == 3)
        #expect(Set(stats.paths.keys) == ["/img/coffee.png", "/img/hubble.jpg?v=1", "/img/hubble.jpg?v=2&gclid=y"])
        #expect(result.summary.uniqueImages == 3)
        #expect(result.summary.referencesLocalised == 5)
    }

    @Test func a503IsRetriedUntilItSucceeds() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["fault/flaky/2/coffee.png"]))
        let result = try await site.build(origin: origin)
        #expect(try await origin.stats().by_status == ["503": 2, "200": 1])
        #expect(result.summary.imagesDownloaded == 1 && result.diagnostics.isEmpty)
    }

    @Test func retryAfterIsHonoured() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["fault/ratelimit/1/coffee.png"]))
        let started = ContinuousClock.now
        let result = try await site.build(origin: origin)
        #expect(ContinuousClock.now - started >= .seconds(1)) // Retry-After: 1, not the 50 ms backoff
        #expect(try await origin.stats().by_status == ["429": 1, "200": 1])
        #expect(result.summary.imagesDownloaded == 1)
    }

    @Test func aRetryAfterBeyondTheBoundGivesUp() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["fault/ratelimit/1/coffee.png"]))
        var config = site.configuration(origin: origin)
        config.fetch.maxRetryAfter = .milliseconds(500)
        let result = try await site.build(config)
        #expect(try await origin.stats().requests_total == 1)
        #expect(result.diagnostics.first?.message.hasSuffix("HTTP 429; the server asked to wait longer than 0.5 seconds") == true)
    }

    @Test func a404IsNotRetriedAndIsRememberedUntilRetryFailedOrExpiry() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["fault/404/gone.png"]))
        let clock = TestClock()
        var config = site.configuration(origin: origin)
        _ = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 1)

        clock.advance(hours: 2)
        let remembered = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 1)
        #expect(remembered.diagnostics.map(\.message) == ["http://images.test/fault/404/gone.png: failed before (HTTP 404, 2 h ago); use --retry-failed"])

        config.fetch.retryFailed = true
        _ = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 2)

        config.fetch.retryFailed = false
        clock.advance(hours: 25) // past failure_ttl (24 h)
        _ = try await site.build(config, clock: clock)
        #expect(try await origin.stats().requests_total == 3)
    }

    @Test func transientFailuresAreNeverRemembered() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["fault/503/always.png"]))
        var config = site.configuration(origin: origin)
        config.fetch.retries = 1
        let first = try await site.build(config)
        #expect(try await origin.stats().requests_total == 2)
        #expect(first.diagnostics.map(\.message) == ["http://images.test/fault/503/always.png: HTTP 503"])
        _ = try await site.build(config)
        #expect(try await origin.stats().requests_total == 4)
    }

    @Test func aStaleCopyIsUsedWithAWarningWhenRevalidationFailsTransiently() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        let clock = TestClock()
        var config = site.configuration(origin: origin)
        config.fetch.retries = 0
        _ = try await site.build(config, clock: clock)
        // A week later the origin is unreachable: a transient failure, so the stale copy serves.
        config.fetch.connectTo = ["images.test:80:127.0.0.1:9"]
        config.fetch.allowPrivateNetworks = true
        clock.advance(hours: 24 * 8)
        try FileManager.default.removeItem(atPath: site.out)
        let result = try await site.build(config, clock: clock)
        #expect(result.summary.imagesStale == 1)
        #expect(result.diagnostics.count == 1)
        #expect(result.diagnostics.first?.message.contains("revalidation failed (could not connect") == true)
        #expect(result.diagnostics.first?.message.hasSuffix("using the cached copy") == true)
        #expect(site.output("a.html")?.contains("/_img/coffee-") == true)
    }

    @Test func offlineAndFrozenUseAWarmCacheWithoutNetwork() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["img/coffee.png", "img/hubble.jpg"]))
        var config = site.configuration(origin: origin)
        _ = try await site.build(config)
        let online = try #require(site.output("a.html"))
        try await origin.reset()
        for policy in [FetchPolicy.offline, .frozen] {
            config.fetch.policy = policy
            // A new output folder and a page no build has seen, so that its images are resolved (the
            // same page would be written as the first build made it, without resolving anything).
            site.page("a.html", page(origin, ["img/coffee.png", "img/hubble.jpg"]) + "\n<!-- \(policy) -->")
            config.outputDirectory = site.folder.path + "/out-\(policy)"
            let result = try await site.build(config)
            #expect(result.exitCode == 0 && result.missing.isEmpty && result.summary.imagesCached == 2)
            #expect(site.folder.text("out-\(policy)/a.html") == online + "\n<!-- \(policy) -->")
        }
        #expect(try await origin.stats().requests_total == 0)
    }

    /// The narrower widths of an image are resized from one decode at its widest width (the anchor,
    /// part of their key): a new widest width makes that image's variants again; an image whose widest
    /// width stays (coffee, narrower than every width) makes nothing. The originals come from the cache.
    @Test func changingWidthsEncodesWhatTheNewWidestChangesAndReusesTheOriginals() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["img/hubble-wide.jpg", "img/hubble.jpg", "img/coffee.png"]))
        var config = site.configuration(origin: origin)
        config.images.widths = [480, 960]
        let first = try await site.build(config)
        // WebP at each width and one JPEG (at 960) each; coffee is 300 px: one width, WebP, and its
        // fallback as JPEG and as PNG (the smaller kept).
        #expect(first.summary.variantsEncoded == 3 + 3 + 3)
        try await origin.reset()

        config.images.widths = [480, 960, 1200]
        let second = try await site.build(config)
        #expect(try await origin.stats().requests_total == 0)
        // hubble-wide gets 1200 and hubble 1000 (its own width), each the widest, so each makes its
        // three WebP widths and its one JPEG again; coffee nothing new.
        #expect(second.summary.variantsEncoded == 4 + 4)

        config.images.quality.webp = 60
        let third = try await site.build(config)
        #expect(third.summary.variantsEncoded == 3 + 3 + 1) // only the WebP variants
    }

    @Test func aCorruptVariantIsRepairedAndACorruptOriginalIsFetchedAgain() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", page(origin, ["img/hubble.jpg"]))
        var config = site.configuration(origin: origin)
        _ = try await site.build(config)
        let cache = try ImageCache(directory: site.cache)
        let files = CacheMaintenance.blobFiles(cache.blobs)
        // Damage every blob: the original and all six variants.
        for (blob, _) in files {
            var bytes = [UInt8](FileManager.default.contents(atPath: cache.blobs.path(of: blob))!)
            bytes[bytes.count / 2] ^= 0xFF
            FileManager.default.createFile(atPath: cache.blobs.path(of: blob), contents: Data(bytes))
        }
        try FileManager.default.removeItem(atPath: site.out)
        try await origin.reset()
        let repaired = try await site.build(config)
        #expect(repaired.exitCode == 0)
        #expect(repaired.diagnostics.contains { $0.message.contains("did not match its hash") })
        // The original was corrupt too, so it was downloaded again.
        #expect(try await origin.stats().requests_total == 1)
        for file in site.folder.files(under: "out/_img") {
            let bytes = try #require(site.folder.read("out/_img/" + file))
            #expect(file.contains(BlobID(of: bytes).hex.prefix(10)), "\(file) holds the bytes its name says")
            _ = try VipsImage.open(ImageBuffer(bytes)).materialized()
        }
        config.outputDirectory = site.folder.path + "/out2"
        _ = try await site.build(config)
        let verified = try CacheMaintenance.verify(try ImageCache(directory: site.cache))
        #expect(verified.isClean, "\(verified)")
    }

    @Test func anSVGIsCopiedThroughUnmodified() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/drawing.svg"))\" alt=\"\">")
        _ = try await site.build(origin: origin)
        let files = site.folder.files(under: "out/_img")
        #expect(files.count == 1 && files[0].hasPrefix("drawing-") && files[0].hasSuffix("-240.svg"))
        #expect(site.folder.read("out/_img/" + files[0]) == Paths.image("drawing.svg"))
        #expect(site.output("a.html") == "<img src=\"/_img/\(files[0])\" alt=\"\">")
    }

    @Test func theMemoryLayerStaysWithinItsCostLimit() async throws {
        var memory = MemoryCache<Int, String>(costLimit: 2000)
        for n in 0..<100 { memory.set("\(n)", for: n, cost: 300) }
        #expect(memory.totalCost <= 2000 && memory.count < 100 && memory.value(for: 99) == "99" && memory.value(for: 0) == nil)
    }

    /// The manager remembers nothing of a resolution once it ended (the build's demand does): an image
    /// resolved again finds its variants in the index, without a request, an encode or a decode.
    @Test func anImageResolvedAgainComesFromTheIndex() async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let (manager, downloads, transforms) = try makeCountingManager(origin: origin, cache: folder.path)
        for name in Paths.exampleImages { _ = await manager.resolve(.remote(RemoteURL.resolve(origin.url("img/" + name))!)) }
        try await origin.reset()
        guard case .resolved(let image, _) = await manager.resolve(.remote(RemoteURL.resolve(origin.url("img/hubble.jpg"))!)) else {
            Issue.record("not resolved"); return
        }
        #expect(image.encoded == 0 && image.variants.count == 6)
        #expect(try await origin.stats().requests_total == 0)
        #expect(downloads.total == Paths.exampleImages.count)
        #expect(transforms.transforms == Paths.exampleImages.count, "nothing decoded again")
    }

    /// The shared cache is asked after the local one misses, and told what the build made: with one
    /// that has nothing (`EmptyRemote`), every image is downloaded and noted for upload, once.
    @Test func aRemoteThatHasNothingIsToldWhatTheBuildMade() async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        var fetch = FetchSettings()
        fetch.connectTo = [origin.connectTo]
        let remote = EmptyRemote()
        let manager = ImageManager(cache: try ImageCache(directory: folder.path), downloader: Downloader(settings: fetch),
                                   transformer: try Transformer(threads: 2, maxPixels: 100_000_000),
                                   images: { var images = ImageSettings(); images.quality = .fixedForTests; return images }(),
                                   fetch: fetch, remote: remote)
        let url = try #require(RemoteURL.resolve(origin.url("img/hubble.jpg")))
        for _ in 0..<3 { _ = await manager.resolve(.remote(url)) }
        // Each resolution says the image is done (the remote schedules one upload of a pack, however
        // often: RemoteCacheTests); what was made is noted once.
        #expect(remote.notes.originals == 1 && remote.notes.variants > 0 && remote.notes.done == 3, "\(remote.notes)")
        #expect(try await origin.stats().requests_total == 1)
    }

    /// An image resolved twice in a build (a page asking later for more than the first resolution
    /// made: a Markdown page's one file, then a page's `<picture>`) counts the variants of both
    /// resolutions, not only those of the last, which made only what was missing.
    @Test func variantsEncodedCountsEveryResolutionOfAnImage() async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let (manager, _, transforms) = try makeCountingManager(origin: origin, cache: folder.path)
        let demand = ImageDemand(manager: manager, limit: 2, shard: nil)
        let source = ImageSource.remote(try #require(RemoteURL.resolve(origin.url("img/hubble.jpg"))))
        let full = VariantRequest(widths: [60, 200], formats: [.webp, .original])
        var encoded: [Int] = []
        for request in [full.widestFallback, full] {
            let (_, _, waiting) = await demand.ask([(source, request)])
            for image in waiting {
                guard case .resolved(let resolved, _)? = await demand.resolution(of: image) else {
                    Issue.record("not resolved")
                    return
                }
                encoded.append(resolved.encoded)
            }
        }
        #expect(encoded.count == 2 && encoded.allSatisfy { $0 > 0 } && transforms.transforms == 2, "\(encoded)")
        var summary = BuildSummary()
        summary.count(await demand.resolvedSet())
        #expect(summary.variantsEncoded == encoded.reduce(0, +), "\(summary.variantsEncoded) reported for \(encoded)")
        #expect(summary.uniqueImages == 1 && summary.imagesDownloaded == 1)
    }

    /// A page that finds its image's cached files damaged has it resolved again with what it asks for:
    /// the repair another page asked first, for fewer widths, does not stand for it.
    @Test func aRepairCoversWhatThePageAsks() async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let (manager, _, _) = try makeCountingManager(origin: origin, cache: folder.path)
        let demand = ImageDemand(manager: manager, limit: 2, shard: nil)
        let source = ImageSource.remote(try #require(RemoteURL.resolve(origin.url("img/hubble.jpg"))))
        let narrow = VariantRequest(widths: [200], formats: [.webp, .original])
        let (keys, _, waiting) = await demand.ask([(source, narrow)])
        let key = try #require(keys[source])
        for image in waiting { _ = await demand.resolution(of: image) }
        _ = await demand.repair(ImageDemand.Wanted(key: key, source: source, request: narrow))
        let wide = ImageDemand.Wanted(key: key, source: source, request: narrow.union(VariantRequest(widths: [60], formats: [.webp])))
        guard case .resolved(let image, _)? = await demand.repair(wide) else {
            Issue.record("not resolved")
            return
        }
        #expect(Set(image.variants.map(\.spec.width)) == [60, 200], "\(image.variants.map(\.spec.width))")
    }
}
