import CommonMark
import Foundation
@testable import ImgBake
import ImgBakeTestSupport
import Testing
import Yams

/// Stylesheets, front matter and feeds: each scanned, rewritten by byte splices, and the result read
/// back with a real parser (Yams, imgbake's TOML parser, cmark-gfm, JSONSerialization, the XML tokenizer).
@Suite struct SiteSourceScannerTests {
    var offline = OfflineRewrite()

    init() {
        offline.output.baseURL = RemoteURL.resolve("https://example.org/blog/")
    }

    func scan(_ path: String, _ text: String) -> PageScan {
        SourceScanner.scan(SourceFile(path: path, kind: SourceFile.kind(forPath: path)!, bytes: Array(text.utf8)))
    }

    /// The page with each reference's bytes replaced by `replacement(reference)`: every other byte kept.
    func spliced(_ scan: PageScan, _ replacement: (ImageReference) -> String) throws -> String {
        String(decoding: try Splicer.apply(scan.references.map { Edit($0.range, replacement($0)) }, to: scan.file.bytes), as: UTF8.self)
    }

    func absolute(_ source: ImageSource) -> String { "https://example.org" + offline.localPath(source) }

    @Test func kindsByExtension() {
        #expect(SourceFile.kind(forPath: "a/site.CSS") == .css)
        #expect(SourceFile.kind(forPath: "feed.json") == .feed)
        #expect(SourceFile.kind(forPath: "index.xml") == .feed)
        #expect(SourceFile.kind(forPath: "atom.atom") == .feed)
        #expect(SourceFile.kind(forPath: "feed.rss") == .feed)
        #expect(SourceFile.kind(forPath: "a.png") == nil)
        #expect(SourceFile.kind(forPath: "dir.css/readme") == nil)
    }

    // MARK: Stylesheets

