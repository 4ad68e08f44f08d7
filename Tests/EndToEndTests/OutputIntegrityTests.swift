import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The promise behind every build that deletes or overwrites files: after any build, every local
/// image reference in the output resolves to an existing file, and the output is what a clean build of
/// the same sources would give. Checked over the whole state space of page state × image state ×
/// mode × repeated runs × `cache clean`, not along one path.
@Suite struct OutputIntegrityTests {
    /// The case that once emptied `_img/` of a live site: one good and one broken image, in place, twice.
    @Test func aPageWithOneBrokenImageKeepsItsGoodImagesWhenBuiltAgainInPlace() async throws {
        let world = try World()
        world.write("p.html", "<img src=\"\(world.url("a.png"))\" alt=a><img src=\"\(world.url("missing.jpg"))\" alt=b>")
        _ = try await world.build(.inPlace)
        let files = world.site.folder.files(under: "site/_img")
        #expect(files.count >= 2)
        let second = try await world.build(.inPlace)
        #expect(world.site.folder.files(under: "site/_img") == files)
        #expect(second.summary.filesWritten == 0)
        try world.expectEveryReferenceResolves(.inPlace)
    }

    /// Image files removed behind imgbake's back (by hand, by a deploy step, by a concurrent build of
    /// an older version) are written again from the cache, with no request.
    @Test(arguments: [Mode.inPlace, .out])
    func missingImageFilesOfALocalisedPageAreWrittenAgainFromTheCache(mode: Mode) async throws {
        let world = try World()
        world.write("p.html", "<img src=\"\(world.url("a.png"))\" alt=a>")
        world.write("q.md", "![b](\(world.url("b.jpg")))\n")
        _ = try await world.build(mode)
        let folder = world.root(mode) + "/_img"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        for file in files { unlink(folder + "/" + file) }
        try await world.origin.reset()
        let again = try await world.build(mode)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == files)
        #expect(try await world.origin.stats().requests_total == 0)
        // The pages are built again from their sources (in place, the ones the cache kept), which writes
        // their files again: nothing was missing by the time a page named it.
        #expect(!again.diagnostics.contains { $0.message.contains("missing image file(s) again") })
        try world.expectEveryReferenceResolves(mode)
    }

    /// With the blobs gone from the cache too, the image is fetched and made again: the same bytes give
    /// the same file.
    @Test func missingImageFilesAreMadeAgainWhenTheCacheLostTheirBlobs() async throws {
        let world = try World()
        world.write("p.html", "<img src=\"\(world.url("a.png"))\" alt=a>")
        _ = try await world.build(.inPlace)
        let folder = world.site.site + "/_img"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        for file in files { unlink(folder + "/" + file) }
        try FileManager.default.removeItem(atPath: world.site.cache + "/blobs")
        _ = try await world.build(.inPlace)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == files)
        try world.expectEveryReferenceResolves(.inPlace)
    }

    /// A page that refers to a missing file imgbake cannot make again gets a warning at the reference.
    @Test func anUnrecoverableMissingFileIsAWarningAtItsReference() async throws {
        let world = try World()
        world.write("p.html", "<p>x</p>\n<img src=\"/_img/gone-0123456789-480.webp\" alt=x>")
        let result = try await world.build(.inPlace)
        let warning = try #require(result.diagnostics.first { $0.message.contains("gone-0123456789-480.webp") })
        #expect(warning.location == ImgBake.SourceLocation(file: "p.html", line: 2, column: 11))
        #expect(result.exitCode == 0)
    }

    /// Four `imgbake build` processes on one site at once (each with its own cache, the worst case):
    /// they take turns, all succeed, and every reference resolves, of every kind. Once, three of them
    /// removed every image file the first one wrote.
    @Test func concurrentInPlaceBuildsOfOneSiteLeaveEveryReferenceResolved() async throws {
        let world = try World()
        for n in 0..<12 {
            world.write("p\(n).html", "<img src=\"\(world.url(World.images[n % 4]))\" alt=x><img src=\"\(world.url("gone\(n % 3).png"))\" alt=y>")
        }
        world.write("img/a.png", Paths.fixture("colour/two-colours.png"))
        for (n, kind) in ReferenceKindIntegrityTests.Kind.allCases.enumerated() {
            let urls = [world.url(World.images[n % 4]), "/img/a.png", "https://example.org/img/a.png"]
            let (path, text) = ReferenceKindIntegrityTests.source(kind, urls, extra: "")
            world.write("kinds/\(kind.rawValue)/" + path, text)
        }
        world.site.folder.write("imgbake.toml", "[output]\nbase_url = \"https://example.org/\"\n")
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for n in 0..<4 {
                group.addTask {
                    try await runImgbake(["build", world.site.site, "--cache-dir", world.site.cache + "\(n)",
                                          "--connect-to", world.origin.connectTo, "--quiet", "--config", world.site.folder.path + "/imgbake.toml"])
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(!results.contains { $0.stderr.contains("changed while imgbake was running") })
        try world.expectEveryReferenceResolves(.inPlace)
        #expect(world.imageFiles(under: world.site.site) == world.referencedFiles(.inPlace))
    }

    // MARK: The state space

    enum PageEvent: String, CaseIterable, Sendable { case unchanged, edited, partlyFailed, fullyFailed, deleted }
    enum ImageEvent: String, CaseIterable, Sendable { case fresh, stale, changedUpstream }

    /// What happens before each of the later builds: nothing, `cache clean`, or the outputs lost (with
    /// `--out` the whole output folder, as on a fresh CI checkout with the cache restored; in place the
    /// images folder), which the next build restores from the cache.
    enum Between: String, CaseIterable, Sendable { case nothing, cacheClean, outputsLost }

    static let space: [(Mode, PageEvent, ImageEvent, Between)] = Mode.allCases.flatMap { mode in
        PageEvent.allCases.flatMap { page in
            ImageEvent.allCases.flatMap { image in Between.allCases.map { (mode, page, image, $0) } }
        }
    }

    /// Build once; then change one page and one image; build three more times (each after `between`).
    /// After every build, every reference resolves and the output equals a clean build of the same sources.
    @Test(arguments: space)
    func everyBuildLeavesEveryReferenceResolvedAndEqualsACleanBuild(mode: Mode, page: PageEvent, image: ImageEvent, between: Between) async throws {
        let world = try World()
        world.write("p0.html", world.page([("a.png", "a"), ("b.jpg", "b")]))
        world.write("p1.html", world.page([("c.png", "c"), ("missing.png", "m")]))
        world.write("notes/p2.md", "# Notes\n\n![b](\(world.url("b.jpg")))\n\n![a][ref]\n\n[ref]: \(world.url("a.png"))\n")
        try await world.buildAndCheck(mode)

        switch page {
        case .unchanged: break
        case .edited: world.write("p0.html", world.page([("a.png", "a2"), ("c.png", "c")]))
        case .partlyFailed: world.write("p0.html", world.page([("a.png", "a"), ("gone.jpg", "g")]))
        case .fullyFailed: world.write("p0.html", world.page([("gone.jpg", "g"), ("lost.png", "l")]))
        case .deleted: world.delete("p0.html")
        }
        switch image {
        case .fresh: break
        case .stale: world.advance(days: 8)
        case .changedUpstream:
            world.replace("a.png", with: "d.png")
            world.advance(days: 8)
        }
        for _ in 0..<3 {
            switch between {
            case .nothing: break
            case .cacheClean: try world.cleanCache()
            case .outputsLost: world.loseOutputs(mode)
            }
            try await world.buildAndCheck(mode)
        }
    }
}

/// Where pages are written: the site itself, or `--out`.
enum Mode: String, CaseIterable, Sendable { case inPlace, out }

/// A site, an origin serving a folder of small real images the test can change, and a clock; and the
/// site as its generator last wrote it (`sources`), which is what a build in place must give the same
/// site as a clean build of, however many builds rewrote the pages since.
final class World: @unchecked Sendable {
    static let images = ["a.png", "b.jpg", "c.png", "d.png"]
    let site = TestSite()
    /// `sources.path + "/site"`: every file of the site as the test (the generator) last wrote it.
    let sources = TemporaryFolder()
    let origin: Origin
    let served: String
    private var offset: Double = 0
    /// Off for generated sequences, where an image recovers: a clean build knows no failures, so the
    /// incremental one must try again too to be comparable.
    var rememberFailures = true
    /// Settings of the test's own (`base_url`, say), for every build and the clean build it is compared with.
    var configure: @Sendable (inout Configuration) -> Void = { _ in } { didSet { configurations += 1 } }
    /// How many times `configure` was set: part of the key of the clean build kept for reuse.
    private var configurations = 0

    init() throws {
        served = site.folder.path + "/served"
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: site.site, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: sources.path + "/site", withIntermediateDirectories: true)
        let sources = ["a.png": "colour/two-colours.png", "b.jpg": "metadata/camera.jpg", "c.png": "colour/diagram.png",
                       "d.png": "colour/p3.png"]
        for (name, fixture) in sources { FileManager.default.createFile(atPath: served + "/" + name, contents: Data(Paths.fixture(fixture))) }
        origin = try Origin(root: served)
    }

    func url(_ name: String) -> String { origin.url("img/" + name) }

    /// Writes a file of the site, as a generator does.
    func write(_ path: String, _ text: String) { write(path, Array(text.utf8)) }

    func write(_ path: String, _ bytes: [UInt8]) {
        site.folder.write("site/" + path, bytes)
        sources.write("site/" + path, bytes)
    }

    /// Deletes a file of the site, as a generator does.
    func delete(_ path: String) {
        try? FileManager.default.removeItem(atPath: site.site + "/" + path)
        try? FileManager.default.removeItem(atPath: sources.path + "/site/" + path)
    }

    /// `imgbake cache clean`. The sources of pages rewritten in place go with the cache: from then on
    /// the pages as they are in the site are their sources (until the generator writes them again).
    func cleanCache() throws {
        try CacheMaintenance.clean(try ImageCache(directory: site.cache))
        adoptSitePages()
    }

    /// The site's pages as they are become the sources of those that differ.
    private func adoptSitePages(_ paths: Set<String>? = nil, from folder: String? = nil) {
        let root = folder ?? site.site
        for (path, text) in pages(under: root) where paths?.contains(path) ?? true {
            guard !path.hasPrefix("_img/"), sources.text("site/" + path) != text else { continue }
            sources.write("site/" + path, text)
        }
    }
    func page(_ images: [(String, String)]) -> String {
        "<!doctype html>\n<title>t</title>\n" + images.map { "<p><img src=\"\(url($0.0))\" alt=\"\($0.1)\"></p>\n" }.joined()
    }

    /// From now on the origin serves `other`'s bytes as `name` (a new ETag: a changed upstream image).
    func replace(_ name: String, with other: String) {
        let bytes = FileManager.default.contents(atPath: served + "/" + other)!
        FileManager.default.createFile(atPath: served + "/" + name, contents: bytes)
    }

    func advance(days: Double) { offset += days * 86_400 }

    /// With `--out`, the whole output folder goes; in place, the images folder's files.
    func loseOutputs(_ mode: Mode) {
        if mode == .out {
            try? FileManager.default.removeItem(atPath: site.out)
        } else {
            for name in imageFiles(under: site.site) { unlink(site.site + "/_img/" + name) }
        }
    }

    /// Flips the last byte of the cache's `pick`-th blob file (sorted by name, modulo their count).
    func damageCacheBlob(_ pick: Int) {
        let root = site.cache + "/blobs"
        let files = (FileManager.default.subpaths(atPath: root) ?? []).filter { $0.count == 67 && !$0.contains(".tmp") }.sorted()
        guard !files.isEmpty, let handle = FileHandle(forUpdatingAtPath: root + "/" + files[pick % files.count]) else { return }
        defer { try? handle.close() }
        guard let end = try? handle.seekToEnd(), end > 0 else { return }
        try? handle.seek(toOffset: end - 1)
        let last = handle.readData(ofLength: 1)
        try? handle.seek(toOffset: end - 1)
        handle.write(Data([last[0] ^ 0xFF]))
    }

    var clock: any WallClock { OffsetClock(offset: offset) }

    func root(_ mode: Mode) -> String { mode == .inPlace ? site.site : site.out }

    func configuration(_ mode: Mode, site folder: String? = nil, out: String? = nil, cache: String? = nil) -> Configuration {
        var config = site.configuration(origin: origin, out: mode == .out)
        if let folder { config.site = folder }
        if mode == .out, let out { config.outputDirectory = out }
        if let cache { config.cache.directory = cache }
        config.fetch.retries = 0
        if !rememberFailures { config.fetch.failureTTL = .zero }
        configure(&config)
        return config
    }

    func build(_ mode: Mode) async throws -> BuildResult {
        try await Build(configuration(mode), clock: clock).run()
    }

    /// A build, then the property: every reference resolves, and a clean build (fresh cache, fresh
    /// output) of the same sources at the same moment gives the same pages and, with `--out`, the same
    /// image files. In place the sources are the site as its generator last wrote it, not as earlier
    /// builds rewrote it: same sources, same site. `together` builds at once (they take turns).
    @discardableResult
    func buildAndCheck(_ mode: Mode, together: Int = 1, comment: String = "",
                       sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws -> BuildResult {
        let before = TemporaryFolder()
        try FileManager.default.copyItem(atPath: site.site, toPath: before.path + "/now")
        let results = try await withThrowingTaskGroup(of: BuildResult.self) { group in
            for _ in 0..<together { group.addTask { try await self.build(mode) } }
            return try await group.reduce(into: [BuildResult]()) { $0.append($1) }
        }
        let result = results[0]
        for other in results.dropFirst() { #expect(other.exitCode == 0, Comment(rawValue: comment), sourceLocation: sourceLocation) }
        // A page whose kept source the cache lost (a damaged blob) is built from the page as it is,
        // and the build says so: from then on that is its source.
        let lost = results.flatMap(\.diagnostics).filter { $0.message.contains("is gone from the cache") }.compactMap { $0.location?.file }
        if mode == .inPlace { adoptSitePages(Set(lost), from: before.path + "/now") }
        try FileManager.default.copyItem(atPath: mode == .inPlace ? sources.path + "/site" : before.path + "/now", toPath: before.path + "/site")
        #expect(result.exitCode == 0, Comment(rawValue: comment), sourceLocation: sourceLocation)
        try expectEveryReferenceResolves(mode, comment: comment, sourceLocation: sourceLocation)

        let clean = try await cleanBuild(mode, from: before, comment: comment, sourceLocation: sourceLocation)
        #expect(pages(under: root(mode)) == clean.pages, "pages differ from a clean build. \(comment)", sourceLocation: sourceLocation)
        if mode == .out {
            #expect(imageFiles(under: root(mode)) == clean.images, "image files differ from a clean build. \(comment)",
                    sourceLocation: sourceLocation)
        } else {
            // In place, files from before stay when a page still uses them; none that imgbake wrote and
            // no page uses remain.
            #expect(imageFiles(under: root(mode)) == referencedFiles(mode), Comment(rawValue: comment), sourceLocation: sourceLocation)
        }
        return result
    }

    /// What a clean build (fresh cache, fresh output) of the sources copied to `before` gives: its pages
    /// and image files. A clean build of the same sources, served images, settings, mode and clock as
    /// the last one gives the same, so that one's is taken (a quarter of the integrity suites' builds were these
    /// repeats: the sources do not change between builds that leave a page settled).
    private func cleanBuild(_ mode: Mode, from before: TemporaryFolder, comment: String,
                            sourceLocation: Testing.SourceLocation) async throws -> (pages: [String: String], images: Set<String>) {
        let key = "\(mode) \(offset) \(rememberFailures) \(configurations) \(TemporaryFolder.digests(of: before.path + "/site").sorted { $0.key < $1.key }) "
            + "\(TemporaryFolder.digests(of: served).sorted { $0.key < $1.key })"
        if let last = lastClean, last.key == key { return last.outcome }
        let cleanOut = before.path + "/out"
        let reference = try await Build(configuration(mode, site: before.path + "/site", out: cleanOut, cache: before.path + "/cache"), clock: clock).run()
        #expect(reference.exitCode == 0, Comment(rawValue: comment), sourceLocation: sourceLocation)
        let cleanRoot = mode == .inPlace ? before.path + "/site" : cleanOut
        let outcome = (pages: pages(under: cleanRoot), images: imageFiles(under: cleanRoot))
        lastClean = (key, outcome)
        return outcome
    }
    private var lastClean: (key: String, outcome: (pages: [String: String], images: Set<String>))?

    /// The seal's property: builds again with nothing changed. After a build that reported nothing at
    /// all (every page settled), that build is let off by the seal; and when it is, a build that does
    /// not trust the seal finds nothing to do either: no page read, restored or written, no file
    /// written, no request, the site and output as they were, byte for byte and stamp for stamp.
    func expectTheSealToTellTheTruth(_ mode: Mode, after result: BuildResult, comment: String = "",
                                     sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws {
        // A warning means a page is not settled (an image failed, a page could not be read): no seal.
        guard !result.diagnostics.hasWarnings else { return }
        let again = try await build(mode)
        if result.diagnostics.isEmpty {
            #expect(again.summary.nothingChanged, "a settled build leaves a seal. \(comment)", sourceLocation: sourceLocation)
        }
        guard again.summary.nothingChanged else { return }
        let before = stamps()
        // Without the seal, the build looks at every page's state and source.
        let plan = try BuildPlan(configuration(mode), now: 0)
        try CacheIndex(path: site.cache + "/index.sqlite3").putSeal(nil, root: plan.stateRoot)
        let unsealed = try await Build(configuration(mode), clock: clock).run()
        let s = unsealed.summary
        #expect(s.pagesScanned == 0 && s.pagesRestored == 0 && s.pagesWritten == 0 && s.filesWritten == 0 && s.requests == 0 && !s.nothingChanged,
                "the seal let off a build that had work to do: \(s.lines.joined(separator: "; ")). \(comment)", sourceLocation: sourceLocation)
        #expect(stamps() == before, "a build the seal let off would have changed files. \(comment)", sourceLocation: sourceLocation)
        #expect(unsealed.diagnostics == again.diagnostics && unsealed.exitCode == again.exitCode,
                "a build the seal let off would have said otherwise: \(unsealed.diagnostics) exit \(unsealed.exitCode). \(comment)",
                sourceLocation: sourceLocation)
    }

    /// Every file of the site and the output: bytes and modification time.
    private func stamps() -> [String: String] {
        var stamps: [String: String] = [:]
        for folder in ["site", "out"] {
            for (path, digest) in site.folder.digests(under: folder) {
                stamps[folder + "/" + path] = digest + " " + String(describing: FileStamp.of(site.folder.path + "/" + folder + "/" + path)?.modified)
            }
        }
        return stamps
    }

    func expectEveryReferenceResolves(_ mode: Mode, comment: String = "", sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let folder = root(mode)
        for (page, names) in references(under: folder) {
            for name in names {
                #expect(FileManager.default.fileExists(atPath: folder + "/_img/" + name), "\(page) refers to missing /_img/\(name). \(comment)",
                        sourceLocation: sourceLocation)
            }
        }
    }

    /// `_img/<name>` in every page, stylesheet and feed, however the URL starts (`/_img/`, `../_img/`,
    /// `https://example.org/_img/`), found with a pattern of the test's own (not imgbake's scanner).
    func references(under folder: String) -> [String: Set<String>] {
        let pattern = try! NSRegularExpression(pattern: "(?:^|[\"'(=,\\s/])_img/([A-Za-z0-9._-]+)")
        var found: [String: Set<String>] = [:]
        for (path, text) in pages(under: folder) {
            let range = NSRange(text.startIndex..., in: text)
            found[path] = Set(pattern.matches(in: text, range: range).map { String(text[Range($0.range(at: 1), in: text)!]) })
        }
        return found
    }

    func referencedFiles(_ mode: Mode) -> Set<String> { references(under: root(mode)).values.reduce(into: []) { $0.formUnion($1) } }

    func pages(under folder: String) -> [String: String] {
        var pages: [String: String] = [:]
        for path in FileManager.default.subpaths(atPath: folder) ?? [] where SourceFile.kind(forPath: path) != nil {
            pages[path] = String(decoding: FileManager.default.contents(atPath: folder + "/" + path) ?? Data(), as: UTF8.self)
        }
        return pages
    }

    func imageFiles(under folder: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: folder + "/_img")) ?? [])
    }
}
