import Foundation
import ImgBakeTestSupport
import Testing
@testable import ImgBake

@Suite struct SourceFileTests {
    /// Columns count characters from the start of the line, also on long lines with multi-byte
    /// characters across the blocks the count is kept for.
    @Test func columnsCountCharactersOnLongLines() {
        var bytes: [UInt8] = []
        for i in 0..<6000 { bytes += Array((i % 7 == 0 ? "é" : i % 11 == 0 ? "€" : i % 997 == 0 ? "\r\n" : "a").utf8) }
        let file = SourceFile(path: "p.html", kind: .html, bytes: bytes)
        var line = 1, column = 1
        for offset in 0...bytes.count {
            let location = file.location(ofByte: offset)
            guard location.line == line, location.column == column else {
                Issue.record("byte \(offset): \(location.line):\(location.column), expected \(line):\(column)")
                return
            }
            guard offset < bytes.count else { break }
            if bytes[offset] == UInt8(ascii: "\n") {
                (line, column) = (line + 1, 1)
            } else if bytes[offset] & 0xC0 != 0x80 {
                column += 1 // a character starts here
            }
        }
    }

    /// A minified page is one line: locating each of its images once took time in images × page size
    /// (this page: two minutes in a debug build, now two seconds). Not under a sanitizer (`make
    /// sanitize`), which slows everything down.
    @Test(.disabled(if: Sanitizer.active != nil), .timeLimit(.minutes(1)))
    func aOneLinePageWithManyImagesScansQuickly() {
        let card = "<div class=card><p>" + String(repeating: "lorem ipsum dolor sit amet ", count: 18) + "</p>"
        let page = (0..<2000).map { card + #"<img src="https://cdn.example/\#($0).jpg" alt="x"></div>"# }.joined()
        let scan = HTMLScanner.scan(SourceFile(path: "index.html", kind: .html, bytes: Array(page.utf8)))
        #expect(scan.references.count == 2000)
        #expect(scan.references.last?.location.line == 1)
    }
}
