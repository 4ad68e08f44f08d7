import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport
import Vips

/// What loads first: on pages shaped like the default themes of Hugo (ananke), Jekyll (minima),
/// MkDocs (Material) and Sphinx (alabaster), the likely Largest Contentful Paint image is the content's
/// first large image, never the logo, and gets `fetchpriority="high"`; the first screen is not lazy,
/// what lies further down is; an image the author shows at a width of theirs gets `sizes` for it, the
/// missing dimension and no candidates much wider than three times it; small images in the first
/// screen are written into the page unless its Content-Security-Policy forbids it.
@Suite struct LoadingPriorityTests {
    let site = TestSite()

    init() {
        for name in ["hubble.jpg", "hubble-wide.jpg", "coffee.png", "astronaut.jpg"] { site.folder.write("site/img/" + name, Paths.image(name)) }
        site.folder.write("site/img/logo.png", Paths.fixture("colour/two-colours.png"))
    }

    func build(_ change: (inout Configuration) -> Void = { _ in }) async throws -> BuildResult {
        var config = site.configuration(origin: nil)
        config.output.inlineBytes = 0
        change(&config)
        return try await site.build(config)
    }

    static let filler = String(repeating: "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>\n", count: 80)

    /// Each theme's shape: its frame, where its content is, how it shows images.
    static let themes: [(name: String, page: String)] = [
        ("hugo-ananke", """
        <!DOCTYPE html><html lang="en"><head><title>Post</title><link rel="stylesheet" href="/ananke/css/main.min.css"></head>
        <body class="ma0 avenir bg-near-white">
        <header class="cover bg-top" style="background-image: url('/img/hubble-wide.jpg');">
          <div class="bg-black-60 pb3-m pb6-l mid-gray"><nav class="pv3 ph3 ph4-ns" role="navigation"><a href="/" class="f3 fw2 hover-white no-underline white-90 dib"><img src="/img/logo.png" class="w100 mw5-ns" alt="My site"></a></nav></div>
        </header>
        <main class="pb7" role="main"><article class="flex-l flex-wrap justify-between mw8 center ph3">
        <section class="nested-copy-line-height lh-copy serif f4 nested-links mid-gray pr4-l w-two-thirds-l"><p>Intro.</p>
        <figure><img src="/img/hubble.jpg" alt="Deep field"></figure>
        \(filler)<p><img src="/img/astronaut.jpg" alt="Further down"></p></section></article></main>
        </body></html>
        """),
        ("jekyll-minima", """
        <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>First light</title></head>
        <body><header class="site-header" role="banner"><div class="wrapper"><a class="site-title" rel="author" href="/">My blog</a>
        <nav class="site-nav"><a class="page-link" href="/about/">About</a></nav></div></header>
        <main class="page-content" aria-label="Content"><div class="wrapper"><article class="post h-entry">
        <header class="post-header"><h1 class="post-title p-name">First light</h1></header>
        <div class="post-content e-content"><p>The telescope's first image:</p><p><img src="/img/hubble.jpg" alt="Hubble deep field" /></p>
        \(filler)<p><img src="/img/coffee.png" alt="Coffee" /></p></div></article></div></main>
        <footer class="site-footer h-card"><img src="/img/logo.png" alt="footer badge"></footer></body></html>
        """),
        ("mkdocs-material", """
        <!doctype html><html lang="en" class="no-js"><head><meta charset="utf-8"><title>Guide</title></head>
        <body dir="ltr"><header class="md-header" data-md-component="header"><nav class="md-header__inner md-grid" aria-label="Header">
        <a href="." title="Docs" class="md-header__button md-logo" aria-label="Docs"><img src="img/logo.png" alt="logo"></a></nav></header>
        <div class="md-container" data-md-component="container"><main class="md-main" data-md-component="main"><div class="md-main__inner md-grid">
        <div class="md-sidebar md-sidebar--primary" data-md-component="sidebar"><nav class="md-nav"><img src="img/coffee.png" alt="sponsor" width="400"></nav></div>
        <div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset"><h1>Guide</h1>
        <p><img alt="Deep field" src="img/hubble-wide.jpg" width="300" /></p>\(filler)<p><img alt="Later" src="img/astronaut.jpg" /></p>
        </article></div></div></main></div></body></html>
        """),
        ("sphinx-alabaster", """
        <!DOCTYPE html><html lang="en"><head><meta charset="utf-8" /><title>Docs</title></head>
        <body><div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
        <section id="docs"><h1>Docs</h1><a class="reference internal image-reference" href="_images/hubble.jpg"><img alt="Deep field" src="img/hubble.jpg" style="width: 600px;" /></a>
        \(filler)<figure class="align-default"><img alt="Astronaut" src="img/astronaut.jpg" /></figure></section></div></div></div>
        <div class="sphinxsidebar" role="navigation" aria-label="main navigation"><div class="sphinxsidebarwrapper">
        <p class="logo"><a href="index.html"><img class="logo" src="img/hubble-wide.jpg" alt="Logo"/></a></p></div></div></div></body></html>
        """),
    ]

