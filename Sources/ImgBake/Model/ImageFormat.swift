/// An image format imgbake knows, recognised from the bytes (never from Content-Type or the URL).
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case jpeg, png, gif, webp, avif, svg

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

    /// An XML or bare `<svg` document: after an optional BOM and white space, `<svg`, or an XML
    /// declaration, comment or doctype followed somewhere in the first bytes by `<svg`.
    private static func isSVG(_ head: [UInt8]) -> Bool {
        var text = Array(String(decoding: head, as: UTF8.self).lowercased().utf8)
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
        let start = text.firstIndex { !$0.isHTMLSpace } ?? text.endIndex
        let rest = text[start...]
        if rest.starts(with: Array("<svg".utf8)) { return true }
        let prologue = ["<?xml", "<!--", "<!doctype"].contains { rest.starts(with: Array($0.utf8)) }
        return prologue && !text.occurrences(of: Array("<svg".utf8), in: 0..<text.count).isEmpty
    }

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .svg: "image/svg+xml"
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
        }
    }
}

