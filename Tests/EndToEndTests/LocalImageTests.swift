import Foundation
@testable import ImgBake
import ImgBakeTestSupport
import Testing
import Vips

/// The site's own images and the references outside `<img>`, built from real pages with real image
/// files; every image a rewritten page names is decoded with libvips.
@Suite struct LocalImageTests {
    let site = TestSite()

    init() {
        for name in ["hubble.jpg", "hubble-wide.jpg", "coffee.png"] { site.folder.write("site/img/" + name, Paths.image(name)) }
    }

    func config(_ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var config = site.configuration(origin: nil)
        change(&config)
        return config
    }

    /// The images folder's files that `text` names (`/_img/…` or an absolute URL ending in it), decoded:
    /// file name → width.
    func decoded(in text: String, prefix: String = "/_img/") throws -> [String: Int] {
        var widths: [String: Int] = [:]
        for match in text.matches(of: try Regex(NSRegularExpression.escapedPattern(for: prefix) + #"([a-z0-9-]+-[0-9a-f]{10}(?:-\d+)?\.(?:jpg|png|webp))"#)) {
            let name = String(match.output[1].substring!)
            let bytes = try #require(site.folder.read("out/_img/" + name), "\(name) is not in the images folder")
            widths[name] = try VipsImage.open(ImageBuffer(bytes)).width
        }
        return widths
    }

    func messages(_ result: BuildResult) -> [String] { result.diagnostics.map(\.description) }

    @Test func localImagesInPagesBecomeVariantsAndTheOriginalsStay() async throws {
        site.page("posts/a.html", """
        <img src="../img/hubble.jpg" alt="h">
        <img src="/img/coffee.png" alt="c">
        <div style="background: url('../img/coffee.png')"></div>
        <meta property="og:image" content="/img/hubble-wide.jpg">
        """)
        site.page("posts/b.md", "![wide](../img/hubble-wide.jpg)\n")
        let result = try await site.build(config { $0.output.baseURL = RemoteURL.resolve("https://example.org/") })
        #expect(result.exitCode == 0, "\(messages(result))")
        let a = try #require(site.output("posts/a.html"))
        #expect(!a.contains("../img/hubble.jpg") && !a.contains("\"/img/coffee.png\"") && !a.contains("'../img/coffee.png'"))
        #expect(a.contains("<picture") && a.contains("srcset="))
        let widths = try decoded(in: a)
        #expect(widths.keys.contains { $0.hasPrefix("hubble-") && $0.hasSuffix("-1000.jpg") } && widths.values.contains(300))
        // The social card: one 1200 px image, an absolute URL under base_url.
        let social = try decoded(in: a, prefix: "content=\"https://example.org/_img/")
        #expect(social.count == 1 && social.values.first == 1200)
        let b = try #require(site.output("posts/b.md"))
        // The source itself (2,000 px, its sRGB profile and metadata dropped): smaller than a 1,920 px re-encode.
        #expect(try decoded(in: b).values.first == 2000)
        // The original files are left where they are (other things may link to them).
        #expect(site.folder.read("out/img/hubble.jpg") == Paths.image("hubble.jpg") && site.folder.exists("site/img/hubble.jpg"))
        #expect(result.summary.imagesRead == 3 && result.summary.imagesDownloaded == 0 && result.summary.requests == 0)
    }

    @Test func underASubPathWithABaseHref() async throws {
        site.page("posts/a.html", """
        <base href="/blog/img/">
        <img src="hubble.jpg" alt="h"><img src="/blog/img/coffee.png" alt="c"><img src="/elsewhere/x.png" alt="x">
        """)
        let result = try await site.build(config { $0.output.siteRoot = "/blog/"; $0.output.publicPath = "/blog/_img/" })
        let a = try #require(site.output("posts/a.html"))
        let widths = try decoded(in: a, prefix: "/blog/_img/")
        #expect(widths.keys.contains { $0.hasPrefix("hubble-") } && widths.keys.contains { $0.hasPrefix("coffee-") })
        #expect(a.contains("src=\"/elsewhere/x.png\""))
        #expect(messages(result).contains { $0.contains("posts/a.html:2:") && $0.contains("outside the site") })
    }

    @Test func outsideMissingAndLinkedOutReferencesAreWarningsAndStay() async throws {
        let outside = TemporaryFolder()
        outside.write("secret.png", Paths.image("coffee.png"))
        try FileManager.default.createSymbolicLink(atPath: site.site + "/img/link.png", withDestinationPath: outside.path + "/secret.png")
        let page = """
        <img src="../../up.png" alt="a">
        <img src="/img/missing.png" alt="b">
        <img src="/img/link.png" alt="c">
        """
        site.page("a.html", page)
        let result = try await site.build(config())
        #expect(result.exitCode == 0)
        #expect(site.output("a.html") == page)
        let text = messages(result).joined(separator: "\n")
        #expect(text.contains("a.html:1:11:") && text.contains("outside the site folder"))
        #expect(text.contains("a.html:2:") && text.contains("missing.png"))
        #expect(text.contains("a.html:3:") && text.contains("link.png"))
        #expect(site.folder.files(under: "out/_img").isEmpty)
    }

    @Test func aTouchedFileIsHashedNotTransformedAndAChangedOneGetsANewName() async throws {
        site.page("a.html", "<img src=\"img/coffee.png\" alt=\"c\">")
        let first = try await site.build(config())
        #expect(first.summary.variantsEncoded > 0)
        let before = try decoded(in: try #require(site.output("a.html")))

        // Touched: same bytes, new mtime. The page is read again, the file hashed; nothing encoded.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: site.site + "/img/coffee.png")
        let touched = try await site.build(config())
        #expect(touched.summary.pagesScanned == 1 && touched.summary.variantsEncoded == 0 && touched.summary.imagesCached == 1)
        #expect(try decoded(in: try #require(site.output("a.html"))) == before)

        // Untouched: the page is not even read.
        let again = try await site.build(config())
        #expect(again.summary.pagesUnchanged == 1 && again.summary.pagesScanned == 0)

        // Changed: a new image, a new content-hashed name.
        site.folder.write("site/img/coffee.png", Paths.image("astronaut-round.png"))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)], ofItemAtPath: site.site + "/img/coffee.png")
        let changed = try await site.build(config())
        #expect(changed.summary.variantsEncoded > 0 && changed.summary.imagesRead == 1)
        let after = try decoded(in: try #require(site.output("a.html")))
        #expect(Set(after.keys).isDisjoint(with: before.keys) && after.values.allSatisfy { $0 == 256 })
    }