    /// The `<img>` tag with `alt="<alt>"`.
    func tag(_ html: String, alt: String) throws -> String {
        let tags = html.matches(of: /<img\b[^>]*>/).map { String(html[$0.range]) }
        return try #require(tags.first { $0.contains("alt=\"\(alt)\"") }, "no <img alt=\"\(alt)\">")
    }

    /// The `<picture>` around that `<img>`: its `<source>`s carry the `srcset` and `sizes` (the `<img>`
    /// has the one fallback file).
    func picture(_ html: String, alt: String) throws -> String {
        let pictures = html.matches(of: /<picture\b.*?<\/picture>/.dotMatchesNewlines()).map { String(html[$0.range]) }
        return try #require(pictures.first { $0.contains("alt=\"\(alt)\"") }, "no <picture> around <img alt=\"\(alt)\">")
    }

    @Test(arguments: themes.map(\.name))
    func theContentsFirstLargeImageLoadsFirstNeverTheLogo(theme: String) async throws {
        let page = try #require(Self.themes.first { $0.name == theme }?.page)
        site.page("index.html", page)
        let result = try await build()
        #expect(result.exitCode == 0, "\(result.diagnostics)")
        let html = try #require(site.output("index.html"))
        let priorities = html.matches(of: /<img\b[^>]*fetchpriority="high"/).count + html.matches(of: /rel="preload"/).count
        #expect(priorities == 1, "one likely LCP image: \(html)")
        switch theme {
        case "hugo-ananke":
            // The cover is a CSS background in the header: preloaded; the logo in the nav is not it.
            #expect(html.contains("<link rel=\"preload\" as=\"image\" href=\"/_img/hubble-wide-") && html.contains("fetchpriority=\"high\"></head>"))
            // The logo above it is not lazy; the figure after it, below the cover, is.
            let logo = try tag(html, alt: "My site"), figure = try tag(html, alt: "Deep field")
            #expect(!logo.contains("fetchpriority") && !logo.contains("loading=") && figure.contains("loading=\"lazy\""))
        case "jekyll-minima":
            let hero = try tag(html, alt: "Hubble deep field"), badge = try tag(html, alt: "footer badge")
            #expect(hero.contains("fetchpriority=\"high\"") && !badge.contains("fetchpriority"))
        case "mkdocs-material":
            // Shown 300 px wide: sizes for that, the height from the image, nothing wider than ~3×.
            let image = try tag(html, alt: "Deep field"), picture = try self.picture(html, alt: "Deep field")
            #expect(image.contains("fetchpriority=\"high\"") && picture.contains("sizes=\"(max-width: 300px) 100vw, 300px\"") && image.contains("height=\"131\""))
            #expect(!picture.contains("1920w") && !picture.contains("2000w"))
            let sponsor = try tag(html, alt: "sponsor"), logo = try tag(html, alt: "logo")
            #expect(!sponsor.contains("fetchpriority") && !logo.contains("fetchpriority"))
        default:
            // Alabaster: role="main", a width in the style attribute; the logo in the sidebar (role navigation) is not it.
            let image = try tag(html, alt: "Deep field"), picture = try self.picture(html, alt: "Deep field")
            #expect(image.contains("fetchpriority=\"high\"") && picture.contains("sizes=\"(max-width: 600px) 100vw, 600px\""))
            let logo = try tag(html, alt: "Logo")
            #expect(!logo.contains("fetchpriority"))
        }
        // Further down the page: lazy; nothing before the LCP image is.
        let filler = try #require(html.range(of: Self.filler))
        let below = html[filler.upperBound...].matches(of: /<img\b[^>]*>/).map { String(html[filler.upperBound...][$0.range]) }
        #expect(!below.isEmpty && below.allSatisfy { $0.contains("loading=\"lazy\"") }, "\(below)")
        let first = try #require(html.range(of: "fetchpriority=\"high\""))
        #expect(!html[..<first.lowerBound].contains("loading=\"lazy\""))
    }

