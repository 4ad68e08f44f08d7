import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// One way an origin can misbehave, and exactly what imgbake must say about it.
struct OriginFault: Sendable, CustomTestStringConvertible {
    var path: String
    /// The warning after `<url>: `; `*` stands for any text (timings, byte counts).
    var message: String
    /// Another acceptable warning, where the kernel decides which.
    var or: String? = nil
    /// Permanent failures are remembered (one failure row); the others leave no trace in the cache.
    var remembered = false
    /// Requests the origin sees (with `fetch.retries = 1`: transient failures are asked twice).
    var requests = 1
    var configure: @Sendable (inout Configuration) -> Void = { _ in }

    var testDescription: String { path }
    /// The last path segment, unique among the cases: what the origin's per-path counts are filtered by.
    var name: String { String(path.split(separator: "/").last!) }

    static let all: [OriginFault] = [
        OriginFault(path: "fault/404/gone-404.png", message: "HTTP 404", remembered: true),
        OriginFault(path: "fault/410/gone-410.png", message: "HTTP 410", remembered: true),
        OriginFault(path: "fault/500/broken.png", message: "HTTP 500", requests: 2),
        OriginFault(path: "fault/503/busy.png", message: "HTTP 503", requests: 2),
        // coffee.png is 155,777 bytes; the origin sends half and closes.
        OriginFault(path: "fault/truncate/coffee.png",
                    message: "transfer failed (curl 18: end of response with 77889 bytes missing)", requests: 2),
        OriginFault(path: "fault/html/page.png",
                    message: "not an image (Content-Type text/html, starts with \"<!doctype html><title>Oo…\")", remembered: true),
        OriginFault(path: "fault/htmlimg/page.jpg",
                    message: "not an image (Content-Type image/jpeg, starts with \"<!doctype html><title>Oo…\")", remembered: true),
        OriginFault(path: "fault/empty/nothing.jpg", message: "not an image (an empty response)", remembered: true),
        // 200 bytes a second, under the 1024 B/s low-speed limit (shortened to 1 s here; 15 s by default).
        OriginFault(path: "fault/drip/200/astronaut.jpg",
                    message: "timed out (Operation too slow. Less than 1024 bytes/sec transferred the last 1 seconds)",
                    requests: 2, configure: { $0.fetch.lowSpeedTime = .seconds(1) }),
        OriginFault(path: "fault/redirect/6/chain.png", message: "more than 5 redirects", requests: 6),
        OriginFault(path: "fault/redirect-loop/loop.png", message: "more than 5 redirects", requests: 6),
        // SO_LINGER 0: Linux reports the reset; gVisor's netstack, an empty reply. Either, exactly.
        OriginFault(path: "fault/reset/reset.png", message: "transfer failed (curl 52: Empty reply from server)",
                    or: "transfer failed (curl 56: Recv failure: Connection reset by peer)", requests: 2),
        // Accepts, reads the request, never answers: the transfer timeout ends it…
        OriginFault(path: "fault/hang/timeout.png", message: "timed out (Operation timed out after 10* milliseconds with 0 bytes received)",
                    requests: 2, configure: { $0.fetch.timeout = .seconds(1) }),
        // …and so does the low-speed limit on its own (0 bytes a second), well before the 30 s timeout.
        OriginFault(path: "fault/hang/lowspeed.png",
                    message: "timed out (Operation too slow. Less than 1024 bytes/sec transferred the last 1 seconds)",
                    requests: 2, configure: { $0.fetch.lowSpeedTime = .seconds(1) }),
        // Chunked, no Content-Length, 2 GB if nobody stops it.
        OriginFault(path: "fault/huge/endless.jpg", message: "response larger than the 10000000-byte limit", remembered: true,
                    configure: { $0.fetch.maxBytes = 10_000_000 }),
    ]
}

// Which limit ended a transfer is checked on curl's own message ("after 10… milliseconds", "the last 1
// seconds"), not on a clock; a fault that never ends is the suite's hang guard's to catch.

/// The origin faults of the fault suite: each ends with one precise warning, the
/// reference left exactly as written, and nothing in the cache but a failure row for permanent ones.
@Suite(.hangGuard) struct OriginFaultTests {
    /// One origin for all cases: each has a file name of its own, and its requests are counted by it.
    static let origin = Result { try Origin() }

