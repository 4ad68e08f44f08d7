/// How deep a page's elements nest, estimated in one pass over its bytes, before it is given to the
/// HTML parser: gumbo's tree construction takes time quadratic in the depth (100,000 nested `<div>`s:
/// 50 s; 10,000: 0.2 s), so a page nested deeper than any real one is left as it is. Browsers cap it
/// too (Blink at 512 levels).
///
/// Elements whose end tag may be left out (`p`, `li`, `td`, ...) and void elements do not count, and
/// neither does anything in comments or in `script`, `style`, `textarea` and `title`: the estimate is
/// close to what a browser builds.
public enum NestingDepth {
    public static let limit = 10_000

    public static func estimate(_ bytes: [UInt8]) -> Int {
        var depth = 0, deepest = 0
        var index = 0
        while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            index = open + 1
            guard index < bytes.count else { break }
            if bytes[index...].starts(with: commentOpen) {
                index = skip(past: commentClose, in: bytes, from: index)
                continue
            }
            let closing = bytes[index] == UInt8(ascii: "/")
            let nameStart = closing ? index + 1 : index
            var nameEnd = nameStart
            while nameEnd < bytes.count, isNameByte(bytes[nameEnd]) { nameEnd += 1 }
            guard nameEnd > nameStart, isLetter(bytes[nameStart]) else { continue }
            let name = String(decoding: bytes[nameStart..<nameEnd].map { $0 | 0x20 }, as: UTF8.self)
            let tagEnd = bytes[nameEnd...].firstIndex(of: UInt8(ascii: ">")) ?? bytes.count
            index = tagEnd
            if closing {
                if !uncounted.contains(name) { depth = max(0, depth - 1) }
                continue
            }
            if rawText.contains(name) {
                index = skip(past: Array("</\(name)".utf8), in: bytes, from: tagEnd, caseInsensitive: true)
                continue
            }
            let selfClosing = tagEnd > 0 && tagEnd < bytes.count && bytes[tagEnd - 1] == UInt8(ascii: "/")
            guard !uncounted.contains(name), !selfClosing else { continue }
            depth += 1
            deepest = max(deepest, depth)
        }
        return deepest
    }

    /// Void elements, and elements whose end tag may be omitted (HTML, "optional tags").
    private static let uncounted: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "param",
        "keygen", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "tbody", "thead", "tfoot", "colgroup",
        "caption", "rb", "rt", "rtc", "rp", "html", "head", "body",
    ]
    private static let commentOpen = Array("!--".utf8), commentClose = Array("-->".utf8)
    private static let rawText: Set<String> = ["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "plaintext"]

    private static func skip(past needle: [UInt8], in bytes: [UInt8], from start: Int, caseInsensitive: Bool = false) -> Int {
        var index = start
        while index + needle.count <= bytes.count {
            if zip(bytes[index..<index + needle.count], needle).allSatisfy({ caseInsensitive ? ($0 | 0x20) == ($1 | 0x20) : $0 == $1 }) {
                return index + needle.count
            }
            index += 1
        }
        return bytes.count
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
    }
}
