/// A variant that exists in the cache.
public struct StoredVariant: Sendable, Hashable {
    public var spec: VariantSpec
    public var key: VariantKey
    public var blob: BlobID
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    public var bytes: Int
    /// Encoded at which quality (chosen per variant for an automatic one), or the source's own bytes.
    public var made: VariantSpec.Made = .lossless
    /// The other format this fallback was made in at its width and not kept (a PNG's fallback is made as
    /// PNG and as JPEG, the smaller kept), for the report.
    public var passedOver: PassedOver? = nil

    public struct PassedOver: Sendable, Hashable {
        public var format: ImageFormat
        /// 0: it could not be made (a JPEG of a PNG with transparency).
        public var bytes: Int
    }

    /// `<stem>-<hash10>-<width>.<ext>`: the hash is of the variant's bytes (its blob id), so the same
    /// bytes get the same name and a changed upstream image a new one.
    public func fileName(stem: String) -> String {
        // An SVG without a declared size has no width to name it by.
        let width = format == .svg && self.width == 0 ? "" : "-\(self.width)"
        return "\(stem)-\(blob.hex.prefix(10))\(width).\(format.fileExtension)"
    }
}

/// Where a resolved image came from in this build.
public enum ResolutionOrigin: String, Sendable, Codable {
    /// Fresh in the cache: no request.
    case cached
    case downloaded
    /// Stale in the cache, confirmed by a 304.
    case revalidated
    /// Stale in the cache, revalidation failed for a transient reason: the stale copy was used.
    case stale
    /// A file of the site, read (new or changed since it was last read).
    case read
}

/// An image with all its variants in the cache, ready to be written out and referenced.
public struct ResolvedImage: Sendable {
    public var key: OriginalKey
    /// The image as the first reference to it named it (its last path segment names the files): a
    /// remote URL, or the site path of a local file.
    public var url: ImageSource {
        didSet { stem = url.fileStem }
    }
    /// The stem of its files' names (`ImageSource.fileStem`), made once: pages name its files often.
    public private(set) var stem: String
    public var source: SourceInfo
    public var originalBlob: BlobID
    public var originalBytes: Int
    /// Every variant made for the requests of this build, best format first, then by width (dropped
    /// ones — larger than the fallback at their width — are not here).
    public var variants: [StoredVariant]
    public var origin: ResolutionOrigin
    /// Variants encoded by this build (0 when everything came from the cache).
    public var encoded: Int
    /// Photo credits from the original's EXIF.
    public var credits: Credits
    /// The configured placeholder's value (colour, data URI or BlurHash), if one is configured.
    public var placeholder: String?

    public init(key: OriginalKey, url: ImageSource, source: SourceInfo, originalBlob: BlobID, originalBytes: Int,
                variants: [StoredVariant], origin: ResolutionOrigin, encoded: Int, credits: Credits, placeholder: String?) {
        self.key = key
        self.url = url
        stem = url.fileStem
        self.source = source
        self.originalBlob = originalBlob
        self.originalBytes = originalBytes
        self.variants = variants
        self.origin = origin
        self.encoded = encoded
        self.credits = credits
        self.placeholder = placeholder
    }

    /// The formats its fallback may be in (a PNG's: JPEG or PNG, whichever was smaller at each width).
    public var fallbackFormats: [ImageFormat] { VariantPlan.fallbackFormats(for: source) }

    /// The variants one request asks for: its formats (the fallback always), its widths capped at the
    /// source width. By the width each was made for: the source's own bytes may stand for a narrower
    /// one (and then for several).
    public func variants(for request: VariantRequest, plan: VariantPlan) -> [StoredVariant] {
        let formats = plan.outputFormats(for: source, request: request)
        let widths = Dictionary(uniqueKeysWithValues: formats.map { ($0, Set(plan.widths(of: $0, for: source, request: request))) })
        return variants.filter { variant in
            guard let made = widths[variant.format] else { return false }
            return source.format == .svg || made.contains(variant.spec.width)
        }
    }
}

extension [StoredVariant] {
    /// The widest variant in `format`: what `<img src>` and one-for-one localisation use.
    func widest(in format: ImageFormat) -> StoredVariant? { widest(in: [format]) }

    func widest(in formats: [ImageFormat]) -> StoredVariant? {
        filter { formats.contains($0.format) }.max { $0.width < $1.width }
    }

    func inFormat(_ formats: [ImageFormat]) -> [StoredVariant] {
        filter { formats.contains($0.format) }.sorted { $0.width < $1.width }
    }

    /// The variants in their order, each file once: the source's own bytes may stand for several
    /// widths (a re-encode larger than the source at each), and those variants are one file.
    var onePerFile: [StoredVariant] {
        var seen = Set<BlobID>()
        return filter { seen.insert($0.blob).inserted }
    }

    /// Formats present, in the order the variants are (best first).
    var formats: [ImageFormat] {
        var seen: [ImageFormat] = []
        for variant in self where !seen.contains(variant.format) { seen.append(variant.format) }
        return seen
    }
}

/// The outcome of resolving one URL.
public enum Resolution: Sendable {
    case resolved(ResolvedImage, notes: [String])
    case failed(ImageFailure)
}

/// An image that is not available, with the reason to report at each of its references.
public struct ImageFailure: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var kind: Kind
    /// The host that could not be reached (`scheme://host[:port]`), when that is why.
    public var host: String? = nil

    public enum Kind: Sendable, Equatable {
        case fetch(FetchFailure.Kind)
        /// Remembered from an earlier build; no request was made.
        case remembered
        /// Not in the cache and the network is off (`--offline`, `--frozen`).
        case offlineMiss
        case transform
        /// Left remote by the configuration (an SVG that would run scripts on the site, say).
        case refused
    }

    public var description: String { reason }
}
