import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport
import Vips

/// The real `imgbake` binary: exit codes, where output goes, `scan --json`.
@Suite struct CommandLineTests {
    @Test func scanJSONListsEveryReferenceWithItsPlace() async throws {
        let site = TestSite()
        site.page("index.html", "<p>\n  <img src=\"https://a.test/x.jpg\" srcset=\"https://a.test/y.jpg 2x\"></p>")
        site.page("posts/p.md", "![a](https://a.test/z.png)\n")
        let result = try await runImgbake(["scan", site.site, "--json"])
        #expect(result.status == 0)
        struct Entry: Decodable, Equatable { let file: String; let line: Int; let column: Int; let kind: String; let url: String }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(result.stdout.utf8))
        #expect(entries == [
            Entry(file: "index.html", line: 2, column: 13, kind: "img-src", url: "https://a.test/x.jpg"),
            Entry(file: "index.html", line: 2, column: 43, kind: "img-srcset", url: "https://a.test/y.jpg"),
            Entry(file: "posts/p.md", line: 1, column: 6, kind: "markdown-image", url: "https://a.test/z.png"),
        ])
    }

    @Test func buildPrintsWarningsOnStderrAndTheSummaryOnStdout() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=x><img src=\"\(origin.url("fault/404/x.png"))\" alt=x>")
        let result = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", site.cache, "--connect-to", origin.connectTo])
        #expect(result.status == 0)
        #expect(result.warnings == "a.html:1:62: warning: http://images.test/fault/404/x.png: HTTP 404\n")
        #expect(result.stdout.contains("1 pages scanned, 1 rewritten; 1 of 2 image references localised"))
    }

    /// Short relative paths as people type them: Foundation's path methods trapped on one-character
    /// names (`--out o`), so the first build crashed; the report, written twice, has its temporary file
    /// beside it, not at the file system's root.
    @Test func shortRelativePathsWork() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=x>")
        for _ in 0..<2 {
            let result = try await runImgbake(["build", "site", "--out", "o", "--cache-dir", "c", "--report", "r.json", "--depfile", "d",
                                               "--connect-to", origin.connectTo, "--quiet"], in: site.folder.path)
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(site.folder.exists("o/a.html") && site.folder.exists("r.json") && site.folder.exists("d") && site.folder.exists("c/index.sqlite3"))
        #expect(PathName.parent("o") == "" && PathName.parent("x/") == "" && PathName.parent("/o") == "/" && PathName.parent("a//b/") == "a")
        #expect(PathName.name("o") == "o" && PathName.name("a/b/") == "b" && PathName.name("/") == "/" && PathName.parent("./o") == ".")
    }

    @Test func strictTurnsImageFailuresIntoExitStatusOne() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("fault/404/x.png"))\" alt=x>")
        let result = try await runImgbake(["build", site.site, "--cache-dir", site.cache, "--connect-to", origin.connectTo, "--strict", "--quiet"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        // What fails the build is an error; the same failure without --strict is a warning.
        #expect(result.warnings == "a.html:1:11: error: http://images.test/fault/404/x.png: HTTP 404\n")
        let lenient = try await runImgbake(["build", site.site, "--cache-dir", site.cache, "--connect-to", origin.connectTo,
                                            "--retry-failed", "--quiet"])
        #expect(lenient.status == 0)
        #expect(lenient.warnings == "a.html:1:11: warning: http://images.test/fault/404/x.png: HTTP 404\n")
    }

    /// A social card without `output.base_url` stays as it is: a warning in a build that exits 0 (it was
    /// an error there), and with `--strict` an error that fails the build; the report says the same.
    @Test func severityMatchesTheOutcome() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("index.html", "<html><head><meta property=\"og:image\" content=\"\(origin.url("img/coffee.png"))\"></head></html>")
        let message = "index.html:1:48: %@: http://images.test/img/coffee.png: meta needs an absolute URL: set output.base_url (the URL the site is served at); left as it is\n"
        for (strict, severity, status) in [(false, "warning", Int32(0)), (true, "error", Int32(1))] {
            let report = site.folder.path + "/r\(strict).json"
            let result = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", site.cache, "--connect-to", origin.connectTo,
                                               "--report", report, "--quiet"] + (strict ? ["--strict"] : []))
            #expect(result.status == status)
            #expect(result.warnings == message.replacingOccurrences(of: "%@", with: severity))
            let json = try #require(FileManager.default.contents(atPath: report))
            let diagnostics = try #require((try JSONSerialization.jsonObject(with: json) as? [String: Any])?["diagnostics"] as? [[String: Any]])
            #expect(diagnostics.map { $0["severity"] as? String } == [severity])
            #expect(try await validateReport(json, in: site.folder).stdout.contains("valid"))
        }
    }

    @Test func offlineMissesAreWarningsAndFrozenMissesFailTheBuild() async throws {
        let site = TestSite()
        site.page("a.html", "<img src=\"https://nowhere.test/a.png\"><img src=\"https://nowhere.test/b.png\">")
        let offline = try await runImgbake(["build", site.site, "--cache-dir", site.cache, "--offline"])
        #expect(offline.status == 0)
        #expect(offline.stderr.contains("a.html:1:11: warning: https://nowhere.test/a.png: not in the cache (--offline: no network)"))
        let frozen = try await runImgbake(["build", site.site, "--cache-dir", site.cache, "--frozen"])
        #expect(frozen.status == 1)
        #expect(frozen.stderr.contains("imgbake: error: --frozen: 2 image(s) not in the cache:\n  https://nowhere.test/a.png\n  https://nowhere.test/b.png\n"))
        #expect(site.folder.text("site/a.html") == "<img src=\"https://nowhere.test/a.png\"><img src=\"https://nowhere.test/b.png\">")
    }

    @Test(arguments: [
        ["build", "--no-such-flag"],
        ["build", "--offline", "--frozen"],
        ["build", "--jobs", "0"],
        ["build", "--connect-to", "nonsense"],
        ["build", "--report", "a.json", "--report", "b.json"],
        ["build", "/does/not/exist"],
        ["scan", "/does/not/exist"],
        ["frobnicate"],
    ])
    func usageErrorsExitWithTwo(arguments: [String]) async throws {
        let result = try await runImgbake(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(!result.warnings.isEmpty)
    }

    @Test func helpAndVersionExitZero() async throws {
        #expect(try await runImgbake(["--help"]).status == 0)
        let version = try await runImgbake(["--version"])
        #expect(version.status == 0 && version.stderr.isEmpty)
        let lines = version.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("imgbake \(SystemInfo.displayVersion) (") == true, "\(lines)")
        // Each library's version, read from the library: the ones linked here can write WebP, AVIF and JPEG XL.
        #expect(lines.dropFirst().map { $0.split(separator: " ").first.map(String.init) ?? "" }
                == ["libvips", "with", "libjxl", "libcurl", "SQLite", "cmark-gfm", "gumbo", "libexif"])
        #expect(lines.contains { $0.wholeMatch(of: #/libjxl 0\.\d+\.\d+ \(writes JPEG XL\)/#) != nil }, "\(lines)")
        // The stack's libvips, named with the build it comes from, and what is built into it.
        #expect(lines.contains { $0 == "libvips \(VipsRuntime.version) (writes WebP: yes, AVIF: yes; \(ImageStack.library), \(ImageStack.id))" },
                "\(lines)")
        #expect(lines.contains { $0.wholeMatch(of: #/  with GLib [\d.]+, mozjpeg [\d.]+, libpng [\d.]+, libwebp, libheif with aom [\d.]+, .*/#) != nil },
                "\(lines)")
        #expect(lines.contains { $0.hasPrefix("libcurl ") && $0.contains("TLS: OpenSSL/") && $0.contains("nghttp2/") }, "\(lines)")
        for library in [/SQLite 3\.\d+\.\d+/, /cmark-gfm 0\.29\.[\w.]+/, /gumbo 0\.\d+\.\d+/, /libexif 0\.6\.\d+/] {
            #expect(lines.contains { $0.wholeMatch(of: library) != nil }, "\(lines)")
        }
    }
}

