import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

@Suite struct DepfileTests {
    @Test func makeRunsImgbakeOnlyWhenSomethingItReadChanged() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("index.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=x>")
        site.page("about page.html", "<p>a file name with a space</p>")
        site.page("style.css", "p {}")
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/makefile/Makefile", toPath: site.folder.path + "/Makefile")
        let variables = ["IMGBAKE=\(Paths.binary)", "SITE=site", "OUT=public",
                         "IMGBAKE_FLAGS=--quiet --cache-dir \(site.cache) --connect-to \(origin.connectTo)"]
        let first = try await run(["make"] + variables, in: site.folder.path)
        #expect(first.status == 0, "\(first.stdout)")
        #expect(first.stdout.contains("imgbake build site --out public --depfile .imgbake.d"))
        let depfile = try #require(site.folder.text(".imgbake.d"))
        #expect(depfile.hasPrefix(".imgbake.d: \\\n"))
        #expect(depfile.contains("site/about\\ page.html") && depfile.contains("site/style.css") && depfile.contains("  site \\\n"))

        let second = try await run(["make"] + variables, in: site.folder.path)
        #expect(second.status == 0 && !second.stdout.contains("imgbake build"), "\(second.stdout)")
        #expect(second.stdout.contains("Nothing to be done") || second.stdout.contains("is up to date"))

        // Editing a page, or adding a file, makes make run imgbake again.
        try await Task.sleep(for: .milliseconds(1100)) // make compares times at one-second resolution on some systems
        site.page("index.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=\"edited\">")
        let third = try await run(["make"] + variables, in: site.folder.path)
        #expect(third.stdout.contains("imgbake build"))
        try await Task.sleep(for: .milliseconds(1100))
        site.page("new.html", "<p>new</p>")
        let fourth = try await run(["make"] + variables, in: site.folder.path)
        #expect(fourth.stdout.contains("imgbake build"))
        #expect(site.folder.exists("public/new.html"))
        let fifth = try await run(["make"] + variables, in: site.folder.path)
        #expect(!fifth.stdout.contains("imgbake build"))
    }

    @Test func escaping() {
        #expect(Depfile.escape("a b#c$d") == "a\\ b\\#c$$d")
        #expect(Depfile.join(".", "a.html") == "a.html" && Depfile.join("site/", "a.html") == "site/a.html" && Depfile.join("site", "") == "site")
    }
}