    @Test func stylesheetsAreRewrittenWithURLsRelativeToThemselves() async throws {
        site.page("css/site.css", """
        .hero { background: url(../img/hubble.jpg) }
        .set { background-image: image-set(url("../img/coffee.png") 1x) }
        @font-face { src: url(f.woff2) }
        """)
        let result = try await site.build(config())
        #expect(result.exitCode == 0, "\(messages(result))")
        let css = try #require(site.output("css/site.css"))
        #expect(css.contains("url(/_img/hubble-") && css.contains("type(\"image/webp\")") && css.contains("url(f.woff2)"))
        let widths = try decoded(in: css)
        #expect(widths.count == 3 && widths.values.contains(1000) && widths.values.contains(300))
    }

    @Test func frontMatterValuesAreReplacedAndEverythingElseKept() async throws {
        let yaml = """
        ---
        title: "Post"   # kept
        image: ../img/hubble.jpg
        images: ['../img/coffee.png']
        ---
        ![body](../img/coffee.png)

        """
        let toml = "+++\ntitle = 'T'\ncover = \"/img/hubble-wide.jpg\"\n+++\nText\n"
        site.page("posts/y.md", yaml)
        site.page("posts/t.md", toml)
        let result = try await site.build(config())
        #expect(result.exitCode == 0, "\(messages(result))")
        let y = try #require(site.output("posts/y.md"))
        let t = try #require(site.output("posts/t.md"))
        #expect(y.hasPrefix("---\ntitle: \"Post\"   # kept\nimage: /_img/hubble-") && y.contains("images: ['/_img/coffee-"))
        #expect(t.hasPrefix("+++\ntitle = 'T'\ncover = \"/_img/hubble-wide-") && t.hasSuffix("\"\n+++\nText\n"))
        // One file each, the widest in the original format: not a srcset.
        #expect(try decoded(in: String(y.prefix(while: { $0 != "!" }))).values.sorted() == [300, 1000])
        #expect(try decoded(in: t).values.sorted() == [2000])
        #expect(y.split(separator: "\n").count == yaml.split(separator: "\n").count)
    }

