import Foundation
import Testing
@testable import ImgBake

/// Page states are stored as lines, not JSON (`PageStateCodec`): every field survives, whatever the
/// characters of a path or URL, and anything that is not a whole state reads as no state. The
/// references are stored apart and read only for reports.
@Suite struct PageStateCodecTests {
    static let references = [
        RecordedReference(line: 3, column: 7, kind: .imgSrcset, url: "https://img.example.test/a.jpg?x=1\tz"),
        RecordedReference(line: -9, column: 1, kind: .frontMatter, url: "file:images/c\\d.png"),
    ]

    static let state = PageState(
        path: "posts/a\nb\\c\td\r\ne.html", fingerprint: "f1", sourceHash: BlobID(hex: String(repeating: "ab", count: 32)),
        stamp: FileStamp(size: 1234, modified: 1_700_000_000_123_456_789),
        copy: .rewritten(source: BlobID(hex: String(repeating: "cd", count: 32))!,
                         rewrites: [BlobID(hex: String(repeating: "ef", count: 32))!, BlobID(of: [1, 2, 3])]),
        complete: true, keys: [OriginalKey("https://img.example.test/a.jpg"), OriginalKey("file:images/ü b.png")],
        sources: SourceDigest(value: 0xfedc_ba98_7654_3210), images: ["a-1-480.webp", "a-1-960.webp"],
        imagesKnown: false, mentions: ["ü b.png"], references: nil)

    @Test func everyFieldSurvivesARoundTrip() {
        #expect(PageStateCodec.decode(PageStateCodec.encode(Self.state)) == Self.state)
        // Each kind of copy: none, the source kept in place, the page as written with `--out` (with and
        // without a kept copy and an output stamp).
        for copy in [PageCopy.none, .written(kept: BlobID(of: [4]), output: FileStamp(size: 99, modified: -5)),
                     .written(kept: nil, output: FileStamp(size: 1, modified: 2)), .written(kept: BlobID(of: [5]), output: nil)] {
            var other = Self.state
            other.copy = copy
            #expect(PageStateCodec.decode(PageStateCodec.encode(other)) == other, "\(copy)")
        }
        var empty = Self.state
        empty.copy = .none
        empty.mentions = []
        empty.sources = SourceDigest()
        empty.sourceHash = nil
        empty.keys = []
        empty.images = []
        empty.path = ""
        #expect(PageStateCodec.decode(PageStateCodec.encode(empty)) == empty)
        // The references, as the index stores them apart, read only for reports.
        let stored = PageStateCodec.lines(of: Self.references)
        #expect(PageStateCodec.references(stored: stored) == Self.references)
        #expect(PageStateCodec.references(stored: "") == [])
        #expect(PageStateCodec.references(stored: stored.replacingOccurrences(of: "img-srcset", with: "no-such-kind")) == nil)
        #expect(PageStateCodec.references(stored: stored.replacingOccurrences(of: "\\\\", with: "\\q")) == nil)
    }

    @Test func aStateIsOneRowOfLinesWithoutRawNewlinesInFields() {
        let lines = PageStateCodec.encode(Self.state).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "S4" && lines[1] == #"posts/a\nb\\c\td\r\ne.html"#)
    }

    @Test func anythingButAWholeStateIsNoState() throws {
        let text = PageStateCodec.encode(Self.state)
        // How imgbake 0.1 stored a state (JSON): it reads as none, and the page is read again.
        let json = #"{"complete":true,"fingerprint":"f1","images":[],"imagesKnown":true,"keys":[],"modified":1,"path":"a.html","references":[],"size":1,"sourceHash":"ab"}"#
        #expect(PageStateCodec.decode(json) == nil, "a state written by an older imgbake: the page is read again")
        // Version 3 knew neither the sources of a page's images nor the source kept for a page
        // rewritten in place: such a page is read again, and its state made anew.
        let version3 = text.replacingOccurrences(of: "S4\n", with: "S3\n")
        #expect(PageStateCodec.decode(version3) == nil)
        for cut in stride(from: 0, to: text.count, by: 7) {
            #expect(PageStateCodec.decode(String(text.prefix(cut))) == nil, "cut at \(cut)")
        }
        #expect(PageStateCodec.decode(text + "\nextra") == nil)
        #expect(PageStateCodec.decode(text.replacingOccurrences(of: "\\n", with: "\\q")) == nil)
    }
}
