import Testing
@testable import ImgBake

/// The depth estimate that keeps pathological pages away from gumbo's quadratic tree building.
@Suite struct NestingDepthTests {
    func depth(_ html: String) -> Int { NestingDepth.estimate(Array(html.utf8)) }

    @Test func elementsThatCloseDoNotAddUp() {
        #expect(depth("<html><body><div><p>a</p><div><span>b</span></div></div></body></html>") == 3)
        #expect(depth(String(repeating: "<div></div>", count: 50_000)) == 1)
    }

    @Test func deepNestingIsCounted() {
        #expect(depth(String(repeating: "<div>", count: 20_000)) == 20_000)
        #expect(depth(String(repeating: "<section><span>", count: 3)) == 6)
    }

    @Test func optionalEndTagsVoidElementsAndSelfClosingTagsDoNotCount() {
        #expect(depth(String(repeating: "<p>para", count: 50_000)) == 0)
        #expect(depth(String(repeating: "<li>item<br><img src=x><input/>", count: 50_000)) == 0)
        #expect(depth(String(repeating: "<svg/>", count: 50_000)) == 0)
    }

    @Test func commentsAndRawTextAreSkipped() {
        #expect(depth("<!--" + String(repeating: "<div>", count: 50_000) + "-->") == 0)
        #expect(depth("<script>" + String(repeating: "<div>", count: 50_000) + "</SCRIPT><div>") == 1)
        #expect(depth("<textarea>" + String(repeating: "<b>", count: 50_000)) == 0)
    }
}
