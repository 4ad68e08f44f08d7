import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The remote cache's layout marker and its neighbours: a store written by imgbake 0.1.0 (layout 1),
/// by a newer layout, or holding a `layout.json` that is not imgbake's; and a store that throttles.
@Suite(.hangGuard) struct RemoteLayoutTests {
    /// A build with no remote: what every build here must publish.
    static func reference(_ site: RemoteSite) async throws -> [String: String] {
        let run = try await site.build("reference", ["--no-remote"])
        #expect(run.result.status == 0)
        return site.output("reference")
    }

    @Test func aStoreOfLayout1IsIgnoredWithOneWarningAndLeftAsItIs() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let site = RemoteSite(origin: origin, images: ["coffee.png", "hubble.jpg"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        // What imgbake 0.1.0 would have left, except that its records lie: coffee.png's names hubble.jpg's
        // bytes and size. A build that read layout 1 would publish hubble in coffee's place.
        let hubble = Paths.image("hubble.jpg")
        let coffeeKey = origin.url("img/coffee.png"), hubbleKey = origin.url("img/hubble.jpg")
        let v1: [String: [UInt8]] = [
            "cas/" + BlobID(of: hubble).hex: hubble,
            "ac/v1/original/" + BlobID(of: Array(coffeeKey.utf8)).hex: Array("""
                {"blob":"\(BlobID(of: hubble).hex)","bytes":\(hubble.count),"fetchedAt":4102444800,"format":"jpeg","height":872,\
                "key":"\(coffeeKey)","pages":1,"url":"\(coffeeKey)","version":1,"width":1000}
                """.utf8),
            "ac/v1/original/" + BlobID(of: Array(hubbleKey.utf8)).hex: Array("""
                {"blob":"\(BlobID(of: hubble).hex)","bytes":\(hubble.count),"fetchedAt":4102444800,"format":"jpeg","height":872,\
                "key":"\(hubbleKey)","pages":1,"url":"\(hubbleKey)","version":1,"width":1000}
                """.utf8),
            "ac/v1/variant/" + String(repeating: "ab", count: 32): Array("{\"version\":1}".utf8),
        ]
        for (path, bytes) in v1 {
            try FileManager.default.createDirectory(atPath: dav.storage + "/" + (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: dav.storage + "/" + path, contents: Data(bytes)))
        }
        let expected = try await Self.reference(site)
        try await origin.reset()

        let first = try await site.build("a")
        #expect(first.result.status == 0)
        #expect(first.remoteWarnings.count == 1 && first.remoteWarnings[0].contains("holds objects of layout 1"), "\(first.result.stderr)")
        #expect(first.result.warnings.split(separator: "\n").count == 1, "\(first.result.stderr)")
        #expect(site.output("a") == expected, "nothing of layout 1 was used")
        #expect(try await origin.stats().requests_total == 2)
        for (path, bytes) in v1 { #expect(FileManager.default.contents(atPath: dav.storage + "/" + path) == Data(bytes), "\(path) untouched") }
        #expect(RemoteLayout.parse(Array(try #require(FileManager.default.contents(atPath: dav.storage + "/layout.json")))) == RemoteLayout(layouts: [2]))
        #expect(dav.requests().filter { $0.path.contains("/ac/") || $0.path.contains("/cas/") }.map(\.method) == ["HEAD"],
                "one look at layout 1, for the warning")

        // Layout 2 is there now: the next machine reads it, says nothing about layout 1, asks no origin.
        try await origin.reset()
        let second = try await site.build("b")
        #expect(second.result.status == 0 && second.result.warnings.isEmpty, "\(second.result.stderr)")
        #expect(site.output("b") == expected)
        #expect(try await origin.stats().requests_total == 0)
    }

    @Test func aStoreAlsoHoldingANewerLayoutIsUsedBesideItWithOneWarning() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let site = RemoteSite(origin: origin, images: ["coffee.png"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        dav.folder.write("root/cache/layout.json", "{\"layouts\":[3]}")
        dav.folder.write("root/cache/v3/packs/x", "a newer imgbake's")
        let expected = try await Self.reference(site)

        let first = try await site.build("a")
        #expect(first.result.status == 0 && first.remoteWarnings.count == 1, "\(first.result.stderr)")
        #expect(first.remoteWarnings.first?.contains("also holds layout 3") == true, "\(first.result.stderr)")
        #expect(site.output("a") == expected)
        #expect(RemoteLayout.parse(Array(try #require(FileManager.default.contents(atPath: dav.storage + "/layout.json"))))?.layouts == [2, 3])
        #expect(dav.objects().contains("v3/packs/x") && dav.objects().contains { $0.hasPrefix("v2/packs/") })

        try await origin.reset()
        let second = try await site.build("b")
        #expect(second.remoteWarnings.count == 1 && second.report?.remote?.hits == 1, "\(second.result.stderr)")
        #expect(site.output("b") == expected)
        #expect(try await origin.stats().requests_total == 0)
    }

    /// A machine whose cache no build has used asks for the marker while it scans the pages (every
    /// image will be a miss); a cache that has been used asks nothing until an image misses, even for
    /// a site with no image at all, whose cache never holds one.
    @Test func onlyAnUnusedCacheAsksForTheMarkerAhead() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let site = RemoteSite(origin: origin, images: [])
        site.site.page("plain.html", "<p>no images</p>")
        site.configure(cache: "remote = \"\(dav.url)\"")
        let first = try await site.build("a")
        #expect(first.result.status == 0 && first.remoteWarnings.isEmpty, "\(first.result.stderr)")
        // Asked ahead and absent, so this writable build wrote it; counted in the build's report.
        #expect(dav.requests().map { "\($0.method) \($0.status)" } == ["GET 404", "PUT 201"], "\(dav.requests())")
        #expect(first.report?.remote?.requests == 2)
        site.site.page("plain.html", "<p>still no images</p>")
        let second = try await site.build("a")
        #expect(second.result.status == 0 && second.report?.remote?.requests == 0)
        #expect(dav.requests().count == 2, "a used cache asked the remote: \(dav.requests())")
    }

    @Test func aLayoutMarkerThatIsNotImgbakesTurnsTheRemoteOff() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let site = RemoteSite(origin: origin, images: ["coffee.png", "hubble.jpg"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        dav.folder.write("root/cache/layout.json", "<html><body>It works!</body></html>")
        let expected = try await Self.reference(site)
        let run = try await site.build("a")
        #expect(run.result.status == 0 && site.output("a") == expected)
        #expect(run.remoteWarnings.count == 1 && run.remoteWarnings[0].contains("layout.json is not imgbake's"), "\(run.result.stderr)")
        #expect(dav.requests().map(\.method) == ["GET"], "the marker, and nothing more: \(dav.requests())")
    }

    @Test func throttlingIsAskedAgainWithBackoffOnS3AndWebDAV() async throws {
        let s3 = try await S3Server.shared()
        let dav = try await DAVServer()
        for (store, status) in [("s3", 503), ("dav", 429)] {
            let origin = try Origin()
            let proxy = try await StoreProxy(upstream: store == "s3" ? s3.endpoint : "http://127.0.0.1:\(dav.port)")
            let site = RemoteSite(origin: origin, images: ["coffee.png", "hubble.jpg", "drawing.svg"])
            if store == "s3" {
                site.configure(cache: s3.cacheTOML(prefix: "throttled-\(UUID().uuidString)").replacingOccurrences(of: s3.endpoint, with: proxy.url))
            } else {
                site.configure(cache: "remote = \"\(proxy.url)/cache\"")
            }
            try await proxy.throttle(next: 3, status: status, retryAfter: status == 429 ? 1 : nil)
            let first = try await site.build("a", environment: s3.environment)
            #expect(first.result.status == 0 && first.result.warnings.isEmpty, "\(store): \(first.result.stderr)")
            let written = try #require(first.report?.remote)
            #expect(written.retries == 3 && written.failures == 0, "\(store): \(written)")
            let stats = try await proxy.stats()
            #expect(stats.throttled == 3 && stats.requests == written.requests, "\(store): \(stats) \(written)")
            // Per image: one pack and a raster original's bytes; per build: the marker read and written, one look at layout 1.
            #expect(stats.requests - 3 == 2 + 1 + 2 * 2 + 1, "\(store): \(stats)")

            try await origin.reset()
            try await proxy.reset()
            let second = try await site.build("b", environment: s3.environment)
            #expect(second.result.status == 0 && second.result.warnings.isEmpty && site.output("b") == site.output("a"), "\(store): \(second.result.stderr)")
            #expect(try await origin.stats().requests_total == 0)
            #expect(try await proxy.stats().requests == 1 + 3, "\(store): the marker, then one pack per image")
        }
    }
}
