import Foundation
import Testing
@testable import ImgBake

/// Page states are stored as lines, not JSON (`PageStateCodec`): every field survives, whatever the
/// characters of a path or URL, and anything that is not a whole state reads as no state.
@Suite struct PageStateCodecTests {
    static let state = PageState(
        path: "posts/a\nb\\c\td\r\ne.html", fingerprint: "f1", sourceHash: String(repeating: "ab", count: 32), size: 1234,
        modified: 1_700_000_000_123_456_789, output: FileStamp(size: 99, modified: -5),
        rendered: BlobID(hex: String(repeating: "cd", count: 32)), complete: true,
        keys: ["https://img.example.test/a.jpg", "file:images/ü b.png"], images: ["a-1-480.webp", "a-1-960.webp"],
        imagesKnown: false,
        references: RecordedReferences([RecordedReference(line: 3, column: 7, kind: .imgSrcset, url: "https://img.example.test/a.jpg?x=1\tz"),
                                        RecordedReference(line: -9, column: 1, kind: .frontMatter, url: "file:images/c\\d.png")]))

    @Test func everyFieldSurvivesARoundTrip() {
        #expect(PageStateCodec.decode(PageStateCodec.encode(Self.state)) == Self.state)
        // References stay text until a report reads them.
        #expect(PageStateCodec.decode(PageStateCodec.encode(Self.state))?.references.all == [
            RecordedReference(line: 3, column: 7, kind: .imgSrcset, url: "https://img.example.test/a.jpg?x=1\tz"),
            RecordedReference(line: -9, column: 1, kind: .frontMatter, url: "file:images/c\\d.png")])
        var empty = Self.state
        empty.output = nil
        empty.rendered = nil
        empty.keys = []
        empty.images = []
        empty.references = RecordedReferences([])
        empty.path = ""
        #expect(PageStateCodec.decode(PageStateCodec.encode(empty)) == empty)
    }

    @Test func aStateIsOneRowOfLinesWithoutRawNewlinesInFields() {
        let lines = PageStateCodec.encode(Self.state).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "S2" && lines[1] == #"posts/a\nb\\c\td\r\ne.html"#)
    }

    @Test func anythingButAWholeStateIsNoState() throws {
        let text = PageStateCodec.encode(Self.state)
        // How imgbake 0.1 stored a state (JSON): it reads as none, and the page is read again.
        let json = #"{"complete":true,"fingerprint":"f1","images":[],"imagesKnown":true,"keys":[],"modified":1,"path":"a.html","references":[],"size":1,"sourceHash":"ab"}"#
        #expect(PageStateCodec.decode(json) == nil, "a state written by an older imgbake: the page is read again")
        // Version 1 had no `rendered` line.
        let version1 = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset != 7 }.map(\.element).joined(separator: "\n").replacingOccurrences(of: "S2\n", with: "S1\n")
        #expect(PageStateCodec.decode(version1) == nil)
        for cut in stride(from: 0, to: text.count, by: 7) {
            #expect(PageStateCodec.decode(String(text.prefix(cut))) == nil, "cut at \(cut)")
        }
        #expect(PageStateCodec.decode(text + "\nextra") == nil)
        #expect(PageStateCodec.decode(text.replacingOccurrences(of: "img-srcset", with: "no-such-kind")) == nil)
        #expect(PageStateCodec.decode(text.replacingOccurrences(of: "\\n", with: "\\q")) == nil)
    }
}
