import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// `output.relative_urls = "auto"`: a page refers to image files as its own links are written.
@Suite struct RelativeURLTests {
    static func links(_ html: String, path: String = "page.html") -> PageLinks {
        HTMLScanner.scan(SourceFile(path: path, kind: .html, bytes: Array(html.utf8)), settings: .remoteOnly).links
    }

    @Test func theLinksOfASphinxPageAreRelative() {
        let links = Self.links(#"""
            <link rel="stylesheet" href="_static/alabaster.css"><script src="_static/doctools.js"></script>
            <link rel="search" title="Search" href="search.html"><link rel="canonical" href="https://example.org/index.html">
            <a href="guide.html">Guide</a> <a href="#top">top</a> <a href="mailto:a@b.test">mail</a> <a href="//cdn.test/x">x</a>
            """#)
        #expect(links == PageLinks(pageRelative: 4) && links.arePageRelative)
    }

    @Test func oneRootRelativeLinkMeansTheSiteIsServedFromItsRoot() {
        // Hugo's links (.RelPermalink), and MkDocs' 404 page, which is served at any path.
        #expect(Self.links(#"<link rel="stylesheet" href="/css/site.css"><a href="/posts/">Posts</a>"#) == PageLinks(rootRelative: 2))
        let mixed = Self.links(#"<link rel="stylesheet" href="assets/main.css"><a href="/docs/">Home</a>"#)
        #expect(mixed == PageLinks(pageRelative: 1, rootRelative: 1) && !mixed.arePageRelative)
    }

    @Test func aPageWithoutLinksOrWithABaseKeepsThePublicPath() {
        #expect(!Self.links(##"<img src="http://a.test/x.jpg"><a href="#x">x</a>"##).arePageRelative)
        let based = Self.links(#"<base href="/"><a href="guide.html">Guide</a>"#)
        #expect(based.hasBase && !based.arePageRelative)
    }

    @Test func imagesAndTheImagesFolderAreNotTheSitesLinks() {
        // What imgbake rewrites (icons, image links, its own files) is not counted, so the page reads
        // the same before and after an in-place build.
        let links = Self.links(#"""
            <link rel="icon" href="/favicon.png"><link rel="preload" as="image" href="/_img/a-0123456789-480.webp">
            <a href="/img/big.JPG?v=1"><img src="/img/big.jpg"></a> <a href="/_img/a-0123456789-480.webp">a</a>
            <a href="../_img/b-0123456789-480.webp">b</a> <a href="notes.html">notes</a>
            """#, path: "posts/a.html")
        #expect(links == PageLinks(pageRelative: 1))
    }

    /// Rewritten offline, the page's URLs as `auto`, `true` and `false` choose them.
    @Test(arguments: [
        (RelativeURLPolicy.auto, #"<link rel="stylesheet" href="../style.css">"#, "../_img/"),
        (.auto, #"<link rel="stylesheet" href="/style.css">"#, "/_img/"),
        (.auto, "", "/_img/"),
        (.always, #"<link rel="stylesheet" href="/style.css">"#, "../_img/"),
        (.never, #"<link rel="stylesheet" href="../style.css">"#, "/_img/"),
    ])
    func thePolicyDecidesThePathEachPageUses(policy: RelativeURLPolicy, head: String, expected: String) throws {
        var offline = OfflineRewrite()
        offline.output.relativeURLs = policy
        let page = head + #"<p><img src="http://a.test/x.jpg" alt=""></p>"#
        let file = SourceFile(path: "posts/a.html", kind: .html, bytes: Array(page.utf8))
        let scan = HTMLScanner.scan(file, settings: .remoteOnly)
        let rewritten = try #require(try offline.rewrite(scan).bytes)
        let text = String(decoding: rewritten, as: UTF8.self)
        #expect(text.contains("src=\"\(expected)x-") && text.contains("srcset=\"\(expected)x-"), "\(text)")
        // In place, the next build reads the same links from the rewritten page.
        #expect(HTMLScanner.scan(SourceFile(path: file.path, kind: .html, bytes: rewritten), settings: .remoteOnly).links == scan.links)
    }

    @Test func stylesheetsKeepThePublicPathUnlessForced() {
        var output = OutputSettings()
        #expect(OutputNaming.forPage("css/a.css", kind: .css, links: PageLinks(pageRelative: 1), output: output).publicPath == "/_img/")
        output.relativeURLs = .always
        #expect(OutputNaming.forPage("css/a.css", kind: .css, output: output).publicPath == "../_img/")
    }
}
