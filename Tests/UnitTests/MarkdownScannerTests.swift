import CommonMark
import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

private func scanMarkdown(_ markdown: String) -> (refs: [(url: String, raw: String, kind: ImageReference.Kind)], scan: PageScan) {
    let file = SourceFile(path: "post.md", kind: .markdown, bytes: Array(markdown.utf8))
    let scan = MarkdownScanner.scan(file, settings: .remoteOnly)
    return (scan.references.map { ($0.url.string, String(decoding: file.bytes[$0.range], as: UTF8.self), $0.kind) }, scan)
}

@Suite struct MarkdownScannerTests {
    @Test func inlineImagesWithTitlesAndAngleDestinations() {
        let (refs, _) = scanMarkdown("""
        ![one](https://a.test/1.jpg "Title (with parens)")
        ![two](<https://a.test/2 two.jpg> 'single')
        ![three](https://a.test/3_(x).jpg)
        """)
        #expect(refs.map(\.raw) == ["https://a.test/1.jpg", "https://a.test/2 two.jpg", "https://a.test/3_(x).jpg"])
        #expect(refs.map(\.url) == ["https://a.test/1.jpg", "https://a.test/2%20two.jpg", "https://a.test/3_(x).jpg"])
    }

    /// A lone CR ends a line for CommonMark (and so for cmark's positions) as LF and CRLF do; counted
    /// as part of a line, an HTML block after one had its start after its end (a crash, found by fuzzing).
    @Test func aLoneCarriageReturnEndsALineAsCmarkCountsThem() {
        let (refs, scan) = scanMarkdown("text\r\r<div>\r<img src=\"https://a.test/h.jpg\">\r</div>\r\r![x](https://a.test/m.jpg)\r")
        #expect(refs.map(\.raw) == ["https://a.test/h.jpg", "https://a.test/m.jpg"])
        #expect(scan.references.map(\.location.line) == [4, 7])
        let file = SourceFile(path: "p.md", kind: .markdown, bytes: Array("a\rb\r\nc\nd".utf8))
        #expect((1...4).map { String(decoding: file.bytes[file.lineRange($0)], as: UTF8.self) } == ["a", "b", "c", "d"])
    }

