import CGumbo
import Glibc
@testable import Gumbo
import ImgBakeTestSupport
import Testing

@Suite struct GumboParserTests {
    /// Found by fuzzing: gumbo kept every parse error with a copy of the open elements, so a page of n
    /// unclosed tags took memory in n² (150 KB of `<div>`: 7 GB and 30 s). The options keep none.
    @Test func unclosedTagsTakeMemoryInProportion() {
        let page = Array((String(repeating: "<b>", count: 4000) + #"<img src="https://a.example/x.png">"#).utf8)
        #expect(page.withUnsafeBytes { HTMLParser.elements(in: $0, tags: ["img"]) }.count == 1)

        var allocated = 0 // bytes gumbo asked for, in all
        var options = HTMLParser.options
        withUnsafeMutablePointer(to: &allocated) { counter in
            options.userdata = UnsafeMutableRawPointer(counter)
            options.allocator = { userdata, size in
                userdata!.assumingMemoryBound(to: Int.self).pointee += size
                return malloc(size)
            }
            options.deallocator = { _, pointer in free(pointer) }
            page.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    let output = gumbo_parse_with_options(&options, chars.baseAddress, chars.count)
                    gumbo_destroy_output(&options, output)
                }
            }
        }
        // 0.7 MB; with every error kept, 130 MB.
        #expect(allocated < 16 << 20)
    }
}
