import Foundation
import Glibc
import Testing
@testable import ImgBake
import ImgBakeTestSupport
import Vips

/// Writes that fail, as a user meets them: a full disk (a 3 MB tmpfs: ENOSPC), a read-only mount
/// (EROFS), a folder the build's user may not write (EACCES, the real binary run as `nobody`). Each
/// failure is one message naming the file once and the system's reason once, the same from the page,
/// image, cache and report writers and on the next build; nothing half-written is left (no temporary
/// file, every page the old or the new one, every image file and blob holding the bytes its name says).
///
/// Real mounts need root with the right to mount (CI runs the tests so); the EACCES tests also need
/// root to run the binary as another user (`setpriv`). Without them the suite is skipped, saying why.
@Suite(.hangGuard,
       .enabled(if: TestMount.available, "needs root with the right to mount a tmpfs and remount read-only (CI runs as root)"))
struct WriteErrorTests {
    static let noSpace = String(cString: strerror(ENOSPC))
    static let readOnly = String(cString: strerror(EROFS))
    static let denied = String(cString: strerror(EACCES))

    // MARK: ENOSPC

    enum Placement: String, CaseIterable { case out, inPlace, outAndCache }

    /// A disk already full when the build starts: exit 1, the first image file by name named once with
    /// its reason once, the same words on the next build, and nothing written in part.
    @Test(arguments: Placement.allCases)
    func aFullDiskIsOneErrorAndTheNextBuildSaysTheSame(_ placement: Placement) async throws {
        let origin = try Origin()
        let site = TestSite()
        let disk = try TestMount(tmpfsOfBytes: 3 << 20, at: site.folder.path + "/disk")
        let root = placement == .inPlace ? disk.path + "/site" : site.site
        let pages = Self.makePages(in: root, origin: origin)
        Self.fill(disk.path)
        var arguments = ["build", root, "--cache-dir", placement == .outAndCache ? disk.path + "/cache" : site.cache,
                         "--connect-to", origin.connectTo, "--quiet"]
        if placement != .inPlace { arguments += ["--out", disk.path + "/out"] }
        var said: [String] = []
        for _ in 0..<2 {
            let result = try await runImgbake(arguments)
            #expect(result.status == 1, "\(result.stderr)")
            let path = try Self.expectOneWriteError(result, reason: Self.noSpace)
            #expect(path.hasPrefix((placement == .inPlace ? root : disk.path + "/out") + "/_img/"), "\(path)")
            said.append(result.warnings)
            Self.expectNothingHalfWritten(disk.path, pages: pages)
        }
        #expect(said[0] == said[1], "the next build on the same full disk says the same")
    }

    /// Output and cache on one 3 MB disk that fills during the build: the error names the file that did
    /// not fit once, with its reason, on this build and the next.
    @Test func aDiskThatFillsDuringTheBuild() async throws {
        let origin = try Origin()
        let site = TestSite()
        let disk = try TestMount(tmpfsOfBytes: 3 << 20, at: site.folder.path + "/disk")
        let pages = Self.makePages(in: site.site, origin: origin)
        // The qualities fixed: with those the search picks, what the build writes fitted on the disk
        // (the test passed with the fixed qualities it was written with, and not after the search).
        site.page("imgbake.toml", TestSite.fixedQualityTOML)
        for _ in 0..<2 {
            let result = try await runImgbake(["build", site.site, "--out", disk.path + "/out", "--cache-dir", disk.path + "/cache",
                                               "--connect-to", origin.connectTo, "--quiet"])
            #expect(result.status == 1, "\(result.stderr)")
            let path = try Self.expectOneWriteError(result, reason: Self.noSpace)
            // An image file or a page: written in page order, each page after its image files.
            #expect(path.hasPrefix(disk.path + "/out/"), "\(path)")
            Self.expectNothingHalfWritten(disk.path, pages: pages)
            Self.expectNothingHalfWritten(site.site, pages: pages)
        }
    }