    @Test(arguments: OriginFault.all)
    func aFaultyOriginLeavesTheReferenceAndTheCacheAlone(fault: OriginFault) async throws {
        let origin = try Self.origin.get()
        let site = TestSite()
        let url = origin.url(fault.path)
        let page = "<p>before</p>\n<img src=\"\(url)\" alt=\"x\">\n"
        site.page("a.html", page)
        var config = site.configuration(origin: origin)
        config.fetch.retries = 1
        fault.configure(&config)

        let result = try await site.build(config)

        #expect(result.exitCode == 0)
        let messages = result.diagnostics.map(\.message)
        let expected = [fault.message] + (fault.or.map { [$0] } ?? [])
        #expect(messages.count == 1 && expected.contains { matches(messages[0], "\(url): \($0)") }, "\(messages)")
        #expect(site.output("a.html") == page)
        #expect(site.folder.files(under: "out/_img").isEmpty)
        try expectNothingCached(site, failures: fault.remembered ? 1 : 0)
        let stats = try await origin.stats()
        let requests = stats.paths.filter { $0.key.split(separator: "/").last.map(String.init) == fault.name }.values.reduce(0, +)
        #expect(requests == fault.requests, "\(stats.paths)")
        if fault.path.hasPrefix("fault/huge/") {
            // Stopped at the cap, not at the 2 GB the origin would send (socket buffers and the other
            // cases' few hundred KB account for the rest).
            #expect(stats.bytes_sent < 40_000_000, "\(stats.bytes_sent) bytes sent")
        }
    }

    /// Not faults for imgbake: the format comes from the bytes, and five redirects are allowed.
    @Test func aWrongContentTypeAndFiveRedirectsStillGiveTheImage() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/wrongtype/coffee.png"))\"><img src=\"\(origin.url("fault/redirect/5/hubble.jpg"))\">")
        var config = site.configuration(origin: origin)
        config.images.widths = [64]
        let result = try await site.build(config)
        #expect(result.diagnostics.isEmpty && result.summary.imagesDownloaded == 2)
        let output = normalizingHashes(try #require(site.output("a.html")))
        #expect(output.contains("/_img/coffee-HASH-64.jpg") && output.contains("/_img/hubble-HASH-64.jpg"))
    }

    @Test func tlsWithABadCertificateIsRefusedAndNothingIsCached() async throws {
        let site = TestSite()
        // Self-signed for images.test (untrusted), and trusted but for another name.
        let selfSigned = try await HTTPSTests.certificate(in: site.folder, name: "images.test")
        let otherName = try await HTTPSTests.certificate(in: site.folder, name: "other.test")
        for (tls, caFile, expected) in [
            (selfSigned, nil as String?, "TLS failed (SSL certificate problem: self-signed certificate)"),
            (otherName, otherName.cert, "TLS failed (SSL: no alternative certificate subject name matches target hostname 'images.test')"),
        ] {
            let origin = try Origin(tls: tls)
            let url = "https://images.test/img/coffee.png"
            site.page("a.html", "<img src=\"\(url)\">")
            var config = site.configuration(origin: nil)
            config.fetch.connectTo = ["images.test:443:127.0.0.1:\(origin.port)"]
            config.fetch.caFile = caFile
            let result = try await site.build(config)
            #expect(result.diagnostics.map(\.message) == ["\(url): \(expected); a private CA can be trusted with --cacert"])
            #expect(site.output("a.html") == "<img src=\"\(url)\">")
            try expectNothingCached(site, failures: 0)
        }
    }
}

/// `*` in `pattern` matches any text; everything else literally.
func matches(_ text: String, _ pattern: String) -> Bool {
    let parts = pattern.split(separator: "*", omittingEmptySubsequences: false)
    guard parts.count > 1 else { return text == pattern }
    guard text.hasPrefix(parts.first!), text.hasSuffix(parts.last!) else { return false }
    var rest = text.dropFirst(parts.first!.count).dropLast(parts.last!.count)
    for part in parts.dropFirst().dropLast() {
        guard let range = rest.range(of: part) else { return false }
        rest = rest[range.upperBound...]
    }
    return true
}

/// No original or variant row and no blob file in the site's cache; `failures` failure rows.
func expectNothingCached(_ site: TestSite, failures: Int, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
    let cache = try ImageCache(directory: site.cache)
    #expect(try cache.index.entries().isEmpty, sourceLocation: sourceLocation)
    #expect(CacheMaintenance.blobFiles(cache.blobs).isEmpty, sourceLocation: sourceLocation)
    #expect(try cache.index.failureCount() == failures, sourceLocation: sourceLocation)
}
