import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

/// Replaces the 10-hex content hash in output names, so expectations do not depend on encoder bytes.
func normalizingHashes(_ text: String) -> String {
    text.replacing(/-[0-9a-f]{10}(-\d+)?\./) { match in "-HASH\(match.output.1 ?? "")." }
}

@Suite struct EndToEndTests {
    static let images = Paths.exampleImages

    @Test func manyPagesSharingImagesMakeExactlyOneRequestPerUniqueURL() async throws {
        let origin = try Origin(latencyMilliseconds: 30)
        let site = TestSite()
        for n in 0..<40 {
            let a = Self.images[n % 6], b = Self.images[(n + 1) % 6], c = Self.images[(n * 5) % 6]
            if n % 4 == 0 {
                site.page("posts/p\(n).md", "# Post \(n)\n\n![a](\(origin.url("img/" + a)))\n\n![b][b]\n\n[b]: \(origin.url("img/" + b))\n")
            } else {
                site.page("p\(n).html", """
                <img src="\(origin.url("img/" + a))"><img srcset="\(origin.url("img/" + b)) 1x, \(origin.url("img/" + c)) 2x">
                <picture><source srcset="\(origin.url("img/" + c))"><img src="\(origin.url("img/" + a))"></picture>
                """)
            }
        }
        let result = try await site.build(origin: origin)
        let stats = try await origin.stats()
        #expect(stats.requests_total == 6)
        #expect(stats.paths.count == 6 && stats.paths.values.allSatisfy { $0 == 1 })
        #expect(result.summary.imagesDownloaded == 6)
        #expect(result.summary.pagesWritten == 40)
        #expect(result.exitCode == 0)
        #expect(result.diagnostics.isEmpty)
    }

    @Test func secondBuildMakesNoRequestNoTransformAndWritesIdenticalBytes() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("index.html", Self.images.map { "<img src=\"\(origin.url("img/" + $0))\" alt=\"\($0)\">" }.joined(separator: "\n"))
        site.page("post.md", "![h](\(origin.url("img/hubble.jpg")) \"t\")\n")
        let first = try await site.build(origin: origin)
        #expect(first.summary.imagesDownloaded == 6)
        let firstOutput = site.folder.digests(under: "out")
        try await origin.reset()

