import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Builds sharing what CI runners share: one cache for several sites at once, a build while `cache gc`
/// and `cache verify` run, two builds of one `--out`. Real processes, a slow origin so they overlap.
@Suite struct ConcurrencyTests {
    func sites(_ count: Int, origin: Origin) -> [TestSite] {
        (0..<count).map { n in
            let site = TestSite()
            // The overlap comes from the slow origin, not from how many variants are made.
            site.page("imgbake.toml", TestSite.oneWidthTOML)
            for p in 0..<4 {
                let names = (0..<3).map { Paths.exampleImages[(n + p + $0) % Paths.exampleImages.count] }
                site.page("p\(p).html", names.map { "<img src=\"\(origin.url("img/\($0)"))\" alt=x>" }.joined())
            }
            return site
        }
    }

    func build(_ site: TestSite, cache: String, origin: Origin, out: String? = nil) async throws -> CommandResult {
        try await runImgbake(["build", site.site, "--out", out ?? site.out, "--cache-dir", cache, "--connect-to", origin.connectTo])
    }

    @Test(arguments: [2, 4])
    func buildsOfSeveralSitesOnOneCacheAtOnce(count: Int) async throws {
        let origin = try Origin(latencyMilliseconds: 150)
        let cache = TemporaryFolder()
        let sites = sites(count, origin: origin)
        let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
            for site in sites { group.addTask { try await build(site, cache: cache.path, origin: origin) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 && !$0.stderr.contains("warning") && !$0.stderr.contains("error") }, "\(results.map(\.stderr))")
        // Each URL fetched once at most per process; six unique images in all.
        #expect(try await origin.stats().paths.values.allSatisfy { $0 <= count })
        let verify = try await runImgbake(["cache", "verify", "--cache-dir", cache.path])
        #expect(verify.status == 0, "\(verify.stdout)")
        for site in sites { try expectResolved(site.out) }
        // And a second round from the shared cache: no request at all.
        try await origin.reset()
        for site in sites { #expect(try await build(site, cache: cache.path, origin: origin).status == 0) }
        #expect(try await origin.stats().requests_total == 0)
    }

    /// `cache gc` and `cache verify` over and over while a build runs: the shared lock keeps gc from
    /// the build's entries; the build succeeds and the cache verifies clean.
    @Test func aBuildWhileGarbageCollectionAndVerificationRun() async throws {
        let origin = try Origin(latencyMilliseconds: 200)
        let cache = TemporaryFolder()
        let site = sites(1, origin: origin)[0]
        let running = Task { try await build(site, cache: cache.path, origin: origin) }
        var maintenance: [CommandResult] = []
        for round in 0..<6 {
            maintenance.append(try await runImgbake(["cache", round % 2 == 0 ? "gc" : "verify", "--cache-dir", cache.path]
                                                    + (round % 2 == 0 ? ["--max-size", "1"] : [])))
        }
        let result = try await running.value
        #expect(result.status == 0, "\(result.stderr)")
        #expect(maintenance.allSatisfy { $0.status == 0 }, "\(maintenance.map { $0.stdout + $0.stderr })")
        try expectResolved(site.out)
        #expect(try await runImgbake(["cache", "verify", "--cache-dir", cache.path]).status == 0)
    }

    /// Two builds into one `--out` (from two caches): they take turns; the output is whole and what
    /// one build alone makes.
    @Test func twoBuildsWritingTheSameOutput() async throws {
        let origin = try Origin(latencyMilliseconds: 100)
        let site = sites(1, origin: origin)[0]
        let caches = (TemporaryFolder(), TemporaryFolder())
        async let first = build(site, cache: caches.0.path, origin: origin)
        async let second = build(site, cache: caches.1.path, origin: origin)
        let (a, b) = try await (first, second)
        #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
        try expectResolved(site.out)
        let alone = TemporaryFolder()
        #expect(try await build(site, cache: alone.path + "/cache", origin: origin, out: alone.path + "/out").status == 0)
        #expect(site.folder.digests(under: "out") == TemporaryFolder.digests(of: alone.path + "/out"))
    }

    func expectResolved(_ root: String) throws {
        for page in FileManager.default.subpaths(atPath: root) ?? [] where page.hasSuffix(".html") {
            let text = try String(contentsOfFile: root + "/" + page, encoding: .utf8)
            #expect(text.contains("/_img/"), "\(page) localised")
            for match in text.matches(of: /\/_img\/([A-Za-z0-9._-]+)/) {
                #expect(FileManager.default.fileExists(atPath: root + "/_img/" + match.output.1), "\(page) → \(match.output.1)")
            }
        }
    }
}