    @Test func theAuthorsOwnLoadingFetchpriorityAndSizesAreKept() async throws {
        site.page("index.html", """
        <main><img src="/img/hubble.jpg" alt="a" loading="lazy" fetchpriority="low" sizes="50vw">
        <img src="/img/hubble-wide.jpg" alt="b" data-imgbake-lcp="false"><img src="/img/astronaut.jpg" alt="c" data-imgbake-lcp="true">
        <img src="/img/coffee.png" alt="d" height="100"></main>
        """)
        _ = try await build()
        let html = try #require(site.output("index.html"))
        let a = try tag(html, alt: "a")
        #expect(a.contains("loading=\"lazy\" fetchpriority=\"low\" sizes=\"50vw\"") && a.matches(of: /loading=|fetchpriority=|sizes=/).count == 3)
        let b = try tag(html, alt: "b"), c = try tag(html, alt: "c")
        #expect(!b.contains("fetchpriority") && c.contains("fetchpriority=\"high\""))
        // Height only: the width from the image's proportions (coffee is 300 × 200).
        #expect(try tag(html, alt: "d").contains("width=\"150\""))
        var off = site.configuration(origin: nil)
        off.output.lcp = .off
        off.output.inlineBytes = 0
        site.page("index.html", "<main><img src=\"/img/hubble.jpg\" alt=\"a\"></main>")
        _ = try await site.build(off)
        #expect(!(try #require(site.output("index.html"))).contains("fetchpriority"))
    }

    /// jampack inlines images under 1.5 KB above its fold; so does imgbake, unless the page's
    /// Content-Security-Policy forbids `data:` images. Below the first screen they stay files.
    @Test func smallImagesInTheFirstScreenAreWrittenIntoThePage() async throws {
        let small = "<img src=\"/img/logo.png\" alt=\"logo\">"
        site.page("a.html", "<header>\(small)</header><main>\(Self.filler)\(Self.filler)<img src=\"/img/logo.png\" alt=\"down\"></main>")
        site.page("b.html", "<head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; img-src 'self' https:\"></head><body>\(small)</body>")
        site.page("c.html", "<head><meta http-equiv=\"Content-Security-Policy\" content=\"img-src 'self' data:\"></head><body>\(small)</body>")
        _ = try await build { $0.output.inlineBytes = 1500 }
        let a = try #require(site.output("a.html")), b = try #require(site.output("b.html")), c = try #require(site.output("c.html"))
        let inlined = try tag(a, alt: "logo")
        #expect(inlined.contains("src=\"data:image/") && inlined.contains("width=\"120\" height=\"80\"") && !inlined.contains("srcset"))
        let data = try #require(inlined.firstMatch(of: /base64,([A-Za-z0-9+\/=]+)"/))
        let bytes = try #require(Data(base64Encoded: String(data.output.1)))
        let decoded = try VipsImage.open(ImageBuffer([UInt8](bytes)))
        #expect(bytes.count <= 1500 && decoded.width == 120)
        #expect(try tag(a, alt: "down").contains("src=\"/_img/logo-"))
        #expect(try tag(b, alt: "logo").contains("src=\"/_img/logo-"), "the policy forbids data: images")
        #expect(try tag(c, alt: "logo").contains("src=\"data:image/"), "the policy allows data: images")
    }

    /// `scan --json` and the report say which image each page takes for its likely LCP image, and why.
    @Test func scanAndReportNameTheCandidate() async throws {
        site.page("index.html", Self.themes[1].page)
        let scan = try await runImgbake(["scan", site.site, "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(scan.stdout.utf8)) as? [[String: Any]])
        let marked = entries.filter { $0["lcp"] != nil }
        #expect(marked.count == 1 && marked.first?["url"] as? String == "/img/hubble.jpg", "\(scan.stdout)")
        #expect((marked.first?["lcp"] as? String)?.contains("first in the first screen in <main>") == true)
        let result = try await build { $0.reportPath = site.folder.path + "/report.json" }
        let report = try #require(result.report)
        let candidates = report.references.filter { $0.lcp != nil }
        #expect(candidates.count == 1 && candidates.first?.url == "/img/hubble.jpg" && candidates.first?.lcp?.contains("1000 px wide") == true)
        let validation = try await validateReport(report.json(), in: site.folder)
        #expect(validation.stdout.hasSuffix("valid\n"), "\(validation.stdout)\(validation.stderr)")
    }
}