@Suite struct ReportTests {
    func build(_ path: String) async throws -> (TestSite, BuildResult, Origin) {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", """
        <img src="\(origin.url("img/hubble.jpg"))">
        <img src="\(origin.url("fault/404/gone.png"))">
        """)
        site.page("b.md", "![c](\(origin.url("img/coffee.png")))\n")
        var config = site.configuration(origin: origin)
        config.reportPath = site.folder.path + "/" + path
        let result = try await site.build(config)
        return (site, result, origin)
    }

    @Test func theJSONReportValidatesAgainstItsSchemaAndSaysWhatHappened() async throws {
        let (site, result, _) = try await build("report.json")
        let report = try #require(result.report)
        let validation = try await validateReport(report.json(), in: site.folder)
        #expect(validation.stdout.hasSuffix("valid\n"), "\(validation.stdout)")
        #expect(report.totals.images == 3 && report.totals.imagesDownloaded == 2 && report.totals.imagesFailed == 1)
        #expect(report.totals.references == 3 && report.totals.referencesLocalised == 2)
        #expect(report.totals.bytesBefore > report.totals.bytesAfter && report.totals.bytesAfter > 0)
        #expect(report.references.map(\.outcome) == [.downloaded, .failed, .downloaded])
        #expect(report.references[1].reason == "HTTP 404" && report.references[1].line == 2)
        #expect(report.hosts.count == 1 && report.hosts[0].requests == 3 && report.hosts[0].failures == 1)
        let hubble = try #require(report.images.first { $0.url.hasSuffix("hubble.jpg") })
        #expect(hubble.width == 1000 && hubble.bytesBefore == Paths.image("hubble.jpg").count)
        // Each file written once, WebP and JPEG: where the source's own bytes stand for two widths,
        // they are one file.
        let names = hubble.files.map(\.name)
        #expect(Set(names).count == names.count && Set(hubble.files.map(\.format)) == ["webp", "jpeg"], "\(names)")
        #expect(names.allSatisfy { FileManager.default.fileExists(atPath: site.out + "/_img/" + $0) }, "\(names)")
    }

    @Test func unchangedPagesAppearInTheNextReport() async throws {
        let (site, _, origin) = try await build("report.json")
        var config = site.configuration(origin: origin)
        config.reportPath = site.folder.path + "/again.json"
        let report = try #require(try await site.build(config).report)
        #expect(report.totals.pagesUnchanged == 1) // b.md; a.html has a failure, so it is read again
        #expect(report.references.filter { $0.outcome == .unchanged }.map(\.file) == ["b.md"])
    }

    @Test func theHTMLReportIsOnePageWithFailuresFirstAndThumbnails() async throws {
        let (site, _, origin) = try await build("unused.html")
        // Through the command line, which writes the file.
        let command = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", site.cache,
                                            "--connect-to", origin.connectTo, "--refresh", "--report", site.folder.path + "/report.html",
                                            "--report", site.folder.path + "/ci/report.json"])
        #expect(command.status == 0)
        // Asked for both (as the GitHub Action does): the JSON of the same build beside the page.
        let json = try JSONDecoder().decode(BuildReport.self, from: Data(try #require(site.folder.read("ci/report.json"))))
        #expect(json.imgbake == SystemInfo.displayVersion && json.images.count == 3 && json.totals.imagesFailed == 1)
        let html = try #require(site.folder.text("report.html"))
        let failures = try #require(html.range(of: "Failures and skipped references (1)"))
        let images = try #require(html.range(of: "<h2>Images (3)</h2>"))
        #expect(failures.lowerBound < images.lowerBound)
        #expect(html.components(separatedBy: "src=\"data:image/webp;base64,").count - 1 == 2)
        #expect(!html.contains("http://127.0.0.1") && !html.contains("<script"))
    }
}

@Suite struct CheckTests {
    @Test func checkWritesNothingAndFailsWhenAReferenceWouldStayRemote() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=x>")
        // Cold cache: the image would need the network.
        let cold = try await runImgbake(["build", site.site, "--check", "--cache-dir", site.cache, "--connect-to", origin.connectTo])
        #expect(cold.status == 1)
        #expect(cold.stderr.contains("a.html:1:11: error: http://images.test/img/coffee.png: not in the cache (--frozen: no network)"))
        #expect(cold.stderr.contains("imgbake: check failed: 1 problem(s), listed above"))
        #expect(site.folder.files(under: "site") == ["a.html"] && !site.folder.exists("site/_img"))
        #expect(try await origin.stats().requests_total == 0)

        // Warm cache: passes, still writes nothing, still no network.
        _ = try await site.build(origin: origin)
        let before = site.folder.digests(under: "site")
        try await origin.reset()
        let warm = try await runImgbake(["build", site.site, "--check", "--cache-dir", site.cache, "--connect-to", origin.connectTo, "--quiet"])
        #expect(warm.status == 0, "\(warm.stderr)")
        #expect(site.folder.digests(under: "site") == before)
        #expect(!site.folder.exists("site/_img"))
        #expect(try await origin.stats().requests_total == 0)
    }

    /// Each problem once: a page rewritten to `<picture>` whose `<img>` has no alt, beside a reference
    /// to a missing file, in place and through Markdown as HTML: the warning once, the failure once
    /// (as the error it is, not also as a warning).
    @Test func checkSaysEachProblemOnce() async throws {
        let site = TestSite()
        site.file("img/a.jpg", Paths.image("hubble.jpg"))
        site.page("p.html", "<!doctype html><title>t</title>\n<img src=\"/img/a.jpg\">\n<img src=\"/img/missing.jpg\" alt=\"m\">\n")
        site.page("m.md", "# M\n\n![](/img/a.jpg) and ![m](/img/missing.jpg)\n")
        site.folder.write("site/imgbake.toml", "[output]\nmarkdown = \"html\"\n" + TestSite.fixedQualityTOML)
        let built = try await runImgbake(["build", site.site, "--cache-dir", site.cache, "--quiet"])
        #expect(built.status == 0, "\(built.stderr)")
        #expect(site.folder.text("site/p.html")?.contains("<picture") == true && site.folder.text("site/m.md")?.contains("<picture") == true)
        let check = try await runImgbake(["build", site.site, "--check", "--cache-dir", site.cache, "--quiet"])
        #expect(check.status == 1)
        let lines = check.stderr.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("p.html") && $0.contains("without alt") }.count == 1, "\(check.stderr)")
        #expect(lines.filter { $0.contains("p.html") && $0.contains("missing.jpg") }.count == 1, "\(check.stderr)")
        #expect(lines.filter { $0.contains("m.md") && $0.contains("missing.jpg") }.count == 1, "\(check.stderr)")
        #expect(lines.filter { $0.contains("missing.jpg") }.allSatisfy { $0.contains(": error: ") }, "\(check.stderr)")
        #expect(lines.last == "imgbake: check failed: 2 problem(s), listed above")
    }
}

@Suite struct ProgressTests {
    @Test func withoutATerminalProgressIsPlainLinesOnStderr() async throws {
        // Answers come after 5.5 s, so the first plain line (at 5 s) shows both downloads under way.
        let origin = try Origin(latencyMilliseconds: 5500)
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=x><img src=\"\(origin.url("img/hubble.jpg"))\" alt=x>")
        let args = ["build", site.site, "--out", site.out, "--cache-dir", site.cache, "--connect-to", origin.connectTo]
        let shown = try await runImgbake(args)
        #expect(shown.stderr.contains("imgbake: 1/1 pages · 0/2 images · 2 downloading"), "\(shown.stderr)")
        #expect(!shown.stderr.contains("\u{1B}["))
        #expect(shown.stdout.contains("1 pages scanned"))

        try FileManager.default.removeItem(atPath: site.cache)
        let quiet = try await runImgbake(args + ["--quiet"])
        #expect(quiet.warnings.isEmpty && quiet.stdout.isEmpty)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/script")))
    func onATerminalItIsOneLiveLineThatIsClearedAtTheEnd() async throws {
        let origin = try Origin(latencyMilliseconds: 1200)
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=x>")
        // `script` runs imgbake on a pseudo-terminal and copies what it wrote.
        let command = [Paths.binary, "build", site.site, "--out", site.out, "--cache-dir", site.cache, "--connect-to", origin.connectTo]
        let result = try await run(["script", "-qec", command.joined(separator: " "), "/dev/null"], in: site.folder.path,
                                   environment: ["CI": "", "TERM": "xterm"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("\r\u{1B}[K1/1 pages · 0/1 images · 1 downloading"), "\(result.stdout.debugDescription)")
        #expect(!result.stdout.contains("imgbake: 1/1 pages")) // no plain lines on a terminal
        #expect(result.stdout.contains("\r\u{1B}[K1 pages scanned")) // cleared before the summary
    }

    @Test func theLineSaysWhatIsGoingOn() {
        var s = BuildProgress.Snapshot()
        s.pagesTotal = 400; s.pagesScanned = 120; s.pagesUnchanged = 200; s.imagesTotal = 100; s.imagesResolved = 35
        s.downloadsInFlight = 4; s.bytesDownloaded = 12_900_000
        #expect(s.line == "320/400 pages (200 unchanged) · 35/100 images · 4 downloading · 12.30 MB")
    }
}
