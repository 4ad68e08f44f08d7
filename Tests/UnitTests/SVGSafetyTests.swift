import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Which SVGs may be served from the site's own origin (`images.svg = "safe"`, the default).
@Suite struct SVGSafetyTests {
    static let head = "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"10\" height=\"10\">"

    @Test(arguments: [
        "<rect width=\"10\" height=\"10\" fill=\"url(#g)\"/><linearGradient id=\"g\"/>",
        "<use href=\"#shape\"/><use xlink:href=\"#shape\"/>",
        "<image href=\"data:image/png;base64,iVBORw0KGgo=\"/>",
        "<text>one onion= ten</text>", // text that looks like an attribute is not one
        "<style>.a{fill:url(#g)}</style>",
    ])
    func drawingsAreSafe(body: String) {
        #expect(SVGSafety.problem(Array((Self.head + body + "</svg>").utf8)) == nil)
    }

    @Test(arguments: [
        ("<script>alert(1)</script>", "<script>"),
        ("<SCRIPT >alert(1)</SCRIPT>", "<script>"),
        ("<rect onload=\"alert(1)\"/>", "onload"),
        ("<rect\nONCLICK = 'alert(1)'/>", "onclick"),
        ("<a href=\"javascript:alert(1)\"><rect/></a>", "javascript:"),
        ("<a href=\"jav&#x61;script:alert(1)\"><rect/></a>", "javascript:"),
        ("<a href=\"java\tscript:alert(1)\"><rect/></a>", "javascript:"),
        ("<a xlink:href=\" &#106;avascript:alert(1)\"><rect/></a>", "javascript:"),
        ("<image href=\"https://tracker.example/p.png\"/>", "outside itself"),
        ("<use xlink:href=\"other.svg#x\"/>", "outside itself"),
        ("<rect style=\"fill:url(https://example.com/x)\"/>", "outside itself"),
        ("<style>@import url(https://example.com/a.css);</style>", "@import"),
        ("<foreignObject><body xmlns=\"http://www.w3.org/1999/xhtml\"><iframe/></body></foreignObject>", "foreignObject"),
        ("<iframe src=\"x\"/>", "iframe"),
        ("<image href=\"data:text/html,hello\"/>", "data:text/html"),
    ])
    func scriptsHandlersAndExternalReferencesAreNot(body: String, reason: String) throws {
        let problem = try #require(SVGSafety.problem(Array((Self.head + body + "</svg>").utf8)))
        #expect(problem.lowercased().contains(reason.lowercased()), "\(problem)")
    }

    @Test func aDTDIsNotSafe() {
        let svg = "<?xml version=\"1.0\"?><!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>" + Self.head + "&x;</svg>"
        #expect(SVGSafety.problem(Array(svg.utf8)) != nil)
    }

    @Test func theExampleDrawingIsSafe() {
        #expect(SVGSafety.problem(Paths.image("drawing.svg")) == nil)
    }
}
