import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The HTML report page, from `Templates/report.mustache`: byte for byte against a page reviewed by
/// eye (Fixtures/golden/report.html; `IMGBAKE_UPDATE_GOLDEN=1` rewrites it), and escaped wherever a value comes from a page or a server.
@Suite struct ReportHTMLTests {
    static func sample() -> BuildReport {
        var report = BuildReport(generatedAt: "2026-11-23T12:00:00Z", site: "site", output: "out", check: false, policy: "normal",
                                 seconds: 1.234, totals: .init(), hosts: [], images: [], references: [], diagnostics: [])
        report.imgbake = "0.0.0-test" // the golden page must not change with the version
        report.totals.pages = 3
        report.totals.pagesRewritten = 2
        report.totals.references = 4
        report.totals.referencesLocalised = 3
        report.totals.images = 2
        report.totals.imagesDownloaded = 1
        report.totals.imagesFailed = 1
        report.totals.requests = 2
        report.totals.bytesDownloaded = 150_000
        report.totals.bytesBefore = 150_000
        report.totals.bytesAfter = 40_000
        report.hosts = [.init(host: "https://images.test", requests: 2, bytes: 150_000, seconds: 0.25, failures: 1)]
        report.images = [
            .init(url: "https://images.test/a.jpg", key: "k1", outcome: .downloaded, reason: nil, format: "jpeg", width: 800,
                  height: 600, bytesBefore: 150_000, bytesAfter: 40_000,
                  files: [.init(name: "a-0123456789-480.webp", format: "webp", width: 480, height: 360, bytes: 20_000),
                          .init(name: "a-abcdef0123-800.jpg", format: "jpeg", width: 800, height: 600, bytes: 40_000)],
                  thumbnail: "data:image/webp;base64,AAAA"),
            .init(url: "https://images.test/<script>.png?a=1&b=2", key: "k2", outcome: .failed, reason: "HTTP 404 \"gone\"",
                  format: nil, width: nil, height: nil, bytesBefore: nil, bytesAfter: nil, files: [], thumbnail: nil),
        ]
        report.references = [
            .init(file: "p.html", line: 3, column: 10, kind: "img-src", url: "https://images.test/<script>.png?a=1&b=2",
                  outcome: .failed, reason: "HTTP 404 \"gone\"", image: 1),
        ]
        return report
    }

    @Test func thePageMatchesTheReviewedOne() throws {
        let html = ReportHTML.render(Self.sample())
        let path = Paths.fixtures + "/golden/report.html"
        if ProcessInfo.processInfo.environment["IMGBAKE_UPDATE_GOLDEN"] == "1" {
            FileManager.default.createFile(atPath: path, contents: Data(html.utf8))
        }
        let golden = try #require(FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) })
        #expect(html == golden)
    }

    @Test func valuesAreEscapedAndFailuresComeFirst() {
        let html = ReportHTML.render(Self.sample())
        #expect(!html.contains("<script>") && html.contains("&lt;script&gt;.png?a=1&amp;b=2"))
        let failed = html.range(of: "<span class=\"failed\">failed:")!, ok = html.range(of: "<span class=\"ok\">downloaded")!
        #expect(failed.lowerBound < ok.lowerBound)
        #expect(html.contains("Failures and skipped references (1)") && html.contains("<h2>Images (2)</h2>"))
        #expect(html.contains("<img src=\"data:image/webp;base64,AAAA\" alt=\"\">"))
    }

    @Test func anEmptyReportSaysEveryReferenceWasLocalised() {
        var report = Self.sample()
        report.references = []
        report.hosts = []
        let html = ReportHTML.render(report)
        #expect(html.contains("None: every reference was localised.") && !html.contains("<h2>Hosts</h2>"))
    }
}
