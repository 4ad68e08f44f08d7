/// An image format imgbake knows, recognised from the bytes (never from Content-Type or the URL).
/// JPEG XL is one imgbake writes but does not read (the stack's libvips has no JPEG XL loader): a source
/// in it is not recognised.
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case jpeg, png, gif, webp, avif, svg, jxl

    /// Sniffs the first bytes. Nil means "not an image we handle".
    public static func sniff(_ bytes: some Collection<UInt8>) -> ImageFormat? {
        let head = Array(bytes.prefix(512))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4), head.count >= 12 {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if brand == "avif" || brand == "avis" { return .avif }
        }
        if isSVG(head) { return .svg }
        return nil
    }

    /// An SVG document: `<svg` first, after an optional BOM, white space, an XML declaration,
    /// comments and an SVG doctype. (An HTML page with inline SVG is not an image.)
    private static func isSVG(_ head: [UInt8]) -> Bool {
        var text = Array(String(decoding: head, as: UTF8.self).lowercased().utf8)[...]
        text = text.dropFirst(ByteOrderMark.length(text))
        func skip(from start: String, to end: String) -> Bool {
            guard text.starts(with: Array(start.utf8)) else { return false }
            let all = Array(text)
            guard let close = all.occurrences(of: Array(end.utf8), in: start.utf8.count..<all.count).first else { return false }
            text = text.dropFirst(close + end.utf8.count)
            return true
        }
        while true {
            text = text.drop { $0.isHTMLSpace }
            if text.starts(with: Array("<svg".utf8)) { return true }
            guard skip(from: "<?xml", to: "?>") || skip(from: "<!--", to: "-->") || skip(from: "<!doctype svg", to: ">") else {
                return false
            }
        }
    }

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .svg: "image/svg+xml"
        case .jxl: "image/jxl"
        }
    }

    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        case .avif: "avif"
        case .svg: "svg"
        case .jxl: "jxl"
        }
    }
}

