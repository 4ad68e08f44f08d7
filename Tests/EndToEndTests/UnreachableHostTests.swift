import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// A host that cannot be reached is asked once per build: after its name fails to resolve, or its
/// connection is refused, its other images fail at once with the same reason, without retries. Names
/// that did not resolve are remembered for `fetch.unresolvable_ttl`, so the next builds ask nothing;
/// `--retry-failed` and `--refresh` ask again. The summary and the report count the images and hosts.
@Suite struct UnreachableHostTests {
    /// Images on a name that never resolves (`.invalid`, RFC 6761), on a host whose connections are
    /// refused (port 1 of loopback), and two from the origin.
    static func site(_ origin: Origin) -> (TestSite, Configuration) {
        let site = TestSite()
        let unresolvable = (1...5).map { "<img src=\"http://images.invalid/img/\($0).jpg\" alt=\"\">" }
        let refused = (1...4).map { "<img src=\"http://refused.test/img/\($0).jpg\" alt=\"\">" }
        let good = ["coffee.png", "astronaut.jpg"].map { "<img src=\"\(origin.url("img/" + $0))\" alt=\"\">" }
        site.page("a.html", (unresolvable + refused + good).joined(separator: "\n"))
        var config = site.configuration(origin: origin)
        config.fetch.connectTo.append("refused.test:80:127.0.0.1:1")
        config.fetch.retries = 3
        config.images.widths = [64]
        config.reportPath = site.folder.path + "/report.json"
        return (site, config)
    }

    static func report(_ site: TestSite) throws -> BuildReport {
        try JSONDecoder().decode(BuildReport.self, from: try #require(FileManager.default.contents(atPath: site.folder.path + "/report.json")))
    }

    @Test func anUnreachableHostIsAskedOnceAndAnUnresolvedNameIsRemembered() async throws {
        let origin = try Origin()
        let (site, base) = Self.site(origin)
        let clock = TestClock()

        let first = try await site.build(base, clock: clock)
        #expect(first.summary.imagesDownloaded == 2 && first.summary.imagesFailed == 9)
        #expect(first.summary.imagesUnreachable == 9 && first.summary.unreachableHosts == 2)
        #expect(first.summary.lines.contains { $0.hasSuffix(", 9 failed (9 images on 2 unreachable hosts)") }, "\(first.summary.lines)")
        // One request per unreachable host (no retry: `fetch.retries` is 3), and each of its images fails
        // with the one reason.
        let report = try Self.report(site)
        let hosts = Dictionary(uniqueKeysWithValues: report.hosts.map { ($0.host, $0) })
        #expect(hosts["http://images.invalid"]?.requests == 1 && hosts["http://refused.test"]?.requests == 1, "\(report.hosts)")
        let dns = try #require(hosts["http://images.invalid"]?.unreachable)
        let refused = try #require(hosts["http://refused.test"]?.unreachable)
        #expect(dns.hasPrefix("could not resolve the host") && refused.hasPrefix("could not connect"), "\(dns) / \(refused)")
        #expect(hosts["http://images.test"]?.unreachable == nil)
        #expect(report.totals.imagesUnreachable == 9 && report.totals.unreachableHosts == 2)
        let reasons = Dictionary(grouping: first.diagnostics.map(\.message)) { $0.contains("images.invalid") ? "dns" : $0.contains("refused.test") ? "refused" : "other" }
        #expect(reasons["dns"]?.count == 5 && reasons["dns"]!.allSatisfy { $0.hasSuffix(": " + dns) }, "\(reasons)")
        #expect(reasons["refused"]?.count == 4 && reasons["refused"]!.allSatisfy { $0.hasSuffix(": " + refused) }, "\(reasons)")
        #expect(reasons["other"] == nil)
        #expect(try await validateReport(try Data(contentsOf: URL(fileURLWithPath: site.folder.path + "/report.json")), in: site.folder).stdout
                    .contains("valid"))

        // A minute later: the name is remembered, and asked nothing; the refused host is asked again
        // (a dev server may be starting). Nothing else is asked: the origin's images are cached.
        clock.advance(hours: 1.0 / 60)
        _ = try await site.build(base, clock: clock)
        let again = Dictionary(uniqueKeysWithValues: try Self.report(site).hosts.map { ($0.host, $0) })
        #expect(again["http://images.invalid"]?.requests == 0 && again["http://refused.test"]?.requests == 1, "\(again)")
        #expect(again["http://images.invalid"]?.unreachable?.contains("1 s ago") == false)
        #expect(again["http://images.invalid"]?.unreachable?.hasSuffix("60 s ago; --retry-failed asks again") == true, "\(again)")

        // --retry-failed asks again, and so does a build after the memory's time.
        var retry = base
        retry.fetch.retryFailed = true
        _ = try await site.build(retry, clock: clock)
        #expect(try Self.report(site).hosts.first { $0.host == "http://images.invalid" }?.requests == 1)
        clock.advance(hours: 0.5)
        _ = try await site.build(base, clock: clock)
        #expect(try Self.report(site).hosts.first { $0.host == "http://images.invalid" }?.requests == 1)
        // Remembered for the default five minutes only: within them, nothing again.
        clock.advance(hours: 4.0 / 60)
        _ = try await site.build(base, clock: clock)
        #expect(try Self.report(site).hosts.first { $0.host == "http://images.invalid" }?.requests == 0)
    }

    /// Answers that may change are still retried: a 503 is asked again, and its host's other images
    /// are not held back by it.
    @Test func answersThatMayChangeAreStillRetried() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/503/busy.png"))\" alt=\"\"><img src=\"\(origin.url("img/coffee.png"))\" alt=\"\">")
        var config = site.configuration(origin: origin)
        config.fetch.retries = 2
        config.images.widths = [64]
        let result = try await site.build(config)
        #expect(result.summary.imagesDownloaded == 1 && result.summary.imagesFailed == 1 && result.summary.imagesUnreachable == 0)
        let stats = try await origin.stats()
        #expect(stats.paths.filter { $0.key.hasSuffix("busy.png") }.values.reduce(0, +) == 3, "\(stats.paths)")
    }
}
