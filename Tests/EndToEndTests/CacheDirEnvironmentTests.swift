import Foundation
import Testing
import ImgBake
import ImgBakeTestSupport

/// `IMGBAKE_CACHE_DIR` names the cache folder where `--cache-dir` is not given: over the configuration
/// file's `cache.dir` and the default, under the flag (docs/cache.md), for `build` and the `cache`
/// commands alike. Build hosts set it once in their settings (docs/cache.md's recipes).
@Suite struct CacheDirEnvironmentTests {
    func imgbake(_ arguments: [String], environment cacheDir: String) async throws -> CommandResult {
        try await runProcess(Paths.binary, arguments, in: nil, environment: ["IMGBAKE_CACHE_DIR": cacheDir])
    }

    @Test func theEnvironmentWinsOverTheConfigurationFileAndTheFlagOverBoth() async throws {
        let site = TestSite()
        site.file("img/a.png", Paths.fixture("colour/two-colours.png"))
        site.page("index.html", "<img src=\"img/a.png\" alt=\"Two colours\">")
        site.folder.write("imgbake.toml", "[cache]\ndir = \"from-config\"\n")
        let config = site.folder.path + "/imgbake.toml"
        let environment = site.folder.path + "/from-environment"

        let fromEnvironment = try await imgbake(["build", site.site, "--config", config, "--out", site.out, "--quiet"], environment: environment)
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        #expect(site.folder.exists("from-environment/index.sqlite3"))
        #expect(!site.folder.exists("from-config"), "cache.dir was used although IMGBAKE_CACHE_DIR was set")

        let fromFlag = try await imgbake(["build", site.site, "--config", config, "--out", site.out, "--cache-dir", site.cache, "--quiet"],
                                         environment: environment)
        #expect(fromFlag.status == 0, "\(fromFlag.stderr)")
        #expect(site.folder.exists("cache/index.sqlite3"))
        #expect(!site.folder.exists("from-config"))

        // Empty is unset: the configuration's cache.dir is used.
        let empty = try await imgbake(["build", site.site, "--config", config, "--out", site.out, "--quiet"], environment: "")
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(site.folder.exists("from-config/index.sqlite3"))
    }

    @Test func theCacheCommandsTakeItToo() async throws {
        let folder = TemporaryFolder()
        let stats = try await imgbake(["cache", "stats"], environment: folder.path + "/from-environment")
        #expect(stats.status == 0 && stats.stdout.hasPrefix("cache: \(folder.path)/from-environment\n"), "\(stats.stdout)\(stats.stderr)")
        let flagged = try await imgbake(["cache", "stats", "--cache-dir", folder.path + "/from-flag"], environment: folder.path + "/from-environment")
        #expect(flagged.status == 0 && flagged.stdout.hasPrefix("cache: \(folder.path)/from-flag\n"), "\(flagged.stdout)\(flagged.stderr)")
    }
}
