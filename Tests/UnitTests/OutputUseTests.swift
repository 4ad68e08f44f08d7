import Foundation
@testable import ImgBake
import ImgBakeTestSupport
import Testing

/// What keeps an image file alive is what the scanners find as uses of imgbake's outputs: every kind
/// of reference, however it is written. The property: whatever a rewrite puts into a page, scanning
/// the page again finds as in use, for every reference kind (the list must name them all, so a kind
/// added later fails here until it is covered) and every way of writing its URL.
@Suite struct OutputUseTests {
    static let base = RemoteURL.resolve("https://example.org/")!

    func settings(siteRoot: String = "/", local: Bool = true) -> ScanSettings {
        var settings = ScanSettings()
        settings.baseURL = RemoteURL.resolve("https://example.org" + siteRoot)
        settings.siteRoot = siteRoot
        settings.ownPrefix = siteRoot + "_img/"
        settings.localImages = local
        return settings
    }

    /// The files a page uses as the build counts them (`PageModel.uses`), from one scan of `bytes`.
    static func uses(_ path: String, _ bytes: [UInt8], _ settings: ScanSettings) -> [OutputUse] {
        let scan = SourceScanner.scan(SourceFile(path: path, kind: SourceFile.kind(forPath: path)!, bytes: bytes), settings: settings)
        let model = PageModel(scan, settings: PageModel.Settings(ownOutputPrefix: nil, publicPaths: settings.ownPrefixes,
                                                                 defaultRequest: VariantRequest(widths: [480], formats: [.original])))
        return model.uses(nil, publicPaths: settings.ownPrefixes)
    }

    @Test func theResolverKnowsOutputsHoweverTheyAreWritten() {
        let resolver = ReferenceResolver(settings: settings(), pagePath: "posts/p.html")
        #expect(resolver.resolve("/_img/a-0123456789-480.webp") == .output("a-0123456789-480.webp"))
        #expect(resolver.resolve("https://example.org/_img/a-0123456789-1200.jpg") == .output("a-0123456789-1200.jpg"))
        #expect(resolver.resolve("../_img/a-0123456789-480.webp?v=1#x") == .output("a-0123456789-480.webp"))
        #expect(resolver.resolve("/_img/a%20b.png") == .output("a b.png"))
        #expect(resolver.resolve("/_img/deeper/a.png") == .ignored)
        #expect(resolver.resolve("https://other.example/_img/a.png") == .image(.remote(RemoteURL.resolve("https://other.example/_img/a.png")!)))
        // Under a sub-path, and with the site's own images not localised: outputs are still outputs.
        let blog = ReferenceResolver(settings: settings(siteRoot: "/blog/", local: false), pagePath: "index.html")
        #expect(blog.resolve("/blog/_img/a.png") == .output("a.png"))
        #expect(blog.resolve("https://example.org/blog/_img/a.png") == .output("a.png"))
        #expect(blog.resolve("_img/a.png") == .output("a.png"))
        #expect(blog.resolve("/elsewhere/a.png") == .ignored)
        // A CDN public path.
        var cdn = settings()
        cdn.ownPrefix = "https://cdn.example.com/i/"
        #expect(ReferenceResolver(settings: cdn, pagePath: "p.html").resolve("https://cdn.example.com/i/a.png") == .output("a.png"))
    }

    /// One source per reference kind, referring to the site's `img/a.png` as `url`.
    static func source(_ kind: ImageReference.Kind, _ url: String) -> (path: String, text: String) {
        let page = { (body: String) in ("p/page.html", "<!doctype html><html><head><title>t</title></head><body>\(body)</body></html>") }
        switch kind {
        case .imgSrc: return page("<img src=\"\(url)\" alt=\"\">")
        case .imgSrcset: return page("<img srcset=\"\(url) 1x, \(url) 2x\" alt=\"\">")
        case .sourceSrcset: return page("<picture><source srcset=\"\(url) 1x\"><img srcset=\"\(url) 2x\" alt=\"\"></picture>")
        case .markdownImage: return ("p/post.md", "# T\n\n![a](\(url))\n")
        case .markdownDefinition: return ("p/post.md", "# T\n\n![a][r]\n\n[r]: \(url)\n")
        case .videoPoster: return page("<video poster=\"\(url)\"></video>")
        case .inputImage: return page("<input type=\"image\" src=\"\(url)\" alt=\"go\">")
        case .svgImage: return page("<svg><image href=\"\(url)\"/></svg>")
        case .link: return page("<link rel=\"icon\" href=\"\(url)\">")
        case .linkSrcset: return page("<link rel=\"preload\" as=\"image\" imagesrcset=\"\(url) 1x\">")
        case .meta: return page("<meta property=\"og:image\" content=\"\(url)\"><meta name=\"twitter:image\" content=\"\(url)\">")
        case .imageLink: return page("<a href=\"\(url)\"><img src=\"\(url)\" alt=\"\"></a>")
        case .jsonLD:
            return page("<script type=\"application/ld+json\">{\"@type\":\"Article\",\"image\":[\"\(url)\"],\"publisher\":{\"logo\":{\"@type\":\"ImageObject\",\"url\":\"\(url)\"}}}</script>")
        case .css: return ("p/site.css", ".hero { background: url(\"\(url)\") }")
        case .cssImageSet: return ("p/site.css", ".hero { background-image: image-set(url(\(url)) 1x) }")
        case .frontMatter: return ("p/post.md", "---\ntitle: T\nimage: \(url)\n---\nText.\n")
        case .feed:
            return ("p/index.xml", "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:media=\"http://search.yahoo.com/mrss/\"><channel><title>t</title><item><enclosure url=\"\(url)\" type=\"image/png\" length=\"1\"/><media:content url=\"\(url)\" medium=\"image\"/></item></channel></rss>")
        case .feedHTML:
            return ("p/index.xml", "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title><item><description>&lt;img src=&quot;\(url)&quot;&gt;</description></item></channel></rss>")
        }
    }

