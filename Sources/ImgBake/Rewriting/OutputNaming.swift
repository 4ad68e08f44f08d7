/// Output file names and the URLs pages use for them.
public struct OutputNaming: Sendable {
    public var publicPath: String

    public init(publicPath: String) {
        self.publicPath = publicPath.hasSuffix("/") ? publicPath : publicPath + "/"
    }

    /// How `page` (a path in the site) refers to the images folder: the public path, or a path
    /// relative to the page (`../_img/` from `posts/a.html`) for an HTML page whose own `links` are
    /// relative (`output.relative_urls = "auto"`), or for every HTML page and stylesheet (`true`).
    public static func forPage(_ page: String, kind: SourceFile.Kind, links: PageLinks = PageLinks(), output: OutputSettings) -> OutputNaming {
        let relative = switch output.relativeURLs {
        case .always: kind == .html || kind == .css
        case .auto: kind == .html && links.arePageRelative
        case .never: false
        }
        guard relative, !output.publicPathIsAbsolute else { return OutputNaming(publicPath: output.publicPath) }
        let depth = page.split(separator: "/", omittingEmptySubsequences: true).count - 1
        return OutputNaming(publicPath: String(repeating: "../", count: max(0, depth)) + output.imagesDirectory + "/")
    }

    /// A file-name-safe stem from the URL's last path segment: lower-case letters, digits and dashes,
    /// at most 40 characters, `image` when nothing is left.
    public static func stem(for source: ImageSource) -> String {
        var name = source.lastPathSegment
        if let dot = name.lastIndex(of: "."), dot > name.startIndex { name = String(name[..<dot]) }
        // On the bytes: only ASCII letters and digits are kept, and a run of anything else (a
        // multi-byte character too) becomes one dash. Looking up Unicode properties per character
        // would cost a warm build, which names every file it refers to, more than the rest of this.
        var out: [UInt8] = []
        var lastWasDash = true
        for byte in name.lowercased().utf8 {
            if (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) {
                out.append(byte)
                lastWasDash = false
            } else if !lastWasDash {
                out.append(UInt8(ascii: "-"))
                lastWasDash = true
            }
        }
        while out.last == UInt8(ascii: "-") { out.removeLast() }
        if out.count > 40 { out.removeLast(out.count - 40) }
        if out.last == UInt8(ascii: "-") { out.removeLast() }
        return out.isEmpty ? "image" : String(decoding: out, as: UTF8.self)
    }

    public func fileName(_ variant: StoredVariant, of image: ResolvedImage) -> String {
        variant.fileName(stem: Self.stem(for: image.url))
    }

    public func url(_ variant: StoredVariant, of image: ResolvedImage) -> String {
        publicPath + fileName(variant, of: image)
    }

    /// `url 480w, url 960w` for the variants of one format; a file that stands for several widths
    /// (the source's own bytes) once, at its own width.
    public func srcset(_ variants: [StoredVariant], of image: ResolvedImage) -> String {
        var seen = Set<BlobID>()
        return variants.filter { seen.insert($0.blob).inserted }.map { "\(url($0, of: image)) \($0.width)w" }.joined(separator: ", ")
    }
}

/// A file the build writes into the images folder.
public struct OutputImage: Sendable, Hashable {
    public var fileName: String
    public var blob: BlobID
    public var bytes: Int
    public var key: OriginalKey
}