@Suite struct HTTPSTests {
    /// A self-signed certificate for `name`, made with openssl for this test (an EC key: RSA key
    /// generation costs a second of CPU here; waited for without blocking a cooperative thread).
    static func certificate(in folder: TemporaryFolder, name: String = "images.test") async throws -> (cert: String, key: String) {
        let (cert, key) = (folder.path + "/\(name)-cert.pem", folder.path + "/\(name)-key.pem")
        let result = try await run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                    "-nodes", "-days", "1", "-subj", "/CN=\(name)", "-addext", "subjectAltName=DNS:\(name)",
                                    "-keyout", key, "-out", cert], in: folder.path)
        guard result.status == 0 else { throw Origin.OriginError(message: "openssl: \(result.stdout)") }
        return (cert, key)
    }

    @Test func httpsWithATrustedCABundleWorksAndWithoutItFailsCleanly() async throws {
        let site = TestSite()
        let tls = try await Self.certificate(in: site.folder)
        let origin = try Origin(tls: tls)
        site.page("a.html", "<img src=\"https://images.test/img/coffee.png\">")
        var config = site.configuration(origin: nil)
        config.fetch.connectTo = ["images.test:443:127.0.0.1:\(origin.port)"]
        config.fetch.retries = 0

        let untrusted = try await site.build(config)
        #expect(untrusted.exitCode == 0)
        #expect(untrusted.diagnostics.first?.message.contains("TLS failed (SSL certificate problem: self-signed certificate); a private CA can be trusted with --cacert") == true, "\(untrusted.diagnostics)")
        #expect(site.output("a.html") == "<img src=\"https://images.test/img/coffee.png\">") // copied as it is

        config.fetch.caFile = tls.cert
        let trusted = try await site.build(config)
        #expect(trusted.diagnostics.isEmpty)
        #expect(normalizingHashes(try #require(site.output("a.html"))).contains("<img src=\"/_img/coffee-HASH-300.jpg\""))
    }
}
