import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Disks as CI meets them: a cache restored read-only, a cache on a disk that fills up, a site that
/// cannot be written, a cache on another file system than the output. Real mounts (a read-only bind
/// mount, a tiny tmpfs), so these need root with the right to mount, as CI runs them.
@Suite(.enabled(if: TestMount.available, "needs root with the right to mount (CI runs as root)"))
struct DiskFaultTests {
    /// A pull-request job against a cache a trusted job keeps warm: read-only, and enough for
    /// `--check`, `--offline` and `--frozen`; a normal build goes on without storing, with one warning.
    @Test func aReadOnlyCacheServesCheckOfflineAndFrozenAndANormalBuildGoesOn() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=c>")
        let warm = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", site.cache, "--connect-to", origin.connectTo])
        #expect(warm.status == 0, "\(warm.stderr)")
        let cacheBefore = site.folder.digests(under: "cache")
        let view = try TestMount(readOnlyViewOf: site.cache, at: site.folder.path + "/ro-cache")
        for mode in ["--check", "--offline", "--frozen"] {
            let out = site.folder.path + "/out" + mode
            let result = try await runImgbake(["build", site.site, "--out", out, "--cache-dir", view.path, mode])
            #expect(result.status == 0, "\(mode): \(result.stderr)")
            #expect(!result.stderr.contains("error"), "\(mode): \(result.stderr)")
            if mode != "--check" {
                #expect(try String(contentsOfFile: out + "/a.html", encoding: .utf8).contains("/_img/coffee-"), "\(mode)")
            }
        }
        // A page with an image the cache does not have: fetched, transformed, written to the site.
        site.page("b.html", "<img src=\"\(origin.url("img/hubble.jpg"))\" alt=h>")
        let normal = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", view.path, "--connect-to", origin.connectTo])
        #expect(normal.status == 0, "\(normal.stderr)")
        let warnings = normal.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 1 && warnings[0].contains("cannot write \(view.path): Read-only file system")
                && warnings[0].contains("nothing stored"), "\(warnings)")
        #expect(site.output("b.html")?.contains("/_img/hubble-") == true)
        #expect(site.folder.digests(under: "cache") == cacheBefore)
    }

    /// The cache's disk fills up in the middle of a build: what was downloaded and transformed still
    /// reaches the site; one warning says what could not be stored.
    @Test func aFullCacheDiskStillGivesTheSiteItsImages() async throws {
        let origin = try Origin()
        let site = TestSite()
        for (n, name) in Paths.exampleImages.enumerated() {
            site.page("p\(n).html", "<img src=\"\(origin.url("img/" + name))\" alt=x>")
        }
        let disk = try TestMount(tmpfsOfBytes: 400_000, at: site.folder.path + "/small")
        let result = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", disk.path + "/cache",
                                           "--connect-to", origin.connectTo])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
        // Whichever write hit the full disk first: a blob, or SQLite.
        #expect(warnings.count == 1 && warnings[0].contains(": No space left on device"), "\(warnings)")
        for n in Paths.exampleImages.indices {
            #expect(site.output("p\(n).html")?.contains("/_img/") == true, "p\(n).html localised")
        }
        try expectEveryReferenceResolves(site.out)
    }

    /// In place, on a site that cannot be written: a clear error naming it, before any download; exit 1,
    /// and the site as it was.
    @Test func aReadOnlySiteInPlaceIsAClearError() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=c>")
        let before = site.folder.digests(under: "site")
        let view = try TestMount(readOnlyViewOf: site.site, at: site.folder.path + "/ro-site")
        let result = try await runImgbake(["build", view.path, "--cache-dir", site.cache, "--connect-to", origin.connectTo])
        #expect(result.status == 1)
        #expect(result.stderr.contains("imgbake: error: cannot write \(view.path): Read-only file system"),
                "\(result.stderr)")
        #expect(site.folder.digests(under: "site") == before)
        #expect(try await origin.stats().requests_total == 0)
    }

    /// The output's disk is full: a clear error, exit 1, and no page half-written or replaced, no
    /// temporary file left behind (in place, every page is what it was).
    @Test(arguments: [true, false])
    func aFullOutputDiskLeavesNoPageHalfWritten(inPlace: Bool) async throws {
        let origin = try Origin()
        let site = TestSite()
        let disk = try TestMount(tmpfsOfBytes: 200_000, at: site.folder.path + "/small")
        let root = inPlace ? disk.path + "/site" : site.site
        let page = { (n: Int) in "<p>\(String(repeating: "text ", count: 2000))</p><img src=\"\(origin.url("img/" + Paths.exampleImages[n % 6]))\" alt=x>" }
        for n in 0..<6 { TemporaryFolder.write(page(n), to: root + "/p\(n).html") }
        let before = (0..<6).map { FileManager.default.contents(atPath: root + "/p\($0).html") }
        var arguments = ["build", root, "--cache-dir", site.cache, "--connect-to", origin.connectTo]
        if !inPlace { arguments += ["--out", disk.path + "/out"] }
        let result = try await runImgbake(arguments)
        #expect(result.status == 1)
        #expect(result.stderr.contains("imgbake: error: cannot write") && result.stderr.contains("No space left on device"), "\(result.stderr)")
        #expect((0..<6).map { FileManager.default.contents(atPath: root + "/p\($0).html") } == before)
        let leftovers = (FileManager.default.subpaths(atPath: disk.path) ?? []).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// The cache on a tmpfs, the output on the disk: nothing renames across file systems.
    @Test func aCacheOnAnotherFileSystemThanTheOutput() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=c>")
        let disk = try TestMount(tmpfsOfBytes: 64 << 20, at: site.folder.path + "/tmpfs")
        for _ in 0..<2 {
            let result = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", disk.path + "/cache",
                                               "--connect-to", origin.connectTo])
            #expect(result.status == 0 && !result.stderr.contains("warning"), "\(result.stderr)")
        }
        let verify = try await runImgbake(["cache", "verify", "--cache-dir", disk.path + "/cache"])
        #expect(verify.status == 0)
        try expectEveryReferenceResolves(site.out)
    }

    func expectEveryReferenceResolves(_ root: String) throws {
        let pattern = try Regex("/_img/([A-Za-z0-9._-]+)")
        for page in FileManager.default.subpaths(atPath: root) ?? [] where page.hasSuffix(".html") {
            let text = try String(contentsOfFile: root + "/" + page, encoding: .utf8)
            for match in text.matches(of: pattern) {
                #expect(FileManager.default.fileExists(atPath: root + "/_img/" + String(match.output[1].substring!)), "\(page)")
            }
        }
    }
}
