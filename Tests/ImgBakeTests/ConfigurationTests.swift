import Foundation
import Testing
@testable import ImgBake

@Suite struct TOMLTests {
    @Test func theSubsetConfigurationFilesUse() async throws {
        let root = try TOMLParser.parse(#"""
        # comment
        top = "x" # trailing comment
        [a]
        int = 1_000
        neg = -5
        float = 2.5
        yes = true
        list = [1, 2,
          3, # comment inside
        ]
        inline = { webp = 80, "avif" = 50 }
        literal = 'C:\path'
        escaped = "tab\tquote\"u\u00e9"
        multi = """
        line one
        line two"""
        [a."b.c"]
        dotted.key = "v"
        """#)
        guard case .table(let a) = root["a"]?.value, case .table(let bc) = a["b.c"]?.value,
              case .table(let dotted) = bc["dotted"]?.value else { Issue.record("tables"); return }
        #expect(root["top"]?.value == .string("x"))
        #expect(a["int"]?.value == .integer(1000) && a["neg"]?.value == .integer(-5) && a["float"]?.value == .float(2.5))
        #expect(a["yes"]?.value == .bool(true))
        #expect(a["list"]?.value == .array([TOMLNode(value: .integer(1), line: 8), TOMLNode(value: .integer(2), line: 8), TOMLNode(value: .integer(3), line: 9)]))
        #expect(a["literal"]?.value == .string("C:\\path"))
        #expect(a["escaped"]?.value == .string("tab\tquote\"u\u{e9}"))
        #expect(a["multi"]?.value == .string("line one\nline two"))
        #expect(a["inline"]?.line == 11)
        #expect(dotted["key"]?.value == .string("v") && dotted["key"]?.line == 18)
    }

    @Test(arguments: [
        ("a = 1\na = 2\n", 2, "a is set twice"),
        ("[t]\n[t]\n", 2, "table [t] is defined twice"),
        ("a = \"open\n", 1, "unterminated string"),
        ("a = bare\n", 1, "not a valid value: bare (strings need quotes)"),
        ("a = 1979-05-27\n", 1, "dates and times are not supported here: 1979-05-27"),
        ("[[t]]\n", 1, "arrays of tables ([[...]]) are not supported"),
        ("a = [1 2]\n", 1, "expected , or ] in an array, found '2'"),
        ("a = 1 b = 2\n", 1, "expected the end of the line, found 'b'"),
    ])
    func errorsNameTheLine(text: String, line: Int, message: String) {
        #expect(throws: TOMLError(line: line, message: message)) { try TOMLParser.parse(text) }
    }
}

@Suite struct ConfigurationFileTests {
    func load(_ text: String) throws(ConfigurationError) -> Configuration {
        let folder = TemporaryFolder()
        folder.write("imgbake.toml", text)
        var config = Configuration(site: folder.path, cacheDirectory: "/default-cache")
        try ConfigurationFile.load(folder.path + "/imgbake.toml", into: &config)
        return config
    }

    @Test func theContractExampleLoads() async throws {
        setenv("IMAGES_TOKEN", "t", 1)
        let config = try load(#"""
        [output]
        images_dir  = "_img"          # under the output root
        public_path = "/_img/"        # how pages refer to images_dir; may be a full CDN URL
        markup      = "picture"       # picture | img | localize
        markdown    = "localize"      # localize (URL only) | html (emit the picture/img markup)
        sizes       = "(max-width: 960px) 100vw, 960px"   # used when the author gave none

        [images]
        widths        = [480, 960, 1920]          # capped at the source width, never upscaled
        formats       = ["webp", "original"]      # best first; "avif" is opt-in
        quality       = { webp = 80, avif = 50, jpeg = 80 }
        keep_metadata = []                        # e.g. ["copyright", "artist"]; GPS is never kept
        max_pixels    = 100_000_000
        placeholder   = "none"                    # none | color | lqip | blurhash

        [fetch]
        concurrency = 8
        per_host    = 4
        timeout     = "30s"
        max_bytes   = "50MB"
        retries     = 3
        ttl         = "7d"                        # freshness when the server gives none
        failure_ttl = "24h"                       # how long a permanent failure is remembered
        allow_private_networks = false
        strip_query = ["utm_*", "fbclid", "gclid"]
        [fetch.headers."images.example.com"]
        Authorization = "Bearer ${IMAGES_TOKEN}"  # ${VAR} from the environment; never logged

        [cache]
        dir      = "~/.cache/imgbake"
        max_size = "5GB"
        """#)
        #expect(config.images.widths == [480, 960, 1920] && config.images.formats == [.webp, .original])
        #expect(config.images.quality == ImageSettings.Quality())
        #expect(config.fetch.timeout == .seconds(30) && config.fetch.maxBytes == 50_000_000)
        #expect(config.fetch.ttl == .seconds(7 * 86400) && config.fetch.failureTTL == .seconds(86400))
        #expect(config.fetch.headers == ["images.example.com": ["Authorization": "Bearer ${IMAGES_TOKEN}"]])
        #expect(config.cache.directory.hasSuffix("/.cache/imgbake") && !config.cache.directory.hasPrefix("~"))
        #expect(config.cache.maxSize == 5_000_000_000)
    }

    @Test func everyOtherKeyMapsToTheConfiguration() async throws {
        let config = try load("""
        [output]
        dir = "dist"
        public_path = "https://cdn.example.com/img/"
        markup = "localize"
        templates_dir = "templates"
        [images]
        formats = ["avif", "webp", "original"]
        quality = { avif = 40 }
        keep_metadata = ["Copyright", "artist"]
        [fetch]
        policy = "frozen"
        retry_failed = true
        connect_to = ["a.test:443:127.0.0.1:8443"]
        cacert = "/etc/ca.pem"
        connect_timeout = "1m30s"
        [fetch.key_rules."cdn.test"]
        keep_query = ["w"]
        [fetch.key_rules."static.test"]
        ignore_query = true
        [build]
        jobs = 3
        strict = true
        """)
        #expect(config.outputDirectory?.hasSuffix("/dist") == true && config.output.templatesDirectory?.hasSuffix("/templates") == true)
        #expect(config.output.publicPathIsAbsolute && config.output.markup == .localize)
        #expect(config.images.formats == [.avif, .webp, .original] && config.images.quality.avif == 40)
        #expect(config.images.keepMetadata == ["copyright", "artist"])
        #expect(config.fetch.policy == .frozen && config.fetch.retryFailed && config.fetch.caFile == "/etc/ca.pem")
        #expect(config.fetch.connectTimeout == .seconds(90))
        #expect(config.fetch.hostRules == ["cdn.test": .keepOnly(["w"]), "static.test": .ignoreQuery])
        #expect(config.jobs == 3 && config.strict)
    }

    @Test(arguments: [
        ("[fetch]\ntimout = \"30s\"\n", "2: error: fetch.timout: unknown key (did you mean timeout?)"),
        ("[output]\nmarkup = \"pictures\"\n", "2: error: output.markup: \"pictures\" is not one of \"picture\", \"img\", \"localize\""),
        ("[images]\n\nwidths = [480, \"960\"]\n", "3: error: images.widths: expected an integer, found a string"),
        ("[images]\nwidths = [0]\n", "2: error: images.widths: must be between 1 and 16384, not 0"),
        ("[images]\nquality = { webp = 101 }\n", "2: error: images.quality.webp: must be between 1 and 100, not 101"),
        ("[images]\nkeep_metadata = [\"gps\"]\n", "2: error: images.keep_metadata: \"gps\" cannot be kept; allowed: copyright, artist (GPS, serial numbers and MakerNotes never are)"),
        ("[fetch]\ntimeout = \"soon\"\n", "2: error: fetch.timeout: \"soon\" is not a duration such as \"30s\", \"500ms\", \"24h\" or \"7d\""),
        ("[cache]\nmax_size = \"huge\"\n", "2: error: cache.max_size: \"huge\" is not a size such as \"50MB\" or \"5GB\""),
        ("[outptu]\n", "1: error: outptu: unknown key (did you mean output?); known here: output, images, fetch, cache, build"),
        ("[output]\npublic_path = \"_img\"\n", "2: error: output.public_path: must be a path starting with / or an http(s) URL, not \"_img\""),
        ("[fetch]\nconcurrency = 8\nconcurrency = 9\n", "3: error: concurrency is set twice"),
    ])
    func errorsNameTheFileLineAndKey(text: String, expected: String) {
        do {
            _ = try load(text)
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.description.hasSuffix("imgbake.toml:" + expected) || error.description.contains("imgbake.toml:" + expected), "\(error)")
        }
    }

    @Test func durations() {
        #expect(DurationText.parse("500ms") == .milliseconds(500))
        #expect(DurationText.parse("1h30m") == .seconds(5400))
        #expect(DurationText.parse("2w") == .seconds(1_209_600))
        #expect(DurationText.parse("90") == .seconds(90))
        #expect(DurationText.parse("5 parsecs") == nil && DurationText.parse("") == nil)
    }
}

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
}
