import Testing
@testable import ImgBake
import ImgBakeTestSupport

@Suite struct RewritingTests {
    @Test func splicesApplyBackToFrontAndRefuseOverlaps() throws {
        let bytes = Array("0123456789".utf8)
        let out = try Splicer.apply([Edit(7..<9, "X"), Edit(0..<1, "abc"), Edit(4..<4, "-")], to: bytes)
        #expect(String(decoding: out, as: UTF8.self) == "abc123-456X9")
        #expect(throws: Splicer.OverlapError.self) { try Splicer.apply([Edit(0..<5, ""), Edit(4..<6, "")], to: bytes) }
    }

    /// A page that is not UTF-8 (ISO-8859-1 here): the `<img>` written again around its new `src` keeps
    /// every byte of the author's tag, as every byte outside it is kept.
    @Test func anImgTagKeepsItsBytesInAPageThatIsNotUTF8() throws {
        let page: [UInt8] = Array("<!doctype html><meta charset=\"iso-8859-1\"><p>Caf".utf8) + [0xE9]
            + Array("</p><img src=\"https://img.test/a.jpg\" alt=\"caf".utf8) + [0xE9] + Array("\" title=\"cr".utf8) + [0xE8]
            + Array("me\">".utf8)
        let scan = HTMLScanner.scan(SourceFile(path: "p.html", kind: .html, bytes: page), settings: ScanSettings())
        let out = try #require(try OfflineRewrite().rewrite(scan).bytes)
        #expect(out.firstRange(of: Array("alt=\"caf".utf8) + [0xE9] + Array("\" title=\"cr".utf8) + [0xE8] + Array("me\"".utf8)) != nil,
                "\(String(decoding: out, as: UTF8.self))")
        #expect(out.firstRange(of: [0xEF, 0xBF, 0xBD]) == nil, "no byte became U+FFFD")
        #expect(out.firstRange(of: Array("src=\"/_img/a-".utf8)) != nil && out.starts(with: page.prefix(53)), "rewritten, the text before kept")
    }

    @Test func attributeValuesAreEscapedForTheirQuoting() {
        #expect(ReplacementText.attribute("/a?x=1&y=\"2\"", quote: UInt8(ascii: "\"")) == "/a?x=1&amp;y=&quot;2&quot;")
        #expect(ReplacementText.attribute("/it's.jpg", quote: UInt8(ascii: "'")) == "/it&#39;s.jpg")
        #expect(ReplacementText.attribute("/_img/a.jpg", quote: nil) == "/_img/a.jpg")
        #expect(ReplacementText.attribute("/a b.jpg", quote: nil) == "\"/a b.jpg\"")
    }

    @Test func markdownDestinationsGetAngleBracketsWhenNeeded() {
        #expect(ReplacementText.markdownDestination("/_img/a.jpg", angle: false) == "/_img/a.jpg")
        #expect(ReplacementText.markdownDestination("/a b.jpg", angle: false) == "</a b.jpg>")
        #expect(ReplacementText.markdownDestination("/a.jpg", angle: true) == "/a.jpg")
    }

    @Test(arguments: [
        ("https://a.test/photos/My%20Holiday%20(2).JPG", "my-holiday-2"),
        ("https://a.test/", "image"),
        ("https://a.test/%E2%98%83.png", "image"),
        ("https://a.test/x/.hidden", "hidden"),
        ("https://a.test/" + String(repeating: "abc-", count: 20) + ".jpg", "abc-abc-abc-abc-abc-abc-abc-abc-abc-abc"),
    ])
    func outputStemsAreSafe(url: String, stem: String) {
        #expect(OutputNaming.stem(for: .remote(RemoteURL.resolve(url)!)) == stem)
    }

    @Test func templateErrorsNameTheFileAndLine() throws {
        let folder = TemporaryFolder()
        folder.write("picture.mustache", "<picture>\n{{#sources}}<source>\n</picture>\n")
        #expect(throws: MarkupRenderer.TemplateError.self) { try MarkupRenderer(templatesDirectory: folder.path) }
        do {
            _ = try MarkupRenderer(templatesDirectory: folder.path)
        } catch {
            #expect(error.file == folder.path + "/picture.mustache")
            #expect(error.description.hasPrefix(folder.path + "/picture.mustache:"))
        }
    }

    @Test func aTemplateInTemplatesDirReplacesTheBuiltInOne() throws {
        let folder = TemporaryFolder()
        folder.write("picture.mustache", "<div class=\"pic\">{{{img}}}</div>\n")
        let renderer = try MarkupRenderer(templatesDirectory: folder.path)
        #expect(renderer.render("picture", ["img": "<img>"]) == "<div class=\"pic\"><img></div>")
    }
}

/// Markdown pages rewritten end to end (scan, rewrite, render with cmark-gfm) without network.
@Suite struct MarkdownRewritingTests {
    @Test(arguments: [
        // Spec example 535 with its second link made an image: the definition also serves a link.
        "[foo *bar [baz][ref]*]![ref]\n\n[ref]: https://a.test/uri.png\n",
        // A thumbnail that links to its original, each kind of reference.
        "[![photo][img]][img] [![Img][]][img] [![img]][img]\n\n[img]: https://a.test/p.jpg 'Say \"&amp;\" \\\\ | &#10;'\n",
    ])
    func aDefinitionThatAlsoServesALinkIsLeftToTheLink(markdown: String) throws {
        let (scan, rewrite, expected, actual) = try OfflineRewrite().markdown(Array(markdown.utf8))
        #expect(actual == expected)
        #expect(scan.diagnostics.isEmpty && rewrite.diagnostics.isEmpty)
        #expect(scan.references.allSatisfy { $0.kind == .markdownImage })
        #expect(rewrite.bytes == (try OfflineRewrite().splicedByHand(scan)))
    }
}
