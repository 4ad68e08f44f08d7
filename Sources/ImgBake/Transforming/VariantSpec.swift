import Crypto
import Vips

/// One output image to make from an original: width, format and encoder settings. Its canonical
/// string enters the variant key, so changing any of these makes exactly the affected variants again.
public struct VariantSpec: Hashable, Sendable {
    public var width: Int
    public var format: ImageFormat
    public var quality: Int
    public var effort: Int
    /// Every frame (an animated GIF or WebP stays animated).
    public var animated: Bool
    /// EXIF fields kept in the output (lower-cased names), sorted.
    public var keepMetadata: [String]

    public var canonical: String {
        "w=\(width);f=\(format.rawValue);q=\(quality);e=\(effort);anim=\(animated ? 1 : 0);keep=\(keepMetadata.joined(separator: ","))"
    }

    /// Bumped whenever the encoding code changes what it writes for the same spec.
    static let encoderRevision = 1

    /// The salt that ties variants to the code and library versions that made them.
    static var salt: String { "imgbake-encoder-\(encoderRevision);vips-\(VipsRuntime.version)" }

    public func key(original: BlobID) -> VariantKey {
        let text = "\(original.hex)|\(canonical)|\(Self.salt)"
        return VariantKey(hex: Hex.lowercase(SHA256.hash(data: Array(text.utf8))))
    }

    var encodeFormat: EncodeFormat {
        switch format {
        case .webp: .webp(quality: quality, effort: effort)
        case .avif: .avif(quality: quality, effort: effort)
        case .jpeg: .jpeg(quality: quality)
        case .png: .png(compression: 9, palette: false, quality: 100)
        case .gif: .gif
        case .svg: .png(compression: 9, palette: false, quality: 100) // never planned: SVG is copied through
        }
    }
}

/// The facts about an original that decide its variants.
public struct SourceInfo: Sendable, Hashable {
    public var format: ImageFormat
    /// Upright width (after EXIF orientation) of one frame.
    public var width: Int
    public var height: Int
    public var pages: Int
}

/// Which variants an original gets: every configured width capped at its own width (a narrower image
/// keeps its own width, nothing is upscaled), in every configured format, best first.
public struct VariantPlan: Sendable {
    public var settings: ImageSettings

    public init(settings: ImageSettings) { self.settings = settings }

    public func specs(for source: SourceInfo) -> [VariantSpec] {
        guard source.format != .svg else { return [] }
        let widths = Set(settings.widths.map { min($0, source.width) }).filter { $0 > 0 }.sorted()
        return outputFormats(for: source).flatMap { format in
            widths.map { width in
                VariantSpec(width: width, format: format, quality: quality(format), effort: effort(format),
                            animated: source.pages > 1 && (format == .webp || format == .gif),
                            keepMetadata: settings.keepMetadata.map { $0.lowercased() }.sorted())
            }
        }
    }

    /// Configured formats resolved for this source, duplicates removed; `original` last resolves to
    /// the source's own format. AVIF is skipped for animations (libheif here writes stills only).
    public func outputFormats(for source: SourceInfo) -> [ImageFormat] {
        var formats: [ImageFormat] = []
        for format in settings.formats {
            let resolved: ImageFormat = switch format {
            case .webp: .webp
            case .avif: .avif
            case .original: source.format
            }
            if resolved == .avif && source.pages > 1 { continue }
            if !formats.contains(resolved) { formats.append(resolved) }
        }
        if !formats.contains(source.format) { formats.append(source.format) }
        return formats
    }

    /// The format of the `<img>` fallback: the source's own.
    public func fallbackFormat(for source: SourceInfo) -> ImageFormat { source.format }

    private func quality(_ format: ImageFormat) -> Int {
        switch format {
        case .webp: settings.quality.webp
        case .avif: settings.quality.avif
        case .jpeg: settings.quality.jpeg
        default: 0
        }
    }

    private func effort(_ format: ImageFormat) -> Int {
        switch format {
        case .webp: 4
        case .avif: 2 // libheif/aom: effort 0 took 0.3 s and 4 took 2.9 s for a 1200 px image here
        default: 0
        }
    }
}