    /// The cache's disk is full (blobs, or only the index: SQLITE_FULL): the site still gets its images,
    /// and one warning names the file that could not be written and the reason, once each.
    @Test(arguments: [false, true])
    func aFullCacheDiskIsOneWarningNamingTheFile(blobsElsewhere: Bool) async throws {
        let origin = try Origin()
        let site = TestSite()
        let disk = try TestMount(tmpfsOfBytes: 3 << 20, at: site.folder.path + "/disk")
        let cache = disk.path + "/cache"
        let blobs = blobsElsewhere ? try TestMount(tmpfsOfBytes: 64 << 20, at: cache + "/blobs") : nil
        let pages = Self.makePages(in: site.site, origin: origin)
        Self.fill(disk.path)
        for _ in 0..<2 {
            let result = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", cache,
                                               "--connect-to", origin.connectTo, "--quiet"])
            #expect(result.status == 0, "\(result.stderr)")
            let (path, rest) = try Self.expectOneCacheWarning(result, reason: Self.noSpace)
            if blobsElsewhere {
                #expect(path == cache + "/index.sqlite3")
                #expect(rest == "used for reading, nothing stored; 6 image(s) kept in memory for this build only")
            } else {
                #expect(path.hasPrefix(cache + "/"), "\(path)")
            }
            for n in pages.indices { #expect(site.output("p\(n).html")?.contains("/_img/") == true, "p\(n).html localised") }
            Self.expectNothingHalfWritten(disk.path, pages: pages)
        }
        _ = blobs
    }

    /// A report on a full disk: its own path once, the reason once.
    @Test func aReportOnAFullDisk() async throws {
        let origin = try Origin()
        let site = TestSite()
        let disk = try TestMount(tmpfsOfBytes: 1 << 20, at: site.folder.path + "/disk")
        _ = Self.makePages(in: site.site, origin: origin)
        Self.fill(disk.path)
        for report in [["r.json"], ["r.html", "r.json"]] {
            let result = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", site.cache,
                                               "--connect-to", origin.connectTo, "--quiet"] + report.flatMap { ["--report", disk.path + "/" + $0] })
            #expect(result.status == 1)
            #expect(try Self.expectOneWriteError(result, reason: Self.noSpace) == disk.path + "/" + report[0])
        }
        #expect(FileManager.default.subpaths(atPath: disk.path) == ["filler"])
    }

    // MARK: EROFS

    /// `--out` on a read-only mount: said before any download.
    @Test func aReadOnlyOutput() async throws {
        let origin = try Origin()
        let site = TestSite()
        _ = Self.makePages(in: site.site, origin: origin)
        site.folder.write("empty/.keep", "")
        let view = try TestMount(readOnlyViewOf: site.folder.path + "/empty", at: site.folder.path + "/ro")
        let result = try await runImgbake(["build", site.site, "--out", view.path, "--cache-dir", site.cache,
                                           "--connect-to", origin.connectTo, "--quiet"])
        #expect(result.status == 1)
        #expect(try Self.expectOneWriteError(result, reason: Self.readOnly) == view.path)
        #expect(try await origin.stats().requests_total == 0)
    }

    /// In place, one folder of the site read-only: the page writer names the page; it keeps its old
    /// bytes, and no temporary file is left beside it.
    @Test func aReadOnlyFolderOfTheSiteInPlace() async throws {
        let origin = try Origin()
        let site = TestSite()
        let pages = Self.makePages(in: site.site, origin: origin)
        let old = Self.page(origin, "coffee.png", 9)
        TemporaryFolder.write(old, to: site.site + "/sub/a.html")
        let view = try TestMount(readOnlyViewOf: site.site + "/sub", at: site.site + "/sub")
        let result = try await runImgbake(["build", site.site, "--cache-dir", site.cache, "--connect-to", origin.connectTo, "--quiet"])
        #expect(result.status == 1)
        #expect(try Self.expectOneWriteError(result, reason: Self.readOnly) == view.path + "/a.html")
        #expect(site.folder.text("site/sub/a.html") == old)
        Self.expectNothingHalfWritten(site.site, pages: pages + [old])
    }

    /// A read-only cache: one warning naming it, the build goes on.
    @Test func aReadOnlyCache() async throws {
        let origin = try Origin()
        let site = TestSite()
        let pages = Self.makePages(in: site.site, origin: origin)
        site.folder.write("cache/.keep", "")
        let view = try TestMount(readOnlyViewOf: site.cache, at: site.folder.path + "/ro-cache")
        let result = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", view.path,
                                           "--connect-to", origin.connectTo, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let (path, rest) = try Self.expectOneCacheWarning(result, reason: Self.readOnly)
        #expect(path == view.path)
        #expect(rest == "used for reading, nothing stored; 6 image(s) kept in memory for this build only")
        Self.expectNothingHalfWritten(site.out, pages: pages)
    }

    // MARK: EACCES

    /// In place, as a user who may not write one folder of the site: the page writer names the page.
    @Test(.enabled(if: Unprivileged.available, "needs root and setpriv to run the binary as nobody"))
    func aFolderWithoutWritePermissionInPlace() async throws {
        let origin = try Origin()
        let site = TestSite()
        let pages = Self.makePages(in: site.site, origin: origin)
        let old = Self.page(origin, "coffee.png", 9)
        TemporaryFolder.write(old, to: site.site + "/sub/a.html")
        try FileManager.default.createDirectory(atPath: site.cache, withIntermediateDirectories: true)
        try Unprivileged.handOver([site.site, site.cache])
        chmod(site.site + "/sub", 0o555)
        let result = try await Unprivileged.runImgbake(["build", site.site, "--cache-dir", site.cache,
                                                        "--connect-to", origin.connectTo, "--quiet"], folder: site.folder)
        #expect(result.status == 1)
        #expect(try Self.expectOneWriteError(result, reason: Self.denied) == site.site + "/sub/a.html")
        #expect(site.folder.text("site/sub/a.html") == old)
        Self.expectNothingHalfWritten(site.site, pages: pages + [old])
    }

    /// `--out` and `--report` into folders the user may not write; an index file it may not write.
    @Test(.enabled(if: Unprivileged.available, "needs root and setpriv to run the binary as nobody"))
    func foldersAndFilesWithoutWritePermission() async throws {
        let origin = try Origin()
        let site = TestSite()
        let pages = Self.makePages(in: site.site, origin: origin)
        // Warmed by root: the index stays root's (0644), every other file becomes nobody's.
        let warm = try await runImgbake(["build", site.site, "--out", site.folder.path + "/warm", "--cache-dir", site.cache,
                                         "--connect-to", origin.connectTo, "--quiet"])
        #expect(warm.status == 0, "\(warm.stderr)")
        for leftover in ["-wal", "-shm"] { unlink(site.cache + "/index.sqlite3" + leftover) }
        site.folder.write("locked/.keep", "")
        try Unprivileged.handOver([site.site, site.cache, site.out])
        chown(site.cache + "/index.sqlite3", 0, 0)
        chmod(site.folder.path + "/locked", 0o555)
        let run = { (arguments: [String]) in
            try await Unprivileged.runImgbake(arguments + ["--connect-to", origin.connectTo, "--quiet"], folder: site.folder)
        }

        let out = try await run(["build", site.site, "--out", site.folder.path + "/locked", "--cache-dir", site.cache])
        #expect(out.status == 1)
        #expect(try Self.expectOneWriteError(out, reason: Self.denied) == site.folder.path + "/locked")

        let report = try await run(["build", site.site, "--out", site.out, "--cache-dir", site.cache,
                                    "--report", site.folder.path + "/locked/r.json"])
        #expect(report.status == 1)
        #expect(try Self.expectOneWriteError(report, reason: Self.denied) == site.folder.path + "/locked/r.json")

        // A page with an image the cache does not have: made, used, not stored.
        site.page("new.html", Self.page(origin, "drawing.svg", 6))
        try Unprivileged.handOver([site.site])
        let index = try await run(["build", site.site, "--out", site.out, "--cache-dir", site.cache])
        #expect(index.status == 0, "\(index.stderr)")
        let (path, rest) = try Self.expectOneCacheWarning(index, reason: Self.denied)
        #expect(path == site.cache + "/index.sqlite3")
        #expect(rest.hasPrefix("nothing more stored in it by this build"), "\(rest)")
        #expect(site.output("new.html")?.contains("/_img/drawing-") == true)
        Self.expectNothingHalfWritten(site.out, pages: pages)
        Self.expectNothingHalfWritten(site.cache, pages: pages)
    }

    // MARK: Helpers

    /// Six pages, each with one of the example images, ending in a marker a truncated page would lack.
    static func makePages(in root: String, origin: Origin) -> [String] {
        let pages = Paths.exampleImages.enumerated().map { page(origin, $1, $0) }
        for (n, text) in pages.enumerated() { TemporaryFolder.write(text, to: root + "/p\(n).html") }
        return pages
    }

    static func page(_ origin: Origin, _ image: String, _ n: Int) -> String {
        "<p>page \(n)</p><img src=\"\(origin.url("img/" + image))\" alt=x>\n<!-- end -->\n"
    }

    /// Fills the file system at `folder` to the last byte.
    static func fill(_ folder: String) {
        let fd = open(folder + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(fd >= 0)
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
    }

    /// The failed build's one message: `imgbake: error: cannot write <path>: <reason>`, the path and
    /// the reason once each. Returns the path.
    @discardableResult
    static func expectOneWriteError(_ result: CommandResult, reason: String) throws -> String {
        let lines = result.warnings.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "one message: \(result.stderr)")
        let line = try #require(lines.first)
        let match = try #require(line.wholeMatch(of: /imgbake: error: cannot write (.+): ([^:]+)/), "\(line)")
        let path = String(match.1)
        #expect(String(match.2) == reason, "\(line)")
        #expect(line.components(separatedBy: path).count == 2, "the path once: \(line)")
        #expect(line.components(separatedBy: reason).count == 2, "the reason once: \(line)")
        #expect(!path.contains(": "), "\(line)")
        return path
    }

    /// The build's one warning about its cache: `warning: cache: cannot write <path>: <reason>; <rest>`.
    static func expectOneCacheWarning(_ result: CommandResult, reason: String) throws -> (path: String, rest: String) {
        let lines = result.warnings.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "one message: \(result.stderr)")
        let line = try #require(lines.first)
        let match = try #require(line.wholeMatch(of: /warning: cache: cannot write ([^;]+): ([^:;]+); (.+)/), "\(line)")
        let path = String(match.1)
        #expect(String(match.2) == reason, "\(line)")
        #expect(line.components(separatedBy: path).count == 2, "the path once: \(line)")
        #expect(line.components(separatedBy: reason).count == 2, "the reason once: \(line)")
        return (path, String(match.3))
    }

    /// No temporary file under `folder`; every page there one of `pages` or a whole rewrite of one;
    /// every image file and cache blob holding the bytes its name says.
    static func expectNothingHalfWritten(_ folder: String, pages: [String]) {
        for relative in FileManager.default.subpaths(atPath: folder) ?? [] {
            let path = folder + "/" + relative, name = PathName.name(relative)
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            #expect(!name.contains(".tmp-"), "left behind: \(relative)")
            let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
            let hash = BlobID(of: bytes).hex
            if relative.hasSuffix(".html") {
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(pages.contains(text) || (text.hasSuffix("\n<!-- end -->\n") && text.contains("/_img/")), "\(relative): \(text)")
            } else if relative.hasPrefix("_img/") || relative.contains("/_img/") {
                #expect(name.contains("-" + hash.prefix(10)), "\(relative) holds the bytes its name says")
            } else if relative.contains("blobs/"), name.count == 64 {
                #expect(name == hash, "blob \(relative) holds the bytes its name says")
            }
        }
    }
}

