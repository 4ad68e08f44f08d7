import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

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
        ("a = 1979-02-29\n", 1, "not a valid date or time: 1979-02-29"),
        ("[[t]]\nx = 1\n\n[t]\n", 4, "[t] is already an array of tables ([[t]])"),
        ("[a]\nb.c = 1\n[a.b]\n", 3, "table [a.b] is already defined by dotted keys (a.b.key = ...)"),
        ("a = { b = 1 }\na.c = 2\n", 2, "a is already a value, not a table"),
        ("a = \"\\x41\"\n", 1, #"unknown escape \x; the escapes are \b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX"#),
        ("a = 1\r\nb = \"x\ry\"\r\n", 2, #"a carriage return (U+000D) without a line feed is not allowed in a string (write it as an escape, such as \u000D)"#),
        ("a = 1\n# \u{7}\n", 2, "control character U+0007 is not allowed in a comment"),
        ("a = 0x_1\n", 1, "not a valid number: 0x_1"),
        ("a = 9223372036854775808\n", 1, "integer out of range (64-bit): 9223372036854775808"),
        ("a = \"\"\"\nnever closed\n", 1, "unterminated multi-line string"),
        ("a = [\n  1,\n", 1, "unterminated array: no ] before the end of the file"),
        ("a = [1 2]\n", 1, "expected , or ] in an array, found '2'"),
        ("a = 1 b = 2\n", 1, "expected the end of the line, found 'b'"),
    ])
    func errorsNameTheLine(text: String, line: Int, message: String) {
        #expect(throws: TOMLError(line: line, message: message)) { try TOMLParser.parse(text) }
    }

    @Test func invalidUTF8IsAnErrorNotAReplacementCharacter() throws {
        #expect(throws: TOMLError(line: 2, message: "the file is not valid UTF-8 here")) {
            try TOMLParser.parse(Array("a = 1\nb = \"".utf8) + [0xC3, 0x22, 0x0A])
        }
        // A byte order mark may open the file (Windows editors write one).
        #expect(try TOMLParser.parse([0xEF, 0xBB, 0xBF] + Array("a = 1\n".utf8))["a"]?.value == .integer(1))
    }

    /// Found by fuzzing: 10,000 `[` overflowed the stack (reading, converting and freeing recurse per level).
    @Test(arguments: [
        ("a = " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "\n", 1),
        ("a = " + String(repeating: "{b=", count: 10_000) + "1" + String(repeating: "}", count: 10_000) + "\n", 1),
        ("x = 1\n[" + Array(repeating: "a", count: 10_000).joined(separator: ".") + "]\n", 2),
        ("[t]\n" + Array(repeating: "a", count: 10_000).joined(separator: ".") + " = 1\n", 2),
    ])
    func deepNestingIsAnError(text: String, line: Int) {
        #expect(throws: TOMLError(line: line, message: "nested more than 100 levels deep")) { try TOMLParser.parse(text) }
    }

    @Test func nestingUpToTheLimitReads() throws {
        let depth = TOMLParser.maximumDepth
        let array = try TOMLParser.parse("a = " + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1))
        #expect(array["a"] != nil)
        let table = try TOMLParser.parse("[" + Array(repeating: "t", count: depth - 1).joined(separator: ".") + "]\nb = 1\n")
        #expect(table["t"] != nil)
    }

    @Test func datesAndTimes() throws {
        let root = try TOMLParser.parse("""
        offset = 1979-05-27T00:32:00.999999-07:00
        space = 1979-05-27 07:32:00Z
        local = 1979-05-27T07:32:00
        date = 1979-05-27
        time = 00:32:00.5
        """)
        typealias Time = TOMLDateTime.Time
        let day = TOMLDateTime.Date(year: 1979, month: 5, day: 27)
        #expect(root["offset"]?.value == .dateTime(TOMLDateTime(date: day, time: Time(hour: 0, minute: 32, second: 0, nanosecond: 999_999_000), offset: -420)))
        #expect(root["space"]?.value == .dateTime(TOMLDateTime(date: day, time: Time(hour: 7, minute: 32, second: 0, nanosecond: 0), offset: 0)))
        #expect(root["local"]?.value == .dateTime(TOMLDateTime(date: day, time: Time(hour: 7, minute: 32, second: 0, nanosecond: 0))))
        #expect(root["date"]?.value == .dateTime(TOMLDateTime(date: day)) && root["date"]?.line == 4)
        #expect(root["time"]?.value == .dateTime(TOMLDateTime(time: Time(hour: 0, minute: 32, second: 0, nanosecond: 500_000_000))))
    }

    @Test func arraysOfTablesKeepTheLineOfEachHeader() throws {
        let root = try TOMLParser.parse("""
        [[fruit]]
        name = "apple"

        [[fruit.variety]]
        name = "red delicious"

        [[fruit]]
        name = "banana"
        """)
        guard case .array(let fruit) = root["fruit"]?.value, fruit.count == 2, case .table(let apple) = fruit[0].value,
              case .table(let banana) = fruit[1].value, case .array(let varieties) = apple["variety"]?.value else {
            Issue.record("not read as arrays of tables: \(root)")
            return
        }
        #expect(root["fruit"]?.line == 1 && fruit.map(\.line) == [1, 7] && varieties.map(\.line) == [4])
        #expect(apple["name"]?.value == .string("apple") && banana["name"]?.value == .string("banana") && banana["variety"] == nil)
    }

    @Test func stringsAsTOML1WritesThem() throws {
        let root = try TOMLParser.parse(#"""
        joined = """
        The quick \
            brown fox."""
        quotes = """He said "hi"."""" # the first of four quotes belongs to the string
        raw = '''It's "raw" \n'''
        escapes = "\b\f\U0001F600"
        """#)
        #expect(root["joined"]?.value == .string("The quick brown fox."))
        #expect(root["quotes"]?.value == .string(#"He said "hi".""#))
        #expect(root["raw"]?.value == .string(#"It's "raw" \n"#))
        #expect(root["escapes"]?.value == .string("\u{8}\u{C}\u{1F600}"))
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
        widths        = [480, 960, 1320, 1920]    # capped at the source width, never upscaled
        formats       = ["webp", "original"]      # best first; "avif" is opt-in
        quality       = "auto"                    # every lossy format chosen per image, to one target
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
        #expect(config.images.widths == [480, 960, 1320, 1920] && config.images.formats == [.webp, .original])
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
        ("[output]\nmarkup = \"pictures\"\n", "2: error: output.markup: \"pictures\" is not one of \"auto\", \"picture\", \"img\", \"localize\""),
        ("[images]\n\nwidths = [480, \"960\"]\n", "3: error: images.widths: expected an integer, found a string"),
        ("[images]\nwidths = [0]\n", "2: error: images.widths: must be between 1 and 16384, not 0"),
        ("[images]\nquality = { webp = 101 }\n", "2: error: images.quality.webp: must be between 1 and 100, not 101"),
        ("[images]\nquality = { webp = \"best\" }\n", "2: error: images.quality.webp: expected a quality from 1 to 100 or \"auto\", not \"best\""),
        ("[images]\nquality = \"high\"\n", "2: error: images.quality: expected \"auto\" or a table such as { webp = 80 }"),
        ("[images.quality]\nauto = { ssim = 1.2 }\n", "2: error: images.quality.auto.ssim: must be at least 0.5 and below 1, not 1.2"),
        ("[images.quality]\nauto = { webp = [90, 40] }\n", "2: error: images.quality.auto.webp: expected [floor, ceiling] such as [40, 90]"),
        ("[images.quality]\nauto = { png = [1, 2] }\n", "2: error: images.quality.auto.png: unknown key (did you mean jpeg?); known here: ssim, ssimulacra2, webp, avif, jpeg"),
        ("[images.quality]\npng = 80\n", "2: error: images.quality.png: unknown key (did you mean jpeg?); known here: webp, avif, jpeg, jxl, auto"),
        ("[images]\nkeep_metadata = [\"gps\"]\n", "2: error: images.keep_metadata: \"gps\" cannot be kept; allowed: copyright, artist (GPS, serial numbers and MakerNotes never are)"),
        ("[fetch]\ntimeout = \"soon\"\n", "2: error: fetch.timeout: \"soon\" is not a duration such as \"30s\", \"500ms\", \"24h\" or \"7d\""),
        ("[cache]\nmax_size = \"huge\"\n", "2: error: cache.max_size: \"huge\" is not a size such as \"50MB\" or \"5GB\""),
        ("[outptu]\n", "1: error: outptu: unknown key (did you mean output?); known here: output, images, fetch, cache, build"),
        ("[output]\npublic_path = \"_img\"\n", "2: error: output.public_path: must be a path starting with / or an http(s) URL, not \"_img\""),
        ("[fetch]\nconcurrency = 8\nconcurrency = 9\n", "3: error: concurrency is set twice"),
        ("[fetch]\nttl = 2024-01-01\n", "2: error: fetch.ttl: expected a duration such as \"30s\", found a date or time"),
        ("[images]\nwidths = [480]\n\n[[images.quality]]\nwebp = 80\n", "4: error: images.quality: expected a table, found an array"),
        ("[output]\nmarkup = \"picture\"\n[output]\n", "3: error: table [output] is defined twice"),
        ("[output]\nrelative_urls = \"yes\"\n", "2: error: output.relative_urls: \"yes\" is not true, false or \"auto\""),
        ("[output]\nrelative_urls = 1\n", "2: error: output.relative_urls: expected true, false or \"auto\", found an integer"),
    ])
    func errorsNameTheFileLineAndKey(text: String, expected: String) {
        do {
            _ = try load(text)
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.description.hasSuffix("imgbake.toml:" + expected) || error.description.contains("imgbake.toml:" + expected), "\(error)")
        }
    }

    @Test func qualitiesAreFixedOrChosenPerImage() throws {
        // Keys written before automatic qualities keep their meaning.
        var config = try load("[images]\nquality = { webp = 75, avif = 45, jpeg = 70 }\n")
        #expect(config.images.quality.webp == 75 && config.images.quality.avif == 45 && config.images.quality.jpeg == 70)
        // The default: every lossy format chosen per image, each with its own floor and ceiling.
        config = try load("[images]\nwidths = [480]\n")
        for format in [ImageFormat.webp, .avif, .jpeg] { #expect(config.images.quality.choice(for: format) == .auto(.defaults(for: format))) }
        // "auto" for every lossy format, each with its own floor and ceiling.
        config = try load("[images]\nquality = \"auto\"\n")
        for format in [ImageFormat.webp, .avif, .jpeg] { #expect(config.images.quality.choice(for: format) == .auto(.defaults(for: format))) }
        // A target and bounds; WebP (automatic by default) takes them without being named.
        config = try load("""
            [images.quality]
            jpeg = "auto"
            avif = 50
            auto = { ssim = 0.985, webp = [50, 95], jpeg = [60, 90] }
            """)
        #expect(config.images.quality.webp == .auto(AutoQuality(ssim: 9850, floor: 50, ceiling: 95)))
        #expect(config.images.quality.jpeg == .auto(AutoQuality(ssim: 9850, floor: 60, ceiling: 90)))
        #expect(config.images.quality.avif == 50)
        // The fingerprint of a build sees the target (a change builds the pages again).
        #expect(config.images.quality.webp.description == "auto:ssim=0.9850:50-95" && QualityChoice.fixed(80).description == "80")
        // A SSIMULACRA2 target is AVIF's alone, and part of its key; 0 is none.
        config = try load("[images.quality]\nauto = { ssimulacra2 = 70 }\n")
        #expect(config.images.quality.avif.description == "auto:ssim=0.9650:50-75:ss2=70")
        #expect(config.images.quality.webp.description == "auto:ssim=0.9650:60-90")
        config = try load("[images.quality]\nauto = { ssimulacra2 = 0 }\n")
        #expect(config.images.quality.avif.description == "auto:ssim=0.9650:50-75")
    }

    @Test func relativeURLsAreChosenPerPageUnlessForced() throws {
        #expect(try load("[images]\nwidths = [480]\n").output.relativeURLs == .auto)
        #expect(try load("[output]\nrelative_urls = \"auto\"\n").output.relativeURLs == .auto)
        #expect(try load("[output]\nrelative_urls = true\n").output.relativeURLs == .always)
        #expect(try load("[output]\nrelative_urls = false\n").output.relativeURLs == .never)
    }

    @Test func durations() {
        #expect(DurationText.parse("500ms") == .milliseconds(500))
        #expect(DurationText.parse("1h30m") == .seconds(5400))
        #expect(DurationText.parse("2w") == .seconds(1_209_600))
        #expect(DurationText.parse("90") == .seconds(90))
        #expect(DurationText.parse("5 parsecs") == nil && DurationText.parse("") == nil)
    }
}
