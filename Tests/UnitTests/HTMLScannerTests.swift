import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Scans `html` as a page and returns (url, exact bytes the reference would replace, kind).
private func scanHTML(_ html: String) -> [(url: String, raw: String, kind: ImageReference.Kind)] {
    let file = SourceFile(path: "page.html", kind: .html, bytes: Array(html.utf8))
    return HTMLScanner.scan(file, settings: .remoteOnly).references.map {
        ($0.url.string, String(decoding: file.bytes[$0.range], as: UTF8.self), $0.kind)
    }
}

@Suite struct HTMLScannerTests {
    @Test func imgSrcWithEveryQuotingStyle() {
        let refs = scanHTML(#"<img src="http://a.test/1.jpg"><img src='http://a.test/2.jpg'><img src=http://a.test/3.jpg><img src = "  http://a.test/4.jpg  " >"#)
        #expect(refs.map(\.url) == ["http://a.test/1.jpg", "http://a.test/2.jpg", "http://a.test/3.jpg", "http://a.test/4.jpg"])
        #expect(refs.map(\.raw) == ["http://a.test/1.jpg", "http://a.test/2.jpg", "http://a.test/3.jpg", "http://a.test/4.jpg"])
    }

    @Test func upperCaseTagsAndAttributes() {
        let refs = scanHTML(#"<IMG SRC="HTTP://A.TEST/Up.JPG"><PICTURE><SOURCE SRCSET="https://a.test/s.webp"><IMG SRC="https://a.test/f.jpg"></PICTURE>"#)
        #expect(refs.map(\.url) == ["http://a.test/Up.JPG", "https://a.test/s.webp", "https://a.test/f.jpg"])
        #expect(refs.map(\.kind) == [.imgSrc, .sourceSrcset, .imgSrc])
    }

    /// Icons are localised, but an .ico favicon (several sizes in a container libvips does not read) is
    /// left as it is, without a warning: MkDocs' default theme links one from every page.
    @Test func anICOFaviconIsNotAReference() {
        let refs = scanHTML(#"<link rel="icon" href="https://a.test/favicon.ico"><link rel="shortcut icon" href="https://a.test/Favicon.ICO?v=2"><link rel="icon" href="https://a.test/icon.png"><link rel="apple-touch-icon" href="https://a.test/touch.png">"#)
        #expect(refs.map(\.url) == ["https://a.test/icon.png", "https://a.test/touch.png"])
        #expect(refs.allSatisfy { $0.kind == .link })
    }

    @Test func ampersandEntityInURL() {
        let refs = scanHTML(#"<img src="https://a.test/i.jpg?w=1&amp;h=2">"#)
        #expect(refs.map(\.url) == ["https://a.test/i.jpg?w=1&h=2"])
        #expect(refs.map(\.raw) == ["https://a.test/i.jpg?w=1&amp;h=2"])
    }

    @Test func srcsetCommasInURLsOddSpacingMissingDescriptors() {
        let refs = scanHTML("<img srcset=\"https://a.test/a,b.jpg 1x,https://a.test/c.jpg   2x ,\n  https://a.test/d.jpg, https://a.test/e.jpg 480w\">")
        #expect(refs.map(\.url) == ["https://a.test/a,b.jpg", "https://a.test/c.jpg", "https://a.test/d.jpg", "https://a.test/e.jpg"])
        #expect(refs.map(\.raw) == ["https://a.test/a,b.jpg", "https://a.test/c.jpg", "https://a.test/d.jpg", "https://a.test/e.jpg"])
        #expect(refs.allSatisfy { $0.kind == .imgSrcset })
    }

    @Test func commaWithoutSpaceInsideAURLDoesNotSplitIt() {
        // The HTML standard collects a URL up to white space; only trailing commas end it.
        #expect(scanHTML(#"<img srcset="https://a.test/a.jpg,https://a.test/b.jpg 2x">"#).map(\.url) == ["https://a.test/a.jpg,https://a.test/b.jpg"])
    }

    @Test func srcsetWithEntityInsideCandidate() {
        let refs = scanHTML(#"<img srcset="https://a.test/x.jpg?a=1&amp;b=2 2x, https://a.test/y.jpg 1x">"#)
        #expect(refs.map(\.url) == ["https://a.test/x.jpg?a=1&b=2", "https://a.test/y.jpg"])
        #expect(refs.map(\.raw) == ["https://a.test/x.jpg?a=1&amp;b=2", "https://a.test/y.jpg"])
    }

    @Test func srcsetCandidatesKeepTheirRawBytesAcrossReferencesAndLineEndings() {
        let refs = scanHTML("<img srcset=\"https://a.test/a.jpg\r\n 1x,&#x9;https://a.test/b&#46;jpg&#xA;2x,\rhttps://a.test/c.jpg&NewLine;3x\">")
        #expect(refs.map(\.url) == ["https://a.test/a.jpg", "https://a.test/b.jpg", "https://a.test/c.jpg"])
        #expect(refs.map(\.raw) == ["https://a.test/a.jpg", "https://a.test/b&#46;jpg", "https://a.test/c.jpg"])
    }

    @Test func aSrcsetWithAReferenceImgbakeCannotMapIsLeftWithAWarning() {
        let file = SourceFile(path: "p.html", kind: .html, bytes: Array(#"<img srcset="https://a.test/a&hyphen;b.jpg 1x">"#.utf8))
        let scan = HTMLScanner.scan(file, settings: .remoteOnly)
        #expect(scan.references.isEmpty)
        #expect(scan.diagnostics.map(\.description) == ["p.html:1:14: warning: srcset left as it is: it has a character reference imgbake cannot map to its bytes"])
    }

    @Test func candidatesWithInvalidDescriptorsAreNotReferences() {
        // A browser drops them and never loads their URL.
        let refs = scanHTML(#"<img srcset="https://a.test/a.jpg 1x 2x, https://a.test/b.jpg 100w 1x, https://a.test/c.jpg 2q, https://a.test/d.jpg 100w 50h">"#)
        #expect(refs.map(\.url) == ["https://a.test/d.jpg"])
    }

    @Test func nothingInsideScriptStyleCommentTextareaOrText() {
        let html = """
        <script>document.write('<img src="https://a.test/script.jpg">')</script>
        <style>/* <img src="https://a.test/style.jpg"> */</style>
        <!-- <img src="https://a.test/comment.jpg"> -->
        <textarea><img src="https://a.test/textarea.jpg"></textarea>
        <p>&lt;img src="https://a.test/text.jpg"&gt;</p>
        <img src="https://a.test/real.jpg">
        """
        #expect(scanHTML(html).map(\.url) == ["https://a.test/real.jpg"])
    }

    @Test func sourceOutsidePictureIsIgnored() {
        let refs = scanHTML(#"<video><source srcset="https://a.test/v.jpg" src="https://a.test/v.mp4"></video>"#)
        #expect(refs.isEmpty)
    }

    @Test func relativeURLsAreLocalWithoutRemoteBase() {
        #expect(scanHTML(#"<img src="/local.jpg"><img src="local.jpg"><img src="data:image/png;base64,AA==">"#).isEmpty)
    }

    @Test func protocolRelativeURLsAreHTTPS() {
        #expect(scanHTML(#"<img src="//cdn.a.test/p.jpg">"#).map(\.url) == ["https://cdn.a.test/p.jpg"])
    }

    @Test func remoteBaseResolvesRelativeURLs() {
        let file = SourceFile(path: "p.html", kind: .html, bytes: Array(#"<img src="pics/a.jpg"><head><base href="https://b.test/dir/x.html"></head>"#.utf8))
        let scan = HTMLScanner.scan(file, settings: .remoteOnly)
        #expect(scan.references.map(\.url.string) == ["https://b.test/dir/pics/a.jpg"])
        #expect(scan.remoteBase?.url.string == "https://b.test/dir/x.html")
    }

    @Test func lineAndColumnCountCharactersAfterCRLFAndBOM() {
        let html = "\u{FEFF}<p>é</p>\r\n  <img alt=\"ü\" src=\"https://a.test/a.jpg\">"
        let file = SourceFile(path: "p.html", kind: .html, bytes: Array(html.utf8))
        let scan = HTMLScanner.scan(file, settings: .remoteOnly)
        #expect(scan.references.first?.location.description == "p.html:2:21")
    }

    /// gumbo gives no raw bytes for an unquoted value that is a character reference at the tag's end:
    /// the reference was found at an empty range after the name, and rewritten there, into the name
    /// (`<img srchttps://…=&quot>`; found by fuzz-html-rewrite). The value's bytes are found again.
    @Test func anUnquotedCharacterReferenceValueIsReplacedWhole() throws {
        let html = Array(#"<base href="https://b.test/"><img src=&quot>"#.utf8)
        let file = SourceFile(path: "p.html", kind: .html, bytes: html)
        let reference = try #require(HTMLScanner.scan(file, settings: .remoteOnly).references.first)
        #expect(String(decoding: html[reference.range], as: UTF8.self) == "&quot")
        let out = try Splicer.apply([Edit(reference.range, ReplacementText.value("https://n.test/x.jpg", in: reference.syntax))], to: html)
        #expect(String(decoding: out, as: UTF8.self) == #"<base href="https://b.test/"><img src=https://n.test/x.jpg>"#)
    }

    @Test func skipOptOut() {
        #expect(scanHTML(#"<img data-imgbake="skip" src="https://a.test/a.jpg">"#).isEmpty)
    }

    @Test func insertionPointBeforeSelfClosingSlashButNotInsideUnquotedValue() {
        func insertion(_ html: String) -> String {
            let file = SourceFile(path: "p.html", kind: .html, bytes: Array(html.utf8))
            let element = HTMLScanner.scan(file, settings: .remoteOnly).references[0].element!
            return String(decoding: file.bytes[element.insertionOffset...], as: UTF8.self)
        }
        #expect(insertion(#"<img src="https://a.test/a.jpg"/>"#) == "/>")
        #expect(insertion(#"<img src="https://a.test/a.jpg" />"#) == "/>")
        #expect(insertion(#"<img src=https://a.test/a/>"#) == ">")
        #expect(insertion(#"<img src="https://a.test/a.jpg">"#) == ">")
    }
}
