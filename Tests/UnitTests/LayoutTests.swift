import Gumbo
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// How a page lays out its images (`PageLayout`): the CSS it applies (parsed, cascaded, matched against
/// its element tree), what its scripts may do, and the verdicts that follow: whether a `<picture>`
/// wrapper is safe, what sizes each image's box. The same pages are checked in Chromium by
/// LayoutTests (end to end, Tests/Support/layout_check.py); these say why, without a browser.
@Suite struct LayoutTests {
    /// Every `<img>`'s layout on `html`, with the site's stylesheets and scripts.
    static func layouts(_ html: String, styles: InMemoryStyles = InMemoryStyles(), path: String = "page.html") -> [ImageLayout] {
        let scan = HTMLScanner.scan(SourceFile(path: path, kind: .html, bytes: Array(html.utf8)), settings: ScanSettings())
        guard let inputs = scan.styles else { return [] }
        let page = PageLayout(inputs, page: path, settings: ScanSettings(), library: styles)
        let images = scan.references.compactMap { $0.kind == .imgSrc ? $0.element?.treeIndex : nil }
        let layouts = page.images(at: images, wrappable: Set(images))
        return images.compactMap { layouts[$0] }
    }

    static func safe(_ layout: ImageLayout?) -> Bool { layout?.wrapper == .safe }

    // MARK: Parsing