    /// cmark-gfm 0.29 keeps the extensions' special characters in one table for the whole process, added
    /// and removed around each parse: parses at once missed GFM autolinks (a CommonMark conformance
    /// example failed in `make test`). Parses take turns; many at once render alike.
    @Test func markdownParsedOnManyThreadsAtOnceRendersAlike() async {
        let text = Array("<https://foo.bar/baz bim> and www.example.com/a ~~x~~\n".utf8)
        let expected = text.withUnsafeBytes { MarkdownParser.html($0) }
        #expect(expected.contains("<a href=\"https://foo.bar/baz\">") && expected.contains("<del>"), "\(expected)")
        let rendered = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<150).map { _ in text.withUnsafeBytes { MarkdownParser.html($0) } } }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(rendered.allSatisfy { $0 == expected }, "\(Set(rendered))")
    }

    @Test func multiLineAltTextAndImagesAfterSoftBreaks() {
        let (refs, scan) = scanMarkdown("""
        Some text before,
        then ![an alt text
        spanning *two* lines](https://a.test/ml.jpg) and
        more text ![second](https://a.test/s.jpg)
        > quoted ![q](https://a.test/q.jpg)
        """)
        #expect(refs.map(\.raw) == ["https://a.test/ml.jpg", "https://a.test/s.jpg", "https://a.test/q.jpg"])
        #expect(scan.diagnostics.isEmpty)
    }

    @Test func referenceStyleImagesRewriteTheirDefinitions() {
        let (refs, scan) = scanMarkdown("""
        Full ![alt][logo], collapsed ![Logo][] and shortcut ![LOGO].
        Another ![x][other].

        [logo]: https://a.test/logo.png "The logo"
        [other]:
          <https://a.test/other.png>
        """)
        #expect(refs.map(\.raw) == ["https://a.test/logo.png", "https://a.test/other.png"])
        #expect(refs.map(\.kind) == [.markdownDefinition, .markdownDefinition])
        #expect(scan.markdownImages.map(\.reference) == [0, 0, 0, 1])
    }

    @Test func definitionLabelsSpanningLines() {
        // Spec example 543, with an image.
        let (refs, scan) = scanMarkdown("[Foo\n  bar]: https://a.test/url.png\n\n![Baz][Foo bar]\n")
        #expect(refs.map(\.raw) == ["https://a.test/url.png"])
        #expect(refs.map(\.kind) == [.markdownDefinition])
        #expect(scan.diagnostics.isEmpty)
    }

    @Test func nothingInCodeSpansFencedOrIndentedCodeOrEscaped() {
        let (refs, _) = scanMarkdown("""
        `![span](https://a.test/span.jpg)` and \\![escaped](https://a.test/esc.jpg)

        ```
        ![fenced](https://a.test/fenced.jpg)
        [fdef]: https://a.test/fdef.jpg
        ```

            ![indented](https://a.test/indented.jpg)

        ![real](https://a.test/real.jpg)
        """)
        #expect(refs.map(\.url) == ["https://a.test/real.jpg"])
    }

    @Test func sameURLInCodeSpanAndImageOnOneLine() {
        let (refs, _) = scanMarkdown("Use `![x](https://a.test/a.jpg)` to get ![x](https://a.test/a.jpg)\n")
        #expect(refs.count == 1)
        let file = SourceFile(path: "post.md", kind: .markdown, bytes: Array("Use `![x](https://a.test/a.jpg)` to get ![x](https://a.test/a.jpg)\n".utf8))
        #expect(MarkdownScanner.scan(file, settings: .remoteOnly).references.first?.location.column == 46)
    }

    @Test func multiLineAltWithTheSameURLInACodeSpanOfTheParagraph() {
        // cmark's position for the image is wrong here, so the paragraph is searched; the code span's
        // copy of the URL must not count.
        let (refs, scan) = scanMarkdown("Intro ![deep\nfield](https://a.test/h.jpg \"T\") and `![code](https://a.test/h.jpg)`.\n")
        #expect(refs.map(\.raw) == ["https://a.test/h.jpg"])
        #expect(scan.references.first?.location.description == "post.md:2:8")
        #expect(scan.diagnostics.isEmpty)
    }

    @Test func rawHTMLBlocksAreScannedAsHTML() {
        let (refs, _) = scanMarkdown("""
        Text.

        <figure>
        <img src="https://a.test/fig.jpg" alt="">
        </figure>

        Inline <img src="https://a.test/inline.jpg"> too.
        """)
        #expect(refs.map(\.url) == ["https://a.test/fig.jpg", "https://a.test/inline.jpg"])
    }

    @Test func destinationsDecodeCharacterReferencesAndEscapesAsCommonMarkDoes() {
        // Every HTML5 name (spec example 32); cmark-gfm decodes references before escapes, so `\\&amp;`
        // is `&` and `&#92;*` is `*`; a name without `;` stays as written; `&#0;` is U+FFFD.
        let (refs, scan) = scanMarkdown("""
        ![a](https://a.test/f&ouml;&ouml;.jpg) ![b](https://a.test/\\&amp;.jpg) ![c](https://a.test/&#92;*.jpg)
        ![d](https://a.test/a&ampb.jpg) ![e](https://a.test/&#x2F;e&#0;.jpg)
        """)
        #expect(refs.map(\.raw) == ["https://a.test/f&ouml;&ouml;.jpg", "https://a.test/\\&amp;.jpg", "https://a.test/&#92;*.jpg",
                                    "https://a.test/a&ampb.jpg", "https://a.test/&#x2F;e&#0;.jpg"])
        #expect(scan.markdownImages.map(\.written) == ["https://a.test/föö.jpg", "https://a.test/&.jpg", "https://a.test/*.jpg",
                                                       "https://a.test/a&ampb.jpg", "https://a.test//e\u{FFFD}.jpg"])
        #expect(scan.diagnostics.isEmpty)
    }

    @Test func localImagesAreNotReferences() {
        #expect(scanMarkdown("![a](/img/a.jpg) ![b](b.png)").refs.isEmpty)
    }

    /// Found by fuzzing: an image in another's description is alt text (spec example 574), so only the
    /// outer one is a reference. Both were, and with `markdown = "html"` their nested spans made the
    /// rewrite give up on the page ("overlapping edits").
    @Test func anImageInAnImagesDescriptionIsAltText() throws {
        let markdown = "![foo ![bar](https://a.test/bar.png)](https://a.test/foo.png)\n"
        let (refs, scan) = scanMarkdown(markdown)
        #expect(refs.map(\.url) == ["https://a.test/foo.png"])
        #expect(scan.markdownImages.map(\.written) == ["https://a.test/foo.png"])
        #expect(scan.markdownImages.first?.alt == "foo bar")

        var offline = OfflineRewrite()
        offline.output.markdown = .html
        let rewrite = try offline.rewrite(scan)
        #expect(rewrite.diagnostics.isEmpty)
        #expect(String(decoding: rewrite.bytes ?? [], as: UTF8.self).contains(#"alt="foo bar""#))
    }

    /// Each nested image was located by reading its whole span and alt text again: 10,000 deep took
    /// minutes. Only the outermost is located now.
    @Test func deeplyNestedImagesAreOneImage() {
        let markdown = String(repeating: "![", count: 2000) + "x" + String(repeating: "](https://a.test/i.png)", count: 2000)
        let (refs, scan) = scanMarkdown(markdown)
        #expect(refs.count == 1 && scan.markdownImages.count == 1)
    }
}