    @Test func stylesheetURLsResolveAgainstTheStylesheetsFolder() throws {
        let css = """
        @import url(base.css);
        .hero { background: url(../img/hero.jpg) no-repeat; }
        .logo { background-image: url("/img/logo.png"); }
        @font-face { src: url(font.woff2); }
        .set { background-image: image-set(url(a.png) 1x, url('b.png') 2x); }
        .far { background: url(../../outside.png); }
        """
        let scan = scan("css/site.css", css)
        #expect(scan.references.map(\.source) == [.local("img/hero.jpg"), .local("img/logo.png"), .local("css/a.png"), .local("css/b.png")])
        #expect(scan.references.map(\.kind) == [.css, .css, .cssImageSet, .cssImageSet])
        #expect(scan.diagnostics.count == 1 && scan.diagnostics[0].message.contains("outside the site"))
        #expect(scan.diagnostics[0].location?.line == 6)
        let rewritten = String(decoding: try #require(try offline.rewrite(scan).bytes), as: UTF8.self)
        #expect(rewritten.contains("url(\(offline.localPath(.local("img/hero.jpg")))) no-repeat"))
        #expect(rewritten.contains("url(\"\(offline.localPath(.local("img/logo.png")))\")"))
        #expect(rewritten.contains("image-set(url(\"\(offline.localPath(.local("css/a.png")))\") 1x type(\"image/png\")"))
        #expect(rewritten.contains("@import url(base.css);") && rewritten.contains("url(font.woff2)") && rewritten.contains("url(../../outside.png)"))
        // Scanned again, the stylesheet refers to imgbake's own outputs only.
        #expect(self.scan("css/site.css", rewritten).references.isEmpty)
    }

    // MARK: Front matter

    static let yamlPage = """
    ---
    title: "A post: with a colon"
    image: /img/plain.jpg   # the card
    cover: 'it''s.png'
    thumbnail: "thumbs/t.png"
    images:
      - a.png
      - 'b.png'
    og_image: https://cdn.example.com/og.jpg
    other: /img/not-a-key.png
    ---
    Body with ![an image](body.png).
    """

    @Test func yamlFrontMatterValuesAreReplacedAndNothingElse() throws {
        let scan = scan("posts/p.md", Self.yamlPage)
        #expect(scan.diagnostics.isEmpty)
        #expect(scan.references.filter { $0.kind == .frontMatter }.map(\.source.description)
                    == ["/img/plain.jpg", "/posts/it's.png", "/posts/thumbs/t.png", "/posts/a.png", "/posts/b.png", "https://cdn.example.com/og.jpg"])
        #expect(scan.references.last?.kind == .markdownImage)
        let rewrite = try offline.rewrite(scan)
        let bytes = String(decoding: try #require(rewrite.bytes), as: UTF8.self)
        #expect(bytes == (try spliced(scan) { offline.localPath($0.source) }))
        // Yams reads the new values; the keys imgbake does not own keep theirs.
        let block = try #require(FrontMatterScanner.block(in: Array(bytes.utf8)))
        let front = try #require(try Yams.load(yaml: String(decoding: Array(bytes.utf8)[block.contents], as: UTF8.self)) as? [String: Any])
        #expect(front["image"] as? String == offline.localPath(.local("img/plain.jpg")))
        #expect(front["cover"] as? String == offline.localPath(.local("posts/it's.png")))
        #expect(front["images"] as? [String] == [offline.localPath(.local("posts/a.png")), offline.localPath(.local("posts/b.png"))])
        #expect(front["title"] as? String == "A post: with a colon")
        #expect(front["other"] as? String == "/img/not-a-key.png")
        #expect(bytes.contains("# the card"))
        let body = offline.localPath(.local("posts/body.png"))
        #expect(bytes.contains("![an image](\(body))."))
    }

    @Test func frontMatterIsNotMarkdownContent() {
        let page = "---\nimage: a.png\n---\n[x]: other.png\n"
        let masked = FrontMatterScanner.masked(Array(page.utf8))
        #expect(masked.count == page.utf8.count)
        #expect(String(decoding: masked, as: UTF8.self).hasPrefix("   \n            \n   \n[x]"))
        // cmark-gfm would have made "image: a.png" a heading; with the front matter blanked it sees no heading.
        #expect(!MarkdownParser.parse(masked).contains { $0.type == "heading" })
        #expect(MarkdownParser.parse(Array(page.utf8)).contains { $0.type == "heading" })
    }

    @Test func aValueThatCannotBeLocatedExactlyIsAWarningAndStays() throws {
        let page = "---\nimage: >\n  folded.png\ncover: \"esc\\u0041.png\"\n---\n"
        let scan = scan("p.md", page)
        #expect(scan.references.isEmpty)
        #expect(scan.diagnostics.compactMap(\.location?.line) == [2, 4])
        #expect(try offline.rewrite(scan).bytes == nil)
    }

    @Test func invalidYAMLIsAWarningWithTheLine() {
        let scan = scan("p.md", "---\nimage: [a.png\n---\nbody\n")
        #expect(scan.references.isEmpty)
        #expect(scan.diagnostics.first?.message.contains("not valid YAML") == true)
        let deep = self.scan("p.md", "---\nimage: " + String(repeating: "[", count: 100_000) + "\n---\n")
        #expect(deep.references.isEmpty && deep.diagnostics.count == 1 && deep.diagnostics[0].message.count < 400)
    }

    @Test func tomlFrontMatterValuesAreReplacedAndNothingElse() throws {
        let page = """
        +++
        title = "T"
        image = "/img/a.jpg" # card
        cover = 'c.png'
        images = ["x.png", 'y.png']
        draft = false
        [params]
        image = "nested.png"
        +++
        Text.
        """
        let scan = scan("p.md", page)
        #expect(scan.diagnostics.isEmpty)
        #expect(scan.references.map(\.source.description) == ["/img/a.jpg", "/c.png", "/x.png", "/y.png"])
        let bytes = try #require(try offline.rewrite(scan).bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == (try spliced(scan) { offline.localPath($0.source) }))
        let block = try #require(FrontMatterScanner.block(in: bytes))
        let document = try TOMLParser.parse(Array(bytes[block.contents]))
        #expect(document["image"]?.value == .string(offline.localPath(.local("img/a.jpg"))))
        #expect(document["cover"]?.value == .string(offline.localPath(.local("c.png"))))
        #expect(document["title"]?.value == .string("T"))
        guard case .table(let params)? = document["params"]?.value else { Issue.record("params"); return }
        #expect(params["image"]?.value == .string("nested.png"))
    }

    // MARK: JSON Feed

    static let jsonFeed = #"""
    {
      "version": "https://jsonfeed.org/version/1.1",
      "title": "Blog",
      "items": [
        {
          "id": "1",
          "image": "https:\/\/example.org\/blog\/img\/one.jpg",
          "banner_image": "/blog/img/banner.png",
          "content_html": "<p>Hi<\/p><img src=\"/blog/img/inline.png\" alt=\"x\"><img src='https://images.example.com/r.jpg'>",
          "tags": ["a", 1, null, true]
        }
      ]
    }
    """#

    @Test func jsonFeedImagesBecomeAbsoluteAndTheFeedStillParses() throws {
        var settings = ScanSettings()
        settings.baseURL = offline.output.baseURL
        settings.siteRoot = "/blog/"
        let scan = SourceScanner.scan(SourceFile(path: "feed.json", kind: .feed, bytes: Array(Self.jsonFeed.utf8)), settings: settings)
        #expect(scan.diagnostics.isEmpty)
        #expect(scan.references.map(\.source) == [.local("img/one.jpg"), .local("img/banner.png"), .local("img/inline.png"),
                                                   .remote(RemoteURL.resolve("https://images.example.com/r.jpg")!)])
        #expect(scan.references.map(\.kind) == [.feed, .feed, .feedHTML, .feedHTML])
        #expect(scan.references.allSatisfy { $0.absolute })
        let bytes = try #require(try offline.rewrite(scan).bytes)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let item = try #require((json["items"] as? [[String: Any]])?.first)
        #expect(item["image"] as? String == absolute(.local("img/one.jpg")))
        #expect(item["banner_image"] as? String == absolute(.local("img/banner.png")))
        let html = try #require(item["content_html"] as? String)
        #expect(html.contains("<img src=\"\(absolute(.local("img/inline.png")))\" alt=\"x\">"))
        #expect(html.contains("<img src='\(absolute(.remote(RemoteURL.resolve("https://images.example.com/r.jpg")!)))'>"))
        #expect(json["title"] as? String == "Blog")
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""tags": ["a", 1, null, true]"#))
    }

    @Test func jsonThatIsNotAFeedHasNoReferences() {
        #expect(scan("data.json", #"{"image": "a.png"}"#).references.isEmpty)
        #expect(scan("data.json", #"{"version": "https://jsonfeed.org/version/1", "image": "a.png""#).references.isEmpty)
        #expect(scan("list.json", String(repeating: "[", count: 100_000)).references.isEmpty)
        // `\u` takes four hex digits, not a sign: not JSON, so not a feed.
        #expect(scan("feed.json", #"{"version": "https://jsonfeed.org/version/1", "image": "a\u+abc.png"}"#).references.isEmpty)
    }

    @Test func aFeedWithoutBaseURLIsAWarningAndStays() throws {
        var offline = OfflineRewrite()
        offline.output.baseURL = nil
        let scan = scan("feed.json", #"{"version": "https://jsonfeed.org/version/1.1", "items": [{"image": "a.png"}]}"#)
        let rewrite = try offline.rewrite(scan)
        #expect(rewrite.bytes == nil)
        // A warning: the build goes on (`--strict` fails on it, and then it is an error).
        #expect(rewrite.diagnostics.count == 1 && rewrite.diagnostics[0].severity == .warning)
        #expect(rewrite.diagnostics[0].keptReference == .unwritable)
        #expect(rewrite.diagnostics[0].message.contains("output.base_url") && rewrite.diagnostics[0].location?.line == 1)
    }

    // MARK: RSS and Atom

    static let rss = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!-- a comment with <enclosure url="no.png" type="image/png"/> -->
    <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
    <channel>
      <title>Blog &amp; more</title>
      <image><url> /img/logo.png </url><title>Blog</title></image>
      <item>
        <enclosure url="/img/enc.jpg" length="1" type="image/jpeg"/>
        <enclosure url="/audio.mp3" type="audio/mpeg"/>
        <media:content url='/img/media.png' medium="image"/>
        <media:thumbnail url="/img/th.png"/>
        <description>&lt;img src=&quot;/img/desc.png&quot; alt=&quot;&quot;&gt; &amp;amp;</description>
        <content:encoded><![CDATA[<p><img src="/img/cdata.png"></p>]]></content:encoded>
      </item>
    </channel>
    </rss>
    """

    @Test func rssImagesBecomeAbsoluteAndTheFeedStillTokenises() throws {
        let scan = scan("index.xml", Self.rss)
        #expect(scan.diagnostics.isEmpty)
        #expect(scan.references.map(\.source.description) == ["/img/logo.png", "/img/enc.jpg", "/img/media.png", "/img/th.png", "/img/desc.png", "/img/cdata.png"])
        #expect(scan.references.map(\.kind) == [.feed, .feed, .feed, .feed, .feedHTML, .feedHTML])
        let bytes = try #require(try offline.rewrite(scan).bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("<url> \(absolute(.local("img/logo.png"))) </url>"))
        #expect(text.contains("<enclosure url=\"\(absolute(.local("img/enc.jpg")))\" length=\"1\" type=\"image/jpeg\"/>"))
        #expect(text.contains("url=\"/audio.mp3\"") && text.contains("<enclosure url=\"no.png\""))
        #expect(text.contains("&lt;img src=&quot;\(absolute(.local("img/desc.png")))&quot; alt=&quot;&quot;&gt; &amp;amp;"))
        #expect(text.contains("<![CDATA[<p><img src=\"\(absolute(.local("img/cdata.png")))\"></p>]]>"))
        // The rewritten feed tokenises, and scanned again it has only absolute URLs that are not images of the site.
        #expect(XMLTokens.tokenize(bytes) != nil)
        #expect(scan.references.count == XMLTokens.tokenize(Array(Self.rss.utf8))!.count - XMLTokens.tokenize(bytes)!.count + 6)
    }

    @Test func atomEnclosuresAndHTMLContent() throws {
        let atom = """
        <?xml version="1.0"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <entry>
            <link rel="enclosure" type="image/png" href="/img/e.png"/>
            <link rel="alternate" href="/post.html"/>
            <content type="html">&lt;img src="/img/c.png"&gt;</content>
            <summary type="text">&lt;img src="/img/not.png"&gt;</summary>
          </entry>
        </feed>
        """
        let scan = scan("atom.xml", atom)
        #expect(scan.references.map(\.source.description) == ["/img/e.png", "/img/c.png"])
        let bytes = try #require(try offline.rewrite(scan).bytes)
        #expect(String(decoding: bytes, as: UTF8.self).contains("&lt;img src=\"\(absolute(.local("img/c.png")))\"&gt;"))
        #expect(XMLTokens.tokenize(bytes) != nil)
    }

    /// Relative URLs in an item's content resolve as feed readers resolve them: against `xml:base`,
    /// else the item's link, else the feed's folder.
    @Test func relativeURLsInItemContentResolveAgainstTheItemsLink() {
        var settings = ScanSettings()
        settings.baseURL = RemoteURL.resolve("https://example.org/blog/")
        settings.siteRoot = "/blog/"
        settings.ownPrefix = "/blog/_img/"
        let rss = """
        <rss version="2.0"><channel><title>t</title>
        <item><description>&lt;img src="cat.jpg"&gt;</description><link>https://example.org/blog/posts/hello/</link></item>
        <item><link>https://example.org/blog/posts/two.html</link><description>&lt;img src="../img/dog.png"&gt;</description></item>
        <item><link>https://elsewhere.example/p/</link><description>&lt;img src="far.png"&gt;</description></item>
        <item><description>&lt;img src="near.png"&gt;</description></item>
        </channel></rss>
        """
        let found = SourceScanner.scan(SourceFile(path: "feeds/index.xml", kind: .feed, bytes: Array(rss.utf8)), settings: settings)
        #expect(found.references.map(\.source.description) == ["/posts/hello/cat.jpg", "/img/dog.png", "https://elsewhere.example/p/far.png",
                                                                "/feeds/near.png"])
        let atom = """
        <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://example.org/blog/">
        <entry><link rel="alternate" href="posts/a/"/><content type="html">&lt;img src="a.png"&gt;</content></entry>
        <entry xml:base="posts/b/"><link href="https://example.org/blog/elsewhere/"/><content type="html">&lt;img src="b.png"&gt;</content></entry>
        </feed>
        """
        let entries = SourceScanner.scan(SourceFile(path: "atom.xml", kind: .feed, bytes: Array(atom.utf8)), settings: settings)
        // The feed's xml:base is in scope for the first entry's content too: it wins over the link.
        #expect(entries.references.map(\.source.description) == ["/a.png", "/posts/b/b.png"])
        let json = #"{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "1", "url": "https://example.org/blog/posts/j/", "content_html": "<img src=\"j.png\">"}]}"#
        let items = SourceScanner.scan(SourceFile(path: "feed.json", kind: .feed, bytes: Array(json.utf8)), settings: settings)
        #expect(items.references.map(\.source.description) == ["/posts/j/j.png"])
    }

    @Test func xmlThatIsNotAFeedOrNotWellFormed() {
        #expect(scan("sitemap.xml", "<urlset><url><loc>/a.png</loc></url></urlset>").references.isEmpty)
        let broken = scan("index.xml", "<rss><channel><image><url>/a.png</url></image><item><enclosure url=/x.png type=image/png/>")
        #expect(broken.references.isEmpty)
        #expect(broken.diagnostics.first?.message.contains("not well-formed") == true)
    }

    // MARK: Aspect ratio

    @Test func widthAndHeightThatContradictTheImageAreAWarning() {
        func element(_ width: Int?, _ height: Int?) -> ImageElement {
            ImageElement(tagRange: 0..<1, insertionOffset: 0, attributeNames: [], sizes: nil, inPicture: false,
                         widthsOverride: nil, formatsOverride: nil, width: width, height: height)
        }
        let spec = VariantSpec(width: 400, format: .png, quality: 0, effort: 0, animated: false, keepMetadata: [])
        let blob = BlobID(of: [1])
        let image = StoredVariant(spec: spec, key: spec.key(original: blob), blob: blob, format: .png, width: 400, height: 300, bytes: 1)
        let here = SourceLocation(file: "a.html", line: 3, column: 7)
        #expect(AspectCheck.check(element(800, 600), image: image, at: here) == nil)
        #expect(AspectCheck.check(element(200, 155), image: image, at: here) == nil) // 3 % off
        #expect(AspectCheck.check(element(400, 400), image: image, at: here)?.location == here)
        #expect(AspectCheck.check(element(400, nil), image: image, at: here) == nil)
    }
}
