import Foundation
import Testing
@testable import ImgBake

/// The downloader's limits and headers, against the loopback origin.
@Suite struct DownloaderLimitTests {
    @Test func perHostConnectionsAreCapped() async throws {
        let origin = try Origin(latencyMilliseconds: 300)
        let site = TestSite()
        let names = ["hubble.jpg", "coffee.png", "astronaut.jpg", "astronaut-round.png", "deep-field.gif", "hubble-wide.jpg"]
        // Twelve distinct URLs on one host (the query makes them distinct downloads).
        site.page("a.html", (0..<12).map { "<img src=\"\(origin.url("img/\(names[$0 % 6])?n=\($0)"))\">" }.joined())
        var config = site.configuration(origin: origin)
        config.fetch.perHost = 3
        let started = ContinuousClock.now
        _ = try await site.build(config)
        let stats = try await origin.stats()
        #expect(stats.requests_total == 12)
        // Never more than the cap; at least two at once shows the cap is what limits (exactly three is
        // what an idle machine shows, but a loaded one may not start the third before the first ends).
        #expect((2...3).contains(stats.max_concurrent), "\(stats.max_concurrent)")
        #expect(ContinuousClock.now - started >= .milliseconds(1200)) // 12 × 300 ms / 3 at a time
    }

    @Test func theBodyCapStopsAChunkedResponseWithoutContentLength() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/huge/x.jpg"))\"><img src=\"\(origin.url("fault/nolength/coffee.png"))\">")
        var config = site.configuration(origin: origin)
        config.fetch.maxBytes = 10_000_000
        let result = try await site.build(config)
        #expect(result.diagnostics.map(\.message) == ["http://images.test/fault/huge/x.jpg: response larger than the 10000000-byte limit"])
        #expect(result.summary.imagesDownloaded == 1) // the chunked image under the cap is fine
    }

    @Test func theBodyCapUsesContentLengthWhenThereIsOne() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/hubble.jpg"))\">")
        var config = site.configuration(origin: origin)
        config.fetch.maxBytes = 100_000 // hubble.jpg is 144 KB
        let result = try await site.build(config)
        #expect(result.diagnostics.map(\.message) == ["http://images.test/img/hubble.jpg: response larger than the 100000-byte limit"])
        // Too large is permanent: remembered, so the next build does not ask again.
        try await origin.reset()
        _ = try await site.build(config)
        #expect(try await origin.stats().requests_total == 0)
    }

    @Test func atMostFiveRedirects() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/redirect/5/coffee.png"))\"><img src=\"\(origin.url("fault/redirect/6/hubble.jpg"))\">")
        let result = try await site.build(origin: origin)
        #expect(result.summary.imagesDownloaded == 1)
        #expect(result.diagnostics.map(\.message) == ["http://images.test/fault/redirect/6/hubble.jpg: more than 5 redirects"])
    }

    @Test func redirectsToOtherProtocolsAreRefused() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/location?to=file:///etc/passwd"))\">")
        let result = try await site.build(origin: origin)
        #expect(result.summary.imagesFailed == 1)
        #expect(result.diagnostics.first?.message.contains("Protocol \"file\" not supported") == true, "\(result.diagnostics)")
    }

    @Test func aSlowResponseTimesOutAndIsRetried() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/slow/3000/coffee.png"))\">")
        var config = site.configuration(origin: origin)
        config.fetch.timeout = .milliseconds(500)
        config.fetch.retries = 1
        let started = ContinuousClock.now
        let result = try await site.build(config)
        // Two attempts that each gave up after 0.5 s (the origin would answer after 3 s).
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(result.diagnostics.first?.message.contains("timed out") == true)
    }

    @Test func requestsNameImgbakeAcceptWhatItDecodesAndCarryPerHostHeaders() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        var config = site.configuration(origin: origin)
        config.fetch.headers = ["IMAGES.test": ["Authorization": "Bearer ${IMGBAKE_TEST_TOKEN}", "X-Static": "yes"],
                                "other.test": ["X-Other": "no"]]
        setenv("IMGBAKE_TEST_TOKEN", "s3cret", 1)
        let result = try await site.build(config)
        let headers = try #require(try await origin.stats().headers["/img/coffee.png"])
        #expect(headers["user-agent"] == "imgbake/\(SystemInfo.version) (static site image build step)")
        #expect(headers["accept"] == "image/avif,image/webp,image/png,image/jpeg,image/gif,image/svg+xml;q=0.8")
        #expect(headers["authorization"] == "Bearer s3cret")
        #expect(headers["x-static"] == "yes" && headers["x-other"] == nil)
        // The secret never appears in what imgbake prints.
        #expect(!result.diagnostics.description.contains("s3cret") && !result.summary.lines.joined().contains("s3cret"))
    }

    @Test func environmentExpansion() {
        #expect(EnvironmentExpansion.expand("a ${X} b ${MISSING}c ${", environment: ["X": "1"]) == "a 1 b c ${")
    }
}