    @Test func feedsGetAbsoluteURLsOrAWarningWithoutBaseURL() async throws {
        site.page("feed.json", #"{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "1", "image": "/img/coffee.png", "content_html": "<img src=\"/img/hubble.jpg\">"}]}"#)
        site.page("index.xml", #"<rss><channel><item><enclosure url="/img/coffee.png" type="image/png"/><description>&lt;img src="/img/hubble.jpg"&gt;</description></item></channel></rss>"#)
        let without = try await site.build(config())
        #expect(site.output("feed.json")?.contains("\"/img/coffee.png\"") == true)
        // The build does not fail on them: warnings, not errors.
        #expect(without.exitCode == 0 && !without.diagnostics.contains { $0.severity == .error })
        let warnings = without.diagnostics.filter { $0.severity == .warning }.map(\.description)
        #expect(warnings.contains { $0.hasPrefix("feed.json:1:") && $0.contains("output.base_url") })
        #expect(warnings.contains { $0.hasPrefix("index.xml:1:") && $0.contains("output.base_url") })
        // `--strict` fails the build on a reference it leaves as it is: then they are errors.
        let strict = try await site.build(config { $0.strict = true })
        #expect(strict.exitCode == 1)
        #expect(strict.diagnostics.filter { $0.message.contains("output.base_url") }.allSatisfy { $0.severity == .error })

        let with = try await site.build(config { $0.output.baseURL = RemoteURL.resolve("https://example.org/") })
        #expect(with.exitCode == 0)
        let json = try #require(site.folder.read("out/feed.json"))
        let feed = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        let item = try #require((feed["items"] as? [[String: Any]])?.first)
        #expect((item["image"] as? String)?.hasPrefix("https://example.org/_img/coffee-") == true)
        #expect((item["content_html"] as? String)?.hasPrefix("<img src=\"https://example.org/_img/hubble-") == true)
        let xml = try #require(site.folder.read("out/index.xml"))
        #expect(XMLTokens.tokenize(xml) != nil)
        let text = String(decoding: xml, as: UTF8.self)
        #expect(text.contains("enclosure url=\"https://example.org/_img/coffee-") && text.contains("&lt;img src=\"https://example.org/_img/hubble-"))
        #expect(try decoded(in: text, prefix: "https://example.org/_img/").values.sorted() == [300, 1000])
    }

    @Test func jsonAndXMLThatAreNotFeedsAreCopiedAsTheyAre() async throws {
        let data = #"{"image": "/img/coffee.png", "n": 1.50}"#
        let sitemap = "<urlset><url><loc>https://example.org/img/coffee.png</loc></url></urlset>"
        site.page("data.json", data)
        site.page("sitemap.xml", sitemap)
        let result = try await site.build(config { $0.output.baseURL = RemoteURL.resolve("https://example.org/") })
        #expect(result.exitCode == 0 && result.diagnostics.isEmpty, "\(messages(result))")
        #expect(site.output("data.json") == data && site.output("sitemap.xml") == sitemap)
    }

    @Test func inPlaceASecondBuildOfEveryKindChangesNothing() async throws {
        site.page("s.css", "a { background: url(img/coffee.png) }")
        site.page("p.md", "---\nimage: img/coffee.png\n---\n![x](img/hubble.jpg)\n")
        site.page("feed.json", #"{"version": "https://jsonfeed.org/version/1", "items": [{"image": "img/coffee.png"}]}"#)
        site.page("index.xml", #"<rss><channel><image><url>/img/coffee.png</url></image></channel></rss>"#)
        let inPlace = config { $0.outputDirectory = nil; $0.output.baseURL = RemoteURL.resolve("https://example.org/") }
        let first = try await site.build(inPlace)
        #expect(first.summary.pagesWritten == 4 && first.exitCode == 0, "\(messages(first))")
        let built = site.folder.snapshot(under: "site")
        let again = try await site.build(inPlace)
        #expect(again.summary.pagesWritten == 0)
        // Built again from the sources the cache kept (`--refresh` reads every page), each file comes
        // out the same: nothing is written.
        var refreshed = inPlace
        refreshed.fetch.policy = .refresh
        let reread = try await site.build(refreshed)
        #expect(reread.summary.pagesScanned == 4 && reread.summary.pagesWritten == 0 && reread.summary.references == 5, "\(reread.summary)")
        #expect(site.folder.snapshot(under: "site") == built)
    }

    @Test func missingAltIsAWarningAnErrorOrNothing() async throws {
        site.page("a.html", "<p>\n  <img src=\"img/coffee.png\"><img src=\"img/coffee.png\" alt=\"\">")
        let warned = try await site.build(config { $0.requireAlt = .warn })
        #expect(warned.exitCode == 0)
        #expect(warned.diagnostics.filter { $0.message.contains("without alt") }.map(\.description).map { $0.prefix(14) } == ["a.html:2:3: wa"])
        // The build decides on the code it carries, not on the message's text.
        #expect(warned.diagnostics.filter { $0.code == .missingAlt }.map(\.message).allSatisfy { $0.contains("without alt") })
        #expect(warned.diagnostics.filter { $0.code == .missingAlt }.count == 1)
        let failed = try await site.build(config { $0.requireAlt = .error; $0.fetch.policy = .refresh })
        #expect(failed.exitCode == 1 && failed.diagnostics.contains { $0.severity == .error && $0.message.contains("without alt") })
        let quiet = try await site.build(config { $0.requireAlt = .off; $0.fetch.policy = .refresh })
        #expect(!quiet.diagnostics.contains { $0.message.contains("without alt") })
    }

    @Test func widthAndHeightThatContradictTheImageAreAWarning() async throws {
        site.page("a.html", "<img src=\"img/coffee.png\" alt=\"ok\" width=\"150\" height=\"100\">\n<img src=\"img/coffee.png\" alt=\"bad\" width=\"100\" height=\"100\">")
        let result = try await site.build(config())
        let warnings = result.diagnostics.filter { $0.message.contains("contradict") }.map(\.description)
        #expect(warnings.count == 1 && warnings[0].hasPrefix("a.html:2:11: warning:") && warnings[0].contains("300×200"), "\(result.diagnostics)")
    }

    @Test func scanReportsEveryKind() async throws {
        site.page("a.html", "<img src=\"img/coffee.png\" alt=\"\"><div style=\"background:url(img/hubble.jpg)\"></div><meta property=\"og:image\" content=\"/img/hubble.jpg\">")
        site.page("p.md", "---\nimage: img/coffee.png\n---\n")
        site.page("s.css", "a { background: url(img/coffee.png) }")
        site.page("feed.json", #"{"version": "https://jsonfeed.org/version/1", "items": [{"image": "img/coffee.png"}]}"#)
        let scan = try await SiteScan.scan(site: site.site, jobs: 1)
        #expect(Set(scan.entries.map(\.kind)) == [.imgSrc, .css, .meta, .frontMatter, .feed])
        #expect(scan.json().contains("\"kind\" : \"front-matter\""))
    }

    @Test func theReportOfALocalBuildValidatesAgainstItsSchema() async throws {
        site.page("a.html", "<img src=\"img/coffee.png\" alt=\"\"><div style=\"background:url(img/hubble.jpg)\"></div>")
        site.page("p.md", "---\nimage: img/coffee.png\n---\n")
        site.page("feed.json", #"{"version": "https://jsonfeed.org/version/1", "items": [{"image": "img/coffee.png"}]}"#)
        let result = try await site.build(config {
            $0.reportPath = site.folder.path + "/report.json"
            $0.output.baseURL = RemoteURL.resolve("https://example.org/")
        })
        let report = try #require(result.report)
        let validation = try await validateReport(report.json(), in: site.folder)
        #expect(validation.stdout.hasSuffix("valid\n"), "\(validation.stdout)\(validation.stderr)")
        #expect(Set(report.references.map(\.kind)) == ["img-src", "css", "front-matter", "feed"])
        #expect(report.images.allSatisfy { $0.outcome == .read } && report.totals.imagesRead == 2)
        #expect(report.totals.referencesLocalised == 4)
    }

    @Test func theDepfileNamesLocalImages() async throws {
        site.page("a.html", "<img src=\"img/coffee.png\" alt=\"c\">")
        let command = try await runImgbake(["build", site.site, "--out", site.out, "--cache-dir", site.cache,
                                            "--depfile", site.folder.path + "/deps.d", "--quiet"])
        #expect(command.status == 0, "\(command.stderr)")
        let depfile = try #require(site.folder.text("deps.d"))
        #expect(depfile.contains(site.site + "/img/coffee.png \\\n") && depfile.contains("\n" + site.site + "/img/coffee.png:\n"))
    }

    /// `build.exclude`: a theme's own files (Sphinx's `_static/`) are neither read nor rewritten, in
    /// place or with `--out` (where they are copied as they are); the pages that use them still are.
    @Test(arguments: [true, false])
    func excludedFilesAreCopiedAsTheyAre(out: Bool) async throws {
        site.folder.write("site/_static/icon.png", Paths.image("coffee.png"))
        let css = ".logo { background: url(icon.png) }\n"
        site.page("_static/theme.css", css)
        site.page("_static/search.html", "<img src=\"icon.png\" alt=\"s\">")
        site.page("index.html", "<link rel=\"stylesheet\" href=\"_static/theme.css\"><img src=\"img/coffee.png\" alt=\"c\">")
        let result = try await site.build(config {
            $0.exclude = [Glob("_static/**")!]
            if !out { $0.outputDirectory = nil }
        })
        #expect(result.exitCode == 0 && result.summary.pagesScanned == 1, "\(messages(result))")
        let root = out ? "out" : "site"
        #expect(site.folder.text(root + "/_static/theme.css") == css)
        #expect(site.folder.text(root + "/_static/search.html") == "<img src=\"icon.png\" alt=\"s\">")
        // Its own link is page-relative (as Sphinx writes it), so its image is too (relative_urls = "auto").
        #expect(site.folder.text(root + "/index.html")?.contains("src=\"_img/coffee-") == true)
        #expect(Glob("_static/**")!.matches("_static/a/b.css") && !Glob("_static/**")!.matches("x/_static/a.css"))
        #expect(Glob("*.draft.html")!.matches("posts/a.draft.html") && Glob("/drafts/")!.matches("drafts/x.md"))
        #expect(!Glob("/drafts/")!.matches("posts/drafts/x.md") && Glob("**/drafts/*.md")!.matches("a/b/drafts/x.md"))
    }

    /// `output.originals = "referenced"`: an original whose every reference became variants stays out
    /// of `--out`; one something still names stays (a download link, a reference left as it is, a
    /// script), and comes back when a page names it again; copies placed earlier go.
    @Test func originalsNothingNamesStayOutOfTheOutput() async throws {
        site.folder.write("site/img/astronaut.jpg", Paths.image("astronaut.jpg"))
        site.folder.write("site/img/my photo.png", Paths.image("coffee.png"))
        site.page("index.html", "<img src=\"img/hubble.jpg\" alt=\"h\"><a href=\"img/astronaut.jpg\">download</a><img src=\"img/my%20photo.png\" alt=\"m\">")
        site.page("feed.json", #"{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "1", "image": "img/coffee.png"}]}"#)
        site.page("app.js", "const hero = '/img/hubble-wide.jpg';\n")
        _ = try await site.build(config())
        #expect(Set(site.folder.files(under: "out/img")) == ["astronaut.jpg", "coffee.png", "hubble-wide.jpg", "hubble.jpg", "my photo.png"])
        let lean = config {
            $0.output.originals = .referenced
            $0.output.baseURL = RemoteURL.resolve("https://example.org/")
        }
        let first = try await site.build(lean)
        #expect(first.exitCode == 0, "\(messages(first))")
        // hubble.jpg and coffee.png became variants everywhere; the rest are named.
        #expect(Set(site.folder.files(under: "out/img")) == ["astronaut.jpg", "hubble-wide.jpg", "my photo.png"])
        try expectEveryLocalReferenceResolves("out")
        site.page("feed.json", #"{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "1", "image": "img/coffee.png", "external_url": "https://example.org/img/hubble.jpg"}]}"#)
        _ = try await site.build(lean)
        #expect(Set(site.folder.files(under: "out/img")) == ["astronaut.jpg", "hubble-wide.jpg", "hubble.jpg", "my photo.png"])
        try expectEveryLocalReferenceResolves("out")
        #expect(Originals.unmentioned(["img/a.png", "b/c.png"], texts: ["x"]) { _ in Array("see /img/a%2Epng".utf8) } == ["b/c.png"])
        #expect(Originals.unmentioned(["img/a.png"], texts: ["x"]) { _ in nil } == nil)
    }

    /// Every `src`, `href`, `url()` and JSON string of the output that names a local file names one
    /// that is there.
    func expectEveryLocalReferenceResolves(_ root: String) throws {
        for path in site.folder.files(under: root) where Originals.isText(path) {
            let text = try #require(site.folder.text(root + "/" + path))
            for match in text.matches(of: /(?:src|href)="([^"#?:]+)"|url\(([^)#?:]+)\)|"(?:image|external_url)": "(?:https:\/\/example\.org)?([^"]+)"/) {
                let target = String(match.output.1 ?? match.output.2 ?? match.output.3 ?? "").removingPercentEncoding ?? ""
                let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) + "/" : ""
                let resolved = target.hasPrefix("/") ? String(target.dropFirst()) : folder + target
                #expect(site.folder.exists(root + "/" + resolved), "\(path) names \(target), which is not in the output")
            }
        }
    }
}