    @Test func rulesAreReadWithTheirConditionsLayersAndNesting() throws {
        let sheet = StyleSheet.parse(Array("""
        @charset "utf-8";
        @import url("base.css") layer(base) screen;
        @import "print.css" print;
        /* a comment { not: a rule } */
        img { max-width: 100%; height: auto !important }
        @media (min-width: 40em) { .post img { width: 50% } }
        @media print { img { display: none } }
        @layer theme { .logo { height: 40px } }
        .card { padding: 1rem; > img { width: 100% } &:hover img { opacity: .5 } }
        @font-face { font-family: x; src: url(x.woff2) }
        a[href$=".pdf"], :is(p, li) > img:first-child { border: 0 }
        *zoom: 1; .broken { width: 1px
        """.utf8))
        #expect(sheet.imports == [StyleSheet.Import(url: "base.css", conditional: false, layer: "base")])
        #expect(sheet.layers == ["theme"])
        let texts = sheet.rules.map { $0.selectors.map(\.text).joined(separator: ", ") }
        #expect(texts.contains("img"))
        #expect(!texts.contains { $0.contains("display") })
        let img = try #require(sheet.rules.first { $0.selectors.map(\.text) == ["img"] })
        #expect(img.declarations == [StyleSheet.Declaration(property: "max-width", value: "100%", important: false),
                                     StyleSheet.Declaration(property: "height", value: "auto", important: true)])
        let media = try #require(sheet.rules.first { $0.selectors.map(\.text) == [".post img"] })
        #expect(media.conditional)
        #expect(sheet.rules.first { $0.selectors.map(\.text) == [".logo"] }?.layer == "theme")
        // `.card { > img {…} }` is `.card > img`, `&:hover img` keeps the parent.
        let nested = sheet.rules.filter { $0.selectors.first?.compounds.first?.conditions.contains { if case .pseudo(.matches) = $0 { true } else { false } } ?? false }
        #expect(nested.count == 2)
        #expect(sheet.rules.contains { $0.selectors.count == 2 })
        // The unclosed rule at the end still counts, as browsers close it.
        #expect(texts.last == ".broken")
    }

    @Test func selectorsMatchAsBrowsersMatchThem() throws {
        let html = """
        <html><body><div class="post" id="main"><p><img src="a.jpg" class="x y" alt=a><span>t</span></p>
        <figure><img src="b.jpg" alt=b><figcaption>c</figcaption></figure><ul><li>1<li>2<li>3</ul></div></body></html>
        """
        let (elements, tree) = Array(html.utf8).withUnsafeBytes { HTMLParser.document(in: $0, tags: ["img"]) }
        let view = TreeView(tree)
        let a = try #require(elements.first?.treeIndex), b = try #require(elements.last?.treeIndex)
        func matches(_ text: String, _ element: Int) -> Match {
            guard let list = ComplexSelector.parseList(CSSSyntax.tokens(Array(text.utf8))[...]) else { return .no }
            return view.matchesAny(list, element)
        }
        #expect(matches(".post > p > img", a) == .yes)
        #expect(matches(".post > img", a) == .no)
        #expect(matches("#main img.x.y", a) == .yes)
        #expect(matches("img + span", a) == .no)
        #expect(matches("p > img:first-child", a) == .yes)
        #expect(matches("figure > img:only-child", b) == .no)
        #expect(matches("img:nth-child(2n+1 of .x)", a) == .yes)
        #expect(matches("div:has(> p > img) img", a) == .yes)
        #expect(matches(":is(figure, p) > img:not(.z)", b) == .yes)
        #expect(matches("img[src$=\".JPG\" i]", b) == .yes)
        #expect(matches("img[alt|=a]", a) == .yes)
        #expect(matches("img:hover", a) == .maybe)
        // Wrapped in a <picture>, the same image is no longer a child of its paragraph, nor first.
        let wrapped = TreeView(tree, wrapping: a)
        let child = try #require(ComplexSelector.parseList(CSSSyntax.tokens(Array("p > img:first-child".utf8))[...]))
        #expect(wrapped.matchesAny(child, a) == .no)
        let descendant = try #require(ComplexSelector.parseList(CSSSyntax.tokens(Array(".post p img".utf8))[...]))
        #expect(wrapped.matchesAny(descendant, a) == .yes)
    }

    // MARK: The wrapper

    /// The gallery script of the issue: it groups the figures it puts around images that are siblings.
    @Test func aScriptThatMovesImagesRulesOutTheWrapper() {
        let gallery = """
        <p><img class="g" src="a.jpg" alt="A"> <img class="g" src="b.jpg" alt="B"></p>
        <script>for (const img of document.querySelectorAll('img.g')) { const f = document.createElement('figure');
          img.parentNode.insertBefore(f, img); f.appendChild(img); }</script>
        """
        #expect(Self.layouts(gallery).allSatisfy { !Self.safe($0) })
        // A script that does nothing to images leaves it safe; one from elsewhere is not known.
        #expect(Self.layouts("<p><img src=a.jpg alt></p><script>const later = '<img src=x.jpg>'; document.documentElement.dataset.theme = 'dark'</script>").allSatisfy(Self.safe))
        #expect(!Self.safe(Self.layouts("<p><img src=a.jpg alt></p><script src=\"https://cdn.test/x.js\"></script>").first))
        let styles = InMemoryStyles(scripts: ["js/lazy.js": "document.querySelectorAll('img[data-src]').forEach(i => i.src = i.dataset.src)",
                                              "js/theme.js": "document.getElementById('t').addEventListener('click', () => {})"])
        #expect(!Self.safe(Self.layouts("<img src=a.jpg alt><script src=/js/lazy.js></script>", styles: styles).first))
        #expect(Self.safe(Self.layouts("<img src=a.jpg alt><script src=/js/theme.js></script>", styles: styles).first))
        #expect(!Self.safe(Self.layouts("<img src=a.jpg alt onload=\"this.parentNode.classList.add('x')\">").first))
        #expect(Self.safe(Self.layouts("<img src=a.jpg alt><script type=\"application/ld+json\">{\"parentNode\":1}</script>").first))
    }

    @Test(arguments: [
        // A rule that finds the image by its parent, its siblings or its position.
        (".content > p > img { width: 300px }", false),
        ("p > img:first-child { border: 4px solid }", false),
        ("figure > img + figcaption { margin-top: 0 }", false),
        (".row > * { flex: 1 }", false),
        ("img:nth-of-type(2) { width: 120px }", false),
        ("p:has(> img) { text-align: center }", false),
        (".content * img { margin: 0 }", false),
        // A rule about its ancestors only, or that would give the wrapper only what it does not pass on.
        (".content img { max-width: 100%; height: auto }", true),
        ("* { box-sizing: border-box; margin: 0 }", true),
        ("picture { display: block; margin: 2rem 0; border: 1px solid }", true),
        ("img, picture, video { display: block; max-width: 100% }", true),
        (".nav > li > a { color: red }", true),
        (".content p > span:first-child { color: red }", true),
        // What the wrapper would pass on to the image it holds.
        (".content * { font-size: 2em }", false),
        ("picture { display: inline-block !important }", false),
    ])
    func stylesheetRulesDecideTheWrapper(css: String, safe: Bool) {
        // Images as a flex row's items, in a paragraph beside others and text, in a figure before its caption.
        let page = """
        <style>\(css)</style><div class="content row"><img src=c.jpg alt><p><img src=a.jpg alt><img src=d.jpg alt><span>x</span></p>
        <figure><img src=b.jpg alt><figcaption>c</figcaption></figure></div>
        """
        let layouts = Self.layouts(page)
        #expect(layouts.count == 4)
        #expect(layouts.allSatisfy(Self.safe) == safe, "\(css): \(layouts.map(\.wrapper))")
    }

    @Test func aStylesheetThatCannotBeReadRulesOutTheWrapperAndKnowsNoSize() {
        let styles = InMemoryStyles(stylesheets: ["css/site.css": "img { max-width: 100%; height: auto }", "css/a.css": "@import 'missing.css';"])
        let known = Self.layouts("<link rel=stylesheet href=/css/site.css><img src=a.jpg alt>", styles: styles).first
        #expect(Self.safe(known))
        #expect(known?.box.height.auto == true && known?.box.width.limited == true)
        for page in ["<link rel=stylesheet href=https://cdn.test/b.css><img src=a.jpg alt>", "<link rel=stylesheet href=/css/a.css><img src=a.jpg alt>"] {
            let layout = Self.layouts(page, styles: styles).first
            #expect(!Self.safe(layout))
            #expect(layout?.box == .unknown)
        }
        // Print stylesheets and alternate ones do not apply.
        #expect(Self.safe(Self.layouts("<link rel=stylesheet media=print href=https://cdn.test/p.css><link rel=\"alternate stylesheet\" href=https://cdn.test/q.css><img src=a.jpg alt>").first))
    }

    @Test func aPolicyThatForbidsStyleAttributesRulesOutTheWrapper() {
        let page = "<meta http-equiv=Content-Security-Policy content=\"style-src 'self'\"><img src=a.jpg alt>"
        let layout = Self.layouts(page).first
        #expect(!Self.safe(layout))
        #expect(layout?.styleAttributes == false)
    }

    // MARK: The box

    @Test func theCascadeSaysWhatSizesTheImage() throws {
        let styles = InMemoryStyles(stylesheets: ["s.css": """
        img { max-width: 100%; height: auto }
        .logo { height: 40px }
        @media (min-width: 60em) { .wide { width: 50% } }
        @layer base { .layered { width: 10px } }
        .layered { width: auto }
        .important { width: 20px !important }
        #id.important { width: 30px }
        """])
        let page = """
        <link rel=stylesheet href=s.css><img src=a.jpg alt><img class=logo src=b.jpg alt><img class=wide src=c.jpg alt>
        <img class=layered src=d.jpg alt><img id=id class=important src=e.jpg alt style="width: 50px"><img src=f.jpg alt style="height: 100px;">
        """
        let boxes = Self.layouts(page, styles: styles).map(\.box)
        try #require(boxes.count == 6)
        #expect(boxes[0].width == AxisSizing(unset: true, auto: false, fixed: false, pixels: nil, limited: true))
        #expect(boxes[0].height == AxisSizing(unset: false, auto: true, fixed: false, pixels: nil, limited: false))
        #expect(boxes[1].height.pixels == 40 && boxes[1].height.surelyFixed)
        // On some screens only: it may be set, or not.
        #expect(boxes[2].width.unset && boxes[2].width.relative && !boxes[2].width.fixed && boxes[2].width.pixels == nil)
        // Unlayered rules win over layered ones.
        #expect(boxes[3].width.auto && !boxes[3].width.fixed)
        // `!important` wins over a more specific rule and the style attribute.
        #expect(boxes[4].width.pixels == 20)
        #expect(boxes[5].height.pixels == 100 && boxes[5].width.unset && !boxes[5].width.fixed)
        // What the page shows it at: a width that follows a fixed height.
        #expect(Self.layouts(page, styles: styles)[5].shown(authorWidth: nil, authorHeight: nil) == .height(100))
        #expect(Self.layouts(page, styles: styles)[1].shown(authorWidth: nil, authorHeight: 300) == .height(40))
        #expect(Self.layouts(page, styles: styles)[1].shown(authorWidth: 300, authorHeight: nil) == .width(300))
    }

    @Test func attributesASelectorTestsAreNotAdded() {
        let page = "<style>img[loading=lazy] { opacity: 0 } img:not([width]) { width: 100% } figure img[style] + figcaption { color: red }</style><figure><img src=a.jpg alt><figcaption>c</figcaption></figure>"
        #expect(Self.layouts(page).first?.testedAttributes == ["loading", "width", "style"])
        #expect(Self.layouts("<style>img { width: 100% }</style><img src=a.jpg alt>").first?.testedAttributes == [])
    }
}

