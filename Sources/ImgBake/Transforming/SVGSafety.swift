/// Whether an SVG is safe to serve from the site's own origin: no script, no event handler, no
/// `javascript:` (or other script) URL, no embedded document, no DTD, no reference that loads
/// something from elsewhere. A deny-list over a normalised copy of the bytes (character references
/// decoded, white space and controls removed, lower case), so it errs towards refusing: a refused SVG
/// only stays remote, while a wrongly accepted one would run on the site.
public enum SVGSafety {
    /// Why the SVG is not safe, or nil.
    public static func problem(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        let squeezed = normalised(text)
        for (needle, why) in [("<script", "a <script> element"), ("<foreignobject", "a <foreignObject> (embedded HTML)"),
                              ("<iframe", "an <iframe>"), ("<embed", "an <embed>"), ("<object", "an <object>"),
                              ("<!entity", "a DTD entity"), ("<!doctype", "a DOCTYPE"), ("<?xml-stylesheet", "an external stylesheet"),
                              ("@import", "a CSS @import"), ("<handler", "an event handler element"), ("<listener", "an event listener element")]
        where squeezed.contains(needle) {
            return "the SVG has \(why)"
        }
        for scheme in ["javascript:", "vbscript:", "data:text/html", "data:application/"] where squeezed.contains(scheme) {
            return "the SVG has a \(scheme) URL"
        }
        if let handler = eventHandler(in: text) { return "the SVG has an event handler (\(handler))" }
        if let reference = externalReference(in: text) { return "the SVG refers to \(reference), outside itself" }
        return nil
    }

    /// `onload=`, `onclick =`: inside a tag, an attribute starting with `on` after white space, a quote
    /// or a slash.
    private static func eventHandler(in text: String) -> String? {
        let bytes = Array(text.utf8)
        var index = 1
        var inTag = bytes.first == UInt8(ascii: "<")
        while index + 3 < bytes.count {
            defer { index += 1 }
            if bytes[index] == UInt8(ascii: "<") { inTag = true }
            if bytes[index] == UInt8(ascii: ">") { inTag = false }
            guard inTag else { continue }
            let before = bytes[index - 1]
            guard bytes[index] == UInt8(ascii: "o"), bytes[index + 1] == UInt8(ascii: "n"),
                  before == 0x20 || before == 0x09 || before == 0x0A || before == 0x0D || before == 0x0C
                    || before == UInt8(ascii: "\"") || before == UInt8(ascii: "'") || before == UInt8(ascii: "/") else { continue }
            var end = index + 2
            while end < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[end]) { end += 1 }
            guard end > index + 2 else { continue }
            var after = end
            while after < bytes.count, bytes[after] == 0x20 || bytes[after] == 0x09 || bytes[after] == 0x0A || bytes[after] == 0x0D { after += 1 }
            if after < bytes.count, bytes[after] == UInt8(ascii: "=") {
                return String(decoding: bytes[index..<end], as: UTF8.self)
            }
        }
        return nil
    }

    /// The first `href`, `xlink:href`, `src` or `url(...)` that points outside the file (anything but a
    /// `#fragment` or an embedded raster `data:image/...`).
    private static func externalReference(in text: String) -> String? {
        let bytes = Array(text.utf8)
        for opener in ["href=", "src=", "url("] {
            let needle = Array(opener.utf8)
            var index = 0
            while let found = bytes[index...].firstRange(of: needle) {
                index = found.upperBound
                var value = found.upperBound
                while value < bytes.count, bytes[value] == 0x20 || bytes[value] == UInt8(ascii: "\"") || bytes[value] == UInt8(ascii: "'") {
                    value += 1
                }
                let rest = normalised(String(decoding: bytes[value..<min(bytes.count, value + 200)], as: UTF8.self))
                let allowed = rest.hasPrefix("#") || ["data:image/png", "data:image/jpeg", "data:image/gif", "data:image/webp"].contains { rest.hasPrefix($0) }
                if !allowed { return "\(opener.hasPrefix("url") ? "url(" : opener)\(rest.prefix(60))…" }
            }
        }
        return nil
    }

    /// Character references decoded, white space and controls removed.
    static func normalised(_ text: String) -> String {
        var out = ""
        var scalars = Array(text.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            if scalar == "&", scalars.first == "#", let end = scalars.prefix(12).firstIndex(of: ";") {
                let body = String(String.UnicodeScalarView(scalars[scalars.startIndex + 1..<end]))
                let value = body.hasPrefix("x") ? UInt32(body.dropFirst(), radix: 16) : UInt32(body)
                if let value, let decoded = Unicode.Scalar(value) {
                    scalars = scalars[(end + 1)...]
                    if decoded.value > 0x20 { out.unicodeScalars.append(decoded) }
                    continue
                }
            }
            if scalar.value > 0x20 && scalar.value != 0x7F { out.unicodeScalars.append(scalar) }
        }
        return out.lowercased()
    }
}