/// Runs the binary as `nobody` (uid and gid 65534, no supplementary groups): root is never refused a
/// write for want of permission, so this is how a test meets EACCES.
enum Unprivileged {
    static let user: uid_t = 65534
    static let available = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs a copy of the binary in `folder` (which every user can reach, as the build folder and the
    /// stack's cache may not be), laid out as every artefact installs it: bin/imgbake and the stack's
    /// libvips in lib/imgbake/. Written through a close-on-exec descriptor: a child another test spawns
    /// meanwhile must not inherit it open for writing (exec would fail with ETXTBSY).
    static func runImgbake(_ arguments: [String], folder: TemporaryFolder) async throws -> CommandResult {
        let binary = folder.path + "/bin/imgbake", library = folder.path + "/lib/imgbake/" + ImageStack.library
        if !FileManager.default.fileExists(atPath: binary) {
            for folder in [folder.path + "/bin", folder.path + "/lib", folder.path + "/lib/imgbake"] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                chmod(folder, 0o755)
            }
            try AtomicFile.write([UInt8](FileManager.default.contents(atPath: Paths.stackLibrary)!), to: library, durable: false, mode: 0o644)
            try AtomicFile.write([UInt8](FileManager.default.contents(atPath: Paths.binary)!), to: binary, durable: false, mode: 0o755)
        }
        chmod(folder.path, 0o755)
        // Still: a child forked between the copy's open and its close holds it briefly.
        return try await retryingWhileTextFileBusy {
            try await runProcess("/usr/bin/setpriv", ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", binary] + arguments, in: folder.path)
        }
    }

    /// Gives `paths` and everything under them to the unprivileged user.
    static func handOver(_ paths: [String]) throws {
        for root in paths {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            chown(root, user, user)
            for relative in FileManager.default.subpaths(atPath: root) ?? [] { lchown(root + "/" + relative, user, user) }
        }
    }
}