        // Into a new output folder: every page written as the first build made it, from the copies it
        // kept, and every image file from the cache; nothing scanned.
        var config = site.configuration(origin: origin)
        config.outputDirectory = site.folder.path + "/out2"
        let second = try await site.build(config)
        #expect(second.summary.pagesReused == 2 && second.summary.pagesScanned == 0, "\(second.summary.lines)")
        #expect(second.summary.variantsEncoded == 0)
        #expect(site.folder.digests(under: "out2") == firstOutput)
        // Into the wiped output folder: the pages as written, from the cache.
        try FileManager.default.removeItem(atPath: site.out)
        let third = try await site.build(origin: origin)
        #expect(third.summary.pagesRestored == 2 && third.summary.uniqueImages == 0 && third.summary.variantsEncoded == 0)
        #expect(site.folder.digests(under: "out") == firstOutput)
        #expect(try await origin.stats().requests_total == 0)
    }

    /// `images.fallback`: an `<img>` in a `<picture>` gets one JPEG (at the widest width up to
    /// `fallback_width`) and no srcset; a link to the image still gets the widest JPEG, and a CSS
    /// `image-set()` the widest of each format. `"every-width"` and `markup = "img"` keep a JPEG per width.
    @Test(arguments: ["one", "every-width", "img"])
    func aPictureHasOneFallbackFileUnlessEveryWidthIsAskedFor(setting: String) async throws {
        let origin = try Origin()
        let site = TestSite()
        let url = origin.url("img/hubble-wide.jpg")
        site.page("index.html", """
        <img src="\(url)" alt="wide">
        <a href="\(url)">full size</a>
        <div style="background-image: image-set(url(\(url)) 1x)"></div>
        """)
        var config = site.configuration(origin: origin)
        config.images.widths = [480, 960, 1320, 1920]
        config.images.quality.webp = 80
        config.images.quality.jpeg = 80
        if setting == "every-width" { config.images.fallback = .everyWidth }
        if setting == "img" { config.output.markup = .img }
        _ = try await site.build(config)
        let page = try #require(site.output("index.html"))
        let jpegs = site.folder.files(under: "out/_img").filter { $0.hasSuffix(".jpg") }
            .compactMap { Int($0.firstMatch(of: /-(\d+)\.jpg$/)!.output.1) }.sorted()
        let image = try #require(page.firstMatch(of: /<img\b[^>]*>/).map { String(page[$0.range]) })
        switch setting {
        case "one":
            // 960 for the <img>; 1920 for the link and the image-set() (the source, 2,000 px, stands for it).
            #expect(jpegs.contains(960) && jpegs.count == 2, "\(jpegs)")
            #expect(image.contains("-960.jpg\"") && !image.contains("srcset") && !image.contains("sizes"), "\(image)")
            // The box is the image's at its widest: the same as a srcset of every width gave.
            #expect(image.contains("width=\"1920\"") || image.contains("width=\"2000\""), "\(image)")
            #expect(page.contains("<source hidden type=\"image/webp\" srcset=\"") && page.contains(".webp 1920w"))
        case "every-width":
            #expect(jpegs.starts(with: [480, 960, 1320]), "\(jpegs)")
            #expect(image.contains("srcset=\"") && image.contains(".jpg 480w"), "\(image)")
        default:
            // One <img srcset> of WebP files, no <picture>: the fallback is every width there is.
            #expect(!page.contains("<picture") && image.contains(".webp 480w"), "\(image)")
        }
    }

    /// A PNG's fallback is the smaller of a JPEG searched to the quality target and the PNG: a photograph
    /// (coffee.png) becomes a JPEG, a drawing (diagram.png) stays PNG, and a PNG with transparency
    /// (astronaut-round.png) gets no JPEG at all. One file per width, whichever it is.
    @Test func aPNGPhotographGetsAJPEGFallbackAndADrawingStaysPNG() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("index.html", ["coffee.png", "diagram.png", "astronaut-round.png"]
            .map { "<img src=\"\(origin.url("img/" + $0))\" alt=\"\($0)\">" }.joined(separator: "\n"))
        var config = site.configuration(origin: origin)
        config.reportPath = site.folder.path + "/report.json"
        _ = try await site.build(config)
        let files = site.folder.files(under: "out/_img").filter { !$0.hasSuffix(".webp") }
        #expect(files.filter { $0.hasPrefix("coffee-") }.allSatisfy { $0.hasSuffix(".jpg") }, "\(files)")
        #expect(files.filter { $0.hasPrefix("diagram-") }.allSatisfy { $0.hasSuffix(".png") }, "\(files)")
        #expect(files.filter { $0.hasPrefix("astronaut-round-") }.allSatisfy { $0.hasSuffix(".png") }, "\(files)")
        #expect(files.count == 3, "one fallback file each: \(files)")
        // The JPEG is smaller than the PNG the same settings make.
        let jpeg = try #require(files.first { $0.hasPrefix("coffee-") })
        #expect(site.folder.read("out/_img/" + jpeg)!.count * 2 < Paths.image("coffee.png").count)
        // The report says which was kept, and why.
        let report = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: config.reportPath!)))
        let instead = Dictionary(uniqueKeysWithValues: report.images.flatMap(\.files).compactMap { file in file.instead.map { (file.name, $0) } })
        let coffee = try #require(instead.first { $0.key.hasPrefix("coffee-") }?.value)
        #expect(coffee.format == "png" && (coffee.bytes ?? 0) > site.folder.read("out/_img/" + jpeg)!.count && coffee.why.contains("smaller"))
        let diagram = try #require(instead.first { $0.key.hasPrefix("diagram-") }?.value)
        #expect(diagram.format == "jpeg" && diagram.bytes != nil)
        let round = try #require(instead.first { $0.key.hasPrefix("astronaut-round-") }?.value)
        #expect(round.format == "jpeg" && round.bytes == nil && round.why.contains("transparency"))
    }

    @Test func notFoundAndNotAnImageLeaveTheReferenceUnchangedWithAWarning() async throws {
        let origin = try Origin()
        let site = TestSite()
        let page = """
        <p>ok</p>
        <img src="\(origin.url("fault/404/gone.jpg"))" alt="gone">
          <img alt="html" src='\(origin.url("fault/html/page.jpg"))'>
        <img src="\(origin.url("img/astronaut.jpg"))">
        """
        site.page("index.html", page)
        let result = try await site.build(origin: origin)
        #expect(result.exitCode == 0)
        let warnings = result.diagnostics.filter { $0.severity == .warning }.map(\.description)
        #expect(warnings == [
            "index.html:2:11: warning: http://images.test/fault/404/gone.jpg: HTTP 404",
            "index.html:3:24: warning: http://images.test/fault/html/page.jpg: not an image (Content-Type text/html, starts with \"<!doctype html><title>Oo…\")",
        ])
        let output = try #require(site.output("index.html"))
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0...2].joined(separator: "\n") == page.split(separator: "\n", omittingEmptySubsequences: false)[0...2].joined(separator: "\n"))
        #expect(lines[3].hasPrefix("<picture"))
    }

    @Test func everyOutputDecodesWithLibvipsAtTheWidthItsNameSays() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("index.html", Self.images.map { "<img src=\"\(origin.url("img/" + $0))\">" }.joined())
        _ = try await site.build(origin: origin)
        let files = site.folder.files(under: "out/_img")
        var widths: [String: [Int]] = [:]
        for file in files {
            let match = try #require(file.firstMatch(of: /^(.+)-[0-9a-f]{10}-(\d+)\.(\w+)$/))
            let bytes = try #require(site.folder.read("out/_img/" + file))
            let image = try VipsImage.open(ImageBuffer(bytes), allPages: match.output.3 == "gif" || match.output.3 == "webp")
            #expect(image.width == Int(match.output.2)!, "\(file)")
            #expect(ImageFormat.sniff(bytes)?.fileExtension == String(match.output.3), "\(file)")
            widths["\(match.output.1).\(match.output.3)", default: []].append(image.width)
        }
        #expect(widths.mapValues { $0.sorted() } == [
            // One fallback file each (`images.fallback = "one"`), at the widest width up to 960 (capped at
            // the source's); WebP at every width, capped at 1920.
            "hubble-wide.jpg": [960], "hubble-wide.webp": [480, 960, 1320, 1920],
            // The source (1,000 px) is smaller than a 960 px JPEG re-encode and stands for the fallback.
            "hubble.jpg": [1000], "hubble.webp": [480, 960, 1000],
            "astronaut.jpg": [512], "astronaut.webp": [480, 512],
            "coffee.jpg": [300], "coffee.webp": [300], // never upscaled; opaque: its JPEG is smaller than its PNG
            "astronaut-round.png": [256], "astronaut-round.webp": [256],
            "deep-field.gif": [160], "deep-field.webp": [160],
        ])
        // The animation stays animated in both formats.
        for file in files where file.hasPrefix("deep-field") {
            let image = try VipsImage.open(ImageBuffer(site.folder.read("out/_img/" + file)!), allPages: true)
            #expect(image.pages == 4, "\(file)")
        }
        // Transparency survives.
        let round = try #require(files.first { $0.hasPrefix("astronaut-round") && $0.hasSuffix(".png") })
        #expect(try VipsImage.open(ImageBuffer(site.folder.read("out/_img/" + round)!)).hasAlpha)
    }

    @Test func pictureMarkupKeepsTheAuthorsTagByteForByte() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", """
        <IMG class=hero  ALT="Galaxies &amp; more" src="\(origin.url("img/hubble.jpg"))" data-x='1'>
        <img src="\(origin.url("img/astronaut.jpg"))" width="200" alt=""/>
        <img src="\(origin.url("img/coffee.png"))" sizes="50vw">
        """)
        _ = try await site.build(origin: origin)
        // The first, large and not a logo, is the likely LCP image; what follows it is below it (lazy).
        // The one the author shows 200 px wide gets sizes for that, its height from the image's
        // proportions, and widths up to about three times 200; lazy, its width fixed, it lets the browser
        // say how wide it is laid out (`sizes="auto, …"`). Each <img> has its one fallback file, no srcset.
        let expected = """
        <picture style="display:contents"><source hidden type="image/webp" srcset="/_img/hubble-HASH-480.webp 480w, /_img/hubble-HASH-960.webp 960w, /_img/hubble-HASH-1000.webp 1000w" sizes="(max-width: 960px) 100vw, 960px"><IMG class=hero  ALT="Galaxies &amp; more" src="/_img/hubble-HASH-1000.jpg" data-x='1' width="1000" height="872" fetchpriority="high" decoding="async"></picture>
        <picture style="display:contents"><source hidden type="image/webp" srcset="/_img/astronaut-HASH-480.webp 480w" sizes="auto, (max-width: 200px) 100vw, 200px"><img src="/_img/astronaut-HASH-480.jpg" width="200" alt="" height="200" loading="lazy" decoding="async"/></picture>
        <picture style="display:contents"><source hidden type="image/webp" srcset="/_img/coffee-HASH-300.webp 300w" sizes="50vw"><img src="/_img/coffee-HASH-300.jpg" sizes="50vw" width="300" height="200" loading="lazy" decoding="async"></picture>
        """
        let actual = normalizingHashes(try #require(site.output("a.html")))
        #expect(actual == expected, "\(actual)")
    }

    @Test func byteOrderMarkCRLFAndEverythingElseAreKept() async throws {
        let origin = try Origin()
        let site = TestSite()
        let url = origin.url("img/astronaut.jpg")
        let page = "\u{FEFF}<!doctype html>\r\n<p title='&lt;x&gt;'>caf\u{E9}</p>\r\n<picture><source srcset=\"\(url) 1x\"><img src='\(url)'></picture>\r\n<!-- \(url) -->\r\n"
        site.page("bom.html", page)
        _ = try await site.build(origin: origin)
        let output = try #require(site.folder.read("out/bom.html"))
        let local = try #require(site.output("bom.html")?.firstMatch(of: /\/_img\/astronaut-[0-9a-f]{10}-512\.jpg/)).output
        #expect(output == Array(page.replacing("<source srcset=\"\(url)", with: "<source srcset=\"\(local)")
            .replacing("<img src='\(url)'", with: "<img src='\(local)'").utf8))
    }

    @Test func aPageWithNothingToRewriteIsNotWritten() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("plain.html", "<img src=\"/local.jpg\">")
        site.page("broken.html", "<img src=\"\(origin.url("fault/404/x.jpg"))\">")
        site.page("good.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        let before = FileStamp.of(site.site + "/plain.html")
        // In place: untouched (same time, same bytes).
        let inPlace = try await site.build(origin: origin, out: false)
        #expect(inPlace.summary.pagesWritten == 1)
        #expect(FileStamp.of(site.site + "/plain.html") == before)
        #expect(site.folder.text("site/broken.html") == "<img src=\"\(origin.url("fault/404/x.jpg"))\">")
    }

    @Test func withOutTheOutputIsACompleteSiteAndTheSourcesStayByteIdentical() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("plain.html", "<img src=\"/local.jpg\">")
        site.page("good.html", "<img src=\"\(origin.url("img/coffee.png"))\">")
        site.page("css/site.css", "body { color: #222 }")
        site.page("local.jpg", String(decoding: Paths.image("astronaut.jpg"), as: UTF8.self))
        site.page("imgbake.toml", "[build]\njobs = 1\n")
        let sources = site.folder.digests(under: "site")
        let result = try await site.build(origin: origin)
        #expect(result.summary.pagesWritten == 1)
        #expect(site.folder.digests(under: "site") == sources)
        #expect(site.folder.files(under: "out").filter { !$0.hasPrefix("_img/") } == ["css/site.css", "good.html", "local.jpg", "plain.html"])
        // What was not rewritten is an exact copy with the source's time — not a hard link: a later step
        // editing the output in place must not edit the source.
        #expect(site.output("plain.html") == site.folder.text("site/plain.html"))
        #expect(FileStamp.of(site.out + "/plain.html") == FileStamp.of(site.site + "/plain.html"))
        var a = stat(), b = stat()
        #expect(stat(site.site + "/plain.html", &a) == 0 && stat(site.out + "/plain.html", &b) == 0 && a.st_ino != b.st_ino)
        let handle = try #require(FileHandle(forWritingAtPath: site.out + "/plain.html"))
        handle.write(Data("edited in place".utf8))
        try handle.close()
        #expect(site.folder.text("site/plain.html") == "<img src=\"/local.jpg\">")
        #expect(site.output("good.html")?.contains("/_img/coffee-") == true)
    }

    @Test func markdownIsRewrittenInPlaceAndCodeIsLeftAlone() async throws {
        let origin = try Origin()
        let site = TestSite()
        let hubble = origin.url("img/hubble.jpg"), coffee = origin.url("img/coffee.png")
        site.page("post.md", """
        Intro ![deep
        field](\(hubble) "Title") and `![code](\(hubble))`.

            ![indented](\(hubble))

        ![cup][] and ![cup]

        [cup]: <\(coffee)> 'A cup'
        """)
        let result = try await site.build(origin: origin, out: false)
        #expect(result.exitCode == 0 && result.diagnostics.isEmpty)
        #expect(normalizingHashes(try #require(site.folder.text("site/post.md"))) == """
        Intro ![deep
        field](/_img/hubble-HASH-1000.jpg "Title") and `![code](\(hubble))`.

            ![indented](\(hubble))

        ![cup][] and ![cup]

        [cup]: </_img/coffee-HASH-300.jpg> 'A cup'
        """)
        #expect(site.folder.files(under: "site/_img").count == 2)
    }

    @Test func privateAddressesAreRefusedUnlessAllowedOrRouted() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"http://127.0.0.1:\(origin.port)/img/coffee.png\">")
        let refused = try await site.build(origin: nil)
        #expect(refused.diagnostics.map(\.description) == [
            "a.html:1:11: warning: http://127.0.0.1:\(origin.port)/img/coffee.png: refused to connect to private address 127.0.0.1 (use --allow-private-networks)",
        ])
        #expect(try await origin.stats().requests_total == 0)

        var allowed = site.configuration(origin: nil)
        allowed.fetch.allowPrivateNetworks = true
        #expect(try await site.build(allowed).summary.imagesDownloaded == 1)
    }

    @Test func aRedirectToAPrivateAddressIsRefusedToo() async throws {
        let origin = try Origin()
        let site = TestSite()
        // The origin itself is routed with --connect-to; port 9 on loopback is not.
        site.page("a.html", "<img src=\"\(origin.url("fault/redirect-to/127.0.0.1:9/coffee.png"))\">")
        let result = try await site.build(origin: origin)
        #expect(result.diagnostics.map(\.message) == [
            "http://images.test/fault/redirect-to/127.0.0.1:9/coffee.png: refused to connect to private address 127.0.0.1 (use --allow-private-networks)",
        ])
    }

    @Test func aRemoteBaseLeavesThePageAloneUnlessPublicPathIsAbsolute() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<head><base href=\"\(origin.url("img/"))\"></head><img src=\"coffee.png\">")
        let left = try await site.build(origin: origin)
        #expect(left.diagnostics.first?.message.hasPrefix("page has a remote <base href> (http://images.test/img/)") == true)
        #expect(site.output("a.html") == site.folder.text("site/a.html")) // copied as it is

        var config = site.configuration(origin: origin)
        config.output.publicPath = "https://cdn.example.com/_img/"
        _ = try await site.build(config)
        #expect(normalizingHashes(try #require(site.output("a.html"))).contains("src=\"https://cdn.example.com/_img/coffee-HASH-300.jpg\""))
    }
}