    /// Root-relative, page-relative and absolute through `base_url`, under `/` and under a sub-path.
    static let spellings: [(siteRoot: String, url: String)] = [
        ("/", "/img/a.png"), ("/", "../img/a.png"), ("/", "https://example.org/img/a.png"),
        ("/blog/", "/blog/img/a.png"), ("/blog/", "../img/a.png"), ("/blog/", "https://example.org/blog/img/a.png"),
    ]

    static let cases = ImageReference.Kind.allCases.flatMap { kind in spellings.map { (kind, $0.siteRoot, $0.url) } }

    @Test(arguments: cases)
    func whatARewritePutsInAScanFindsInUse(kind: ImageReference.Kind, siteRoot: String, url: String) throws {
        let settings = settings(siteRoot: siteRoot)
        let (path, text) = Self.source(kind, url)
        let scan = SourceScanner.scan(SourceFile(path: path, kind: SourceFile.kind(forPath: path)!, bytes: Array(text.utf8)), settings: settings)
        #expect(scan.references.contains { $0.kind == kind }, "no \(kind.rawValue) reference found in \(text)")
        #expect(scan.references.allSatisfy { $0.source == .local("img/a.png") }, "\(scan.references.map(\.source))")
        var offline = OfflineRewrite()
        offline.output.baseURL = settings.baseURL
        offline.output.siteRoot = siteRoot
        offline.output.publicPath = settings.ownPrefix
        let rewrite = try offline.rewrite(scan)
        let bytes = try #require(rewrite.bytes, "\(rewrite.diagnostics)")
        let written = Set(rewrite.outputs.map(\.fileName))
        #expect(!written.isEmpty)

        let again = SourceScanner.scan(SourceFile(path: path, kind: scan.file.kind, bytes: bytes), settings: settings)
        #expect(again.references.isEmpty, "left to localise after a rewrite: \(again.references.map(\.source))")
        #expect(Set(again.outputs.map(\.name)) == written, "\(String(decoding: bytes, as: UTF8.self))")
        #expect(again.outputs.allSatisfy { $0.location.file == path && $0.location.line >= 1 })
        #expect(Set(Self.uses(path, bytes, settings).map(\.name)).isSuperset(of: written))
    }

    /// The raw reading of the bytes keeps what no scanner reads: a mention in a comment, a link the
    /// scanners do not follow, an absolute URL under `base_url`; not another site's `/_img/`.
    @Test func mentionsOutsideReferencesKeepFilesToo() {
        let text = """
        <!-- /_img/a-0123456789-480.webp --><a href="https://example.org/_img/b-0123456789-1200.jpg">b</a>
        <a href="https://elsewhere.example/_img/c-0123456789-480.jpg">c</a>
        """
        let uses = Self.uses("p.html", Array(text.utf8), settings())
        #expect(uses.map(\.name) == ["a-0123456789-480.webp", "b-0123456789-1200.jpg"])
        #expect(uses.map(\.location.column) == [6, 46])
    }

    /// A page nested too deep to parse (left unread by the build) still keeps the files it names, in
    /// any form: it is read for output names after the images folder, not parsed (which took 20 s
    /// for 100,000 levels, in every in-place build that met such a page).
    @Test func aPageTooDeepToParseKeepsTheFilesItNames() {
        let deep = String(repeating: "<div>", count: 100_000)
        let text = deep + """
        <img src="../_img/a-0123456789-480.webp"><img src="/_img/b-0123456789-960.jpg">
        <img src="_img/c-0123456789.svg"> _img/not-an-output.png See ../_img/d-0123456789-480.png.
        <script type="application/ld+json">{"image": "https:\\/\\/example.org\\/_img\\/e-0123456789-1320.jpg"}</script>
        """ + String(repeating: "</div>", count: 100_000)
        let settings = settings()
        let names = OwnImageReferences.unparsedUses(in: Array(text.utf8), ownPrefix: settings.ownPrefix, publicPaths: settings.ownPrefixes)
        #expect(names == ["a-0123456789-480.webp", "b-0123456789-960.jpg", "c-0123456789.svg", "d-0123456789-480.png",
                          "e-0123456789-1320.jpg"])
    }

    /// A link around an image counts when it points at the same image or another image file (a
    /// thumbnail linking to the full picture); not a link to a page, and `image_links = "off"` and
    /// `data-imgbake="skip"` on the link leave it.
    @Test func aLinkAroundAnImageToAnImageIsAReference() {
        let html = """
        <a href="/img/a.png"><img src="/img/a.png" alt=""><img src="/img/a.png" alt=""></a>
        <a href="https://images.example/full/b.jpg?x=1"><img src="/img/b-thumb.png" alt=""></a>
        <a href="/img/c.png" data-imgbake="skip"><img src="/img/c.png" alt=""></a>
        <a href="/page.html"><picture><img src="/img/d.png" alt=""></picture></a>
        <a href="/download?id=7"><img src="/img/e.png" alt=""></a>
        """
        let file = SourceFile(path: "p.html", kind: .html, bytes: Array(html.utf8))
        let links = HTMLScanner.scan(file, settings: settings()).references.filter { $0.kind == .imageLink }
        #expect(links.map(\.location.line) == [1, 2])
        #expect(links.map(\.source.description) == ["/img/a.png", "https://images.example/full/b.jpg?x=1"])
        var off = settings()
        off.imageLinks = false
        #expect(!HTMLScanner.scan(file, settings: off).references.contains { $0.kind == .imageLink })
    }
}