/// What imgbake writes about an image's size (`BoxRule`), over what the page's CSS may do.
@Suite struct BoxRuleTests {
    static let free = AxisSizing()
    static let limited = AxisSizing(limited: true)
    static let auto = AxisSizing(unset: false, auto: true)
    static func fixed(_ pixels: Int? = nil) -> AxisSizing { AxisSizing(unset: false, fixed: true, pixels: pixels) }

    static func choose(_ width: AxisSizing, _ height: AxisSizing, author: (Int?, Int?) = (nil, nil), ratio: Bool = false) -> BoxChoice {
        BoxRule.choose(BoxSizing(width: width, height: height, aspectRatio: ratio), author: author,
                       authorWrote: (author.0 != nil, author.1 != nil), natural: (1920, 2104), style: true)
    }

    @Test func nothingSizesItBothAttributesPinItsOwnSize() {
        #expect(Self.choose(Self.free, Self.free) == BoxChoice(width: 1920, height: 2104, widthIsPinned: true))
        // `max-width: 100%; height: auto` (most themes): the attributes give the shape, CSS the size.
        #expect(Self.choose(Self.limited, Self.auto) == BoxChoice(width: 1920, height: 2104, widthIsPinned: true))
    }

    @Test func maxWidthWithoutHeightAutoTakesTheWidthAlone() {
        // Jekyll's minima: a height attribute would stretch the image in a narrow column.
        #expect(Self.choose(Self.limited, Self.free) == BoxChoice(width: 1920, aspectRatio: (1920, 2104), widthIsPinned: true))
    }

