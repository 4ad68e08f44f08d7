import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

@Suite struct ConfigurationCommandLineTests {
    @Test func aBadConfigurationFileExitsWithTwoAndNamesTheLine() async throws {
        let site = TestSite()
        site.page("imgbake.toml", "[fetch]\nretries = -1\n")
        let result = try await runImgbake(["build", site.site, "--cache-dir", site.cache])
        #expect(result.status == 2)
        #expect(result.stderr == "\(site.site)/imgbake.toml:2: error: fetch.retries: must be between 0 and 20, not -1\n")
    }

    @Test func flagsWinOverTheConfigurationFile() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        site.folder.write("other.toml", """
        [output]
        dir = "from-config"
        public_path = "/media/"
        [fetch]
        connect_to = ["images.test:80:127.0.0.1:\(origin.port)"]
        policy = "offline"
        """)
        // --config names the file; --out wins over output.dir; the offline policy comes from the file.
        let offline = try await runImgbake(["build", site.site, "--config", site.folder.path + "/other.toml", "--cache-dir", site.cache, "--out", site.out])
        #expect(offline.status == 0 && offline.stderr.contains("not in the cache (--offline"))
        #expect(try await origin.stats().requests_total == 0)
        let refreshed = try await runImgbake(["build", site.site, "--config", site.folder.path + "/other.toml", "--cache-dir", site.cache, "--out", site.out, "--refresh"])
        #expect(refreshed.status == 0)
        #expect(site.output("a.html")?.contains("src=\"/media/coffee-") == true)
        #expect(!site.folder.exists("from-config"))
    }

    /// `make docs` writes the configuration reference from this output: it must be the reader's own list.
    @Test func configKeysPrintsTheReadersTable() async throws {
        let result = try await runImgbake(["config", "keys", "--json"])
        #expect(result.status == 0)
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]])
        #expect(keys.map { $0["name"] ?? "" } == ConfigurationKey.all.map(\.name))
        #expect(keys.allSatisfy { !($0["summary"] ?? "").isEmpty && !($0["type"] ?? "").isEmpty })
        let text = try await runImgbake(["config", "keys"])
        #expect(text.status == 0 && text.stdout.contains("fetch.ttl = duration  (default: \"7d\")"))
    }
}
