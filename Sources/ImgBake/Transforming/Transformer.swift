import Vips

/// One encoded variant, before it is stored.
public struct EncodedVariant: Sendable {
    public var spec: VariantSpec
    public var bytes: [UInt8]
    public var width: Int
    public var height: Int
}

/// Why an original could not be turned into variants. All of these are permanent for those bytes.
public enum TransformError: Error, Sendable, CustomStringConvertible {
    case tooManyPixels(width: Int, height: Int, pages: Int, limit: Int)
    case undecodable(String)
    case encodeFailed(String)

    public var description: String {
        switch self {
        case .tooManyPixels(let w, let h, let pages, let limit):
            let frames = pages > 1 ? " × \(pages) frames" : ""
            return "image is \(w)×\(h)\(frames) = \(Self.megapixels(w * h * pages)) MP, over the \(Self.megapixels(limit)) MP limit (max_pixels)"
        case .undecodable(let why): return "cannot decode image (\(why))"
        case .encodeFailed(let why): return "cannot encode variant (\(why))"
        }
    }

    private static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}

/// Turns an original into its variants with libvips, on a pool of threads it owns. Each source is
/// decoded once, straight to the largest width needed (shrink-on-load), upright and in sRGB; smaller
/// widths are derived from that copy in memory. Metadata is removed from a copy before encoding,
/// because libvips 8.14's WebP saver ignores `strip`.
public final class Transformer: Sendable {
    private let pool: BlockingPool
    private let maxPixels: Int

    public init(threads: Int, maxPixels: Int) throws {
        try VipsRuntime.start(threadsPerImage: 1)
        pool = BlockingPool(threads: threads, name: "transform")
        self.maxPixels = maxPixels
    }

    /// Reads the header only (nothing is decoded) and checks the pixel budget.
    public func inspect(_ bytes: ImageBuffer, format: ImageFormat) async throws -> SourceInfo {
        try await pool.run { [maxPixels] in try Self.header(bytes, format: format, maxPixels: maxPixels) }
    }

    /// Makes the variants `plan` asks for, given the source's header.
    public func variants(of bytes: ImageBuffer, format: ImageFormat,
                         plan: @escaping @Sendable (SourceInfo) -> [VariantSpec]) async throws -> (SourceInfo, [EncodedVariant]) {
        try await pool.run { [maxPixels] in
            let info = try Self.header(bytes, format: format, maxPixels: maxPixels)
            return (info, try Self.encode(bytes, info: info, specs: plan(info)))
        }
    }

    static func header(_ bytes: ImageBuffer, format: ImageFormat, maxPixels: Int) throws -> SourceInfo {
        guard format != .svg else { throw TransformError.undecodable("SVG is copied, not decoded") }
        let image: VipsImage
        do { image = try VipsImage.open(bytes, allPages: format.canAnimate) } catch { throw TransformError.undecodable(error.message) }
        let pages = max(1, image.pages)
        let frameHeight = pages > 1 ? image.pageHeight : image.height
        guard image.width * frameHeight * pages <= maxPixels else {
            throw TransformError.tooManyPixels(width: image.width, height: frameHeight, pages: pages, limit: maxPixels)
        }
        // Orientations 5–8 turn the image a quarter: width and height swap once it is upright.
        let swapped = (5...8).contains(image.orientation)
        return SourceInfo(format: format, width: swapped ? frameHeight : image.width,
                          height: swapped ? image.width : frameHeight, pages: pages)
    }

    static func encode(_ bytes: ImageBuffer, info: SourceInfo, specs: [VariantSpec]) throws -> [EncodedVariant] {
        guard let largest = specs.map(\.width).max() else { return [] }
        let animated = specs.contains { $0.animated }
        let base: VipsImage
        do {
            base = try VipsImage.thumbnail(bytes, width: largest, allPages: animated).materialized()
        } catch {
            throw TransformError.undecodable(error.message)
        }
        var resized: [Int: VipsImage] = [base.width: base]
        var encoded: [EncodedVariant] = []
        for spec in specs.sorted(by: { $0.width > $1.width }) {
            do throws(VipsError) {
                let image: VipsImage
                if let existing = resized[spec.width] { image = existing } else { image = try base.thumbnail(width: spec.width) }
                resized[spec.width] = image
                let clean = try image.removingFields { Metadata.shouldDrop($0, keeping: spec.keepMetadata) }
                let output = try clean.encoded(as: spec.encodeFormat)
                let frames = max(1, image.pages)
                encoded.append(EncodedVariant(spec: spec, bytes: output, width: image.width,
                                              height: frames > 1 ? image.pageHeight : image.height))
            } catch {
                throw TransformError.encodeFailed("\(spec.format.rawValue) \(spec.width)w: \(error.message)")
            }
        }
        return encoded
    }
}

/// Which libvips metadata fields leave with an output.
enum Metadata {
    /// Everything EXIF, XMP, IPTC and ICC is dropped (outputs are sRGB, the web's default), except the
    /// EXIF fields the site asked to keep. GPS, serial numbers and MakerNotes can never be kept.
    static func shouldDrop(_ field: String, keeping keep: [String]) -> Bool {
        if field == "xmp-data" || field == "iptc-data" || field == "icc-profile-data" || field == "exif-data" {
            return keep.isEmpty || field != "exif-data"
        }
        guard field.hasPrefix("exif-") else { return false }
        let tag = field.split(separator: "-").last.map { $0.lowercased() } ?? ""
        return !keep.contains(tag)
    }
}

extension ImageFormat {
    /// Formats that can hold an animation.
    var canAnimate: Bool { self == .gif || self == .webp }
}