    @Test func oneDimensionInCSSTakesNoAttribute() {
        // Sphinx's `:height: 100px`: no width attribute (it would stretch it to 1920 × 100).
        #expect(Self.choose(Self.free, Self.fixed(100)) == BoxChoice(aspectRatio: (1920, 2104), widthIsPinned: true))
        #expect(Self.choose(Self.fixed(), Self.free) == BoxChoice(aspectRatio: (1920, 2104), widthIsPinned: true))
        #expect(Self.choose(Self.fixed(), Self.fixed()) == BoxChoice(widthIsPinned: true))
    }

    @Test func widthAndHeightAutoKeepTheNaturalWidthThroughSizes() {
        // Both `auto` in CSS: attributes say nothing, so the natural size does, and with a srcset that
        // is `sizes`.
        #expect(Self.choose(Self.auto, Self.auto) == BoxChoice(width: 1920, height: 2104, naturalSizes: true))
        let anything = AxisSizing.unknown
        #expect(Self.choose(anything, anything, ratio: true) == BoxChoice(naturalSizes: true))
    }

    @Test func theAuthorsNumberGivesTheOtherOnlyWhereNothingScalesIt() {
        #expect(Self.choose(Self.free, Self.free, author: (300, nil)) == BoxChoice(height: 329, widthIsPinned: true))
        #expect(Self.choose(Self.limited, Self.free, author: (300, nil)) == BoxChoice(aspectRatio: (1920, 2104), widthIsPinned: true))
        #expect(Self.choose(Self.free, Self.free, author: (300, 200)) == BoxChoice(widthIsPinned: true))
    }

    @Test func everyScenarioIsPlayedOut() {
        // A width set on some screens only (`@media`): neither attribute is safe on every screen.
        let sometimes = AxisSizing(unset: true, auto: false, fixed: true, pixels: nil, limited: false)
        // Where it is set, a width attribute is overridden; where not, it pins the width the image had.
        #expect(Self.choose(sometimes, Self.free) == BoxChoice(width: 1920, aspectRatio: (1920, 2104), widthIsPinned: true))
        // A height on some screens: the height attribute would stretch it where the width is set.
        #expect(Self.choose(sometimes, AxisSizing(unset: true, fixed: true)) == BoxChoice(naturalSizes: true, aspectRatio: (1920, 2104)))
        #expect(BoxRule.scenarios(BoxSizing(width: sometimes, height: Self.limited)).count == 4)
    }
}
