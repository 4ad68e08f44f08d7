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

    /// A file-name-safe stem from the URL's last path segment (`ImageSource.fileStem`).
    public static func stem(for source: ImageSource) -> String { source.fileStem }

    public func fileName(_ variant: StoredVariant, of image: ResolvedImage) -> String {
        variant.fileName(stem: image.stem)
    }

    public func url(_ variant: StoredVariant, of image: ResolvedImage) -> String {
        publicPath + fileName(variant, of: image)
    }

    /// `url 480w, url 960w` for the variants of one format; a file that stands for several widths
    /// (the source's own bytes) once, at its own width.
    public func srcset(_ variants: [StoredVariant], of image: ResolvedImage) -> String {
        variants.onePerFile.map { "\(url($0, of: image)) \($0.width)w" }.joined(separator: ", ")
    }
}

/// A file the build writes into the images folder.
public struct OutputImage: Sendable, Hashable {
    public var fileName: String
    public var blob: BlobID
    public var bytes: Int
    public var key: OriginalKey
}
