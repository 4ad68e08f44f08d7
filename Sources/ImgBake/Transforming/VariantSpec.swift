import Digest
import Jxl
import Vips

/// One output image to make from an original: width, format and encoder settings. Its canonical
/// string enters the variant key, so changing any of these makes exactly the affected variants again.
public struct VariantSpec: Hashable, Sendable {
    public var width: Int
    public var format: ImageFormat
    /// The encoder quality; unused when `auto` is set.
    public var quality: Int
    public var effort: Int
    /// Every frame (an animated GIF or WebP stays animated).
    public var animated: Bool
    /// EXIF fields kept in the output (lower-cased names), sorted.
    public var keepMetadata: [String]
    /// The quality is chosen for this variant's own pixels (`QualitySearch`): the target and bounds
    /// are the spec, the quality found is recorded with the variant (`recorded(as:)`).
    public var auto: AutoQuality? = nil
    /// The width of the decode this variant is resized from (the anchor: the widest configured width,
    /// capped at the source's), when it is narrower than that; nil when it is decoded straight to its
    /// own width. Every narrower width of an image shares the anchor's one decode, and a variant's
    /// pixels still depend on its source and its spec only, never on what else a job asks for.
    public var from: Int? = nil
    /// A modern-format variant made where the source's own format is not made at every width
    /// (`images.fallback = "one"`): it is never dropped for a fallback file of its width, which most
    /// pages do not have, so whether it exists depends on its own spec only, never on what else was
    /// asked for its image. Part of the key: the variant made where every width has a fallback, and
    /// may be dropped for it, is another.
    public var alone = false
    /// AVIF with colour at every pixel (4:4:4), for a source that has it (PNG, GIF: drawings, logos,
    /// screenshots, whose saturated edges 4:2:0 smears where a luma SSIM cannot see it); 4:2:0 for
    /// photographs, which JPEG already stores so.
    public var fullChroma = false

    public var canonical: String {
        let q = auto?.canonical ?? "\(quality)"
        let anchor = from.map { ";from=\($0)" } ?? ""
        return "w=\(width);f=\(format.rawValue);q=\(q);e=\(effort);anim=\(animated ? 1 : 0);keep=\(keepMetadata.joined(separator: ","))\(anchor)\(alone ? ";alone" : "")\(fullChroma ? ";chroma=444" : "")"
    }

    /// The spec string a variant record keeps: the canonical string, then what the bytes are, so that
    /// the index and the remote cache (which keep this string with the variant) give the chosen quality
    /// and its score back without a table of their own: `;made=q74` (encoded at quality 74),
    /// `;made=q74;ssim=9652` (and its sample measured SSIM 0.9652) or `;made=source` (the source's own
    /// bytes stand for the variant).
    public func recorded(as made: Made) -> String {
        switch made {
        case .quality(let q, let score?): canonical + ";made=q\(q);ssim=\(score.tenThousandths)"
        case .quality(let q, nil): canonical + ";made=q\(q)"
        case .source: canonical + ";made=source"
        case .lossless: canonical
        }
    }

    /// The canonical spec in a record's spec string (what its key is made of), without `;made=…`.
    static func canonical(ofRecorded spec: String) -> Substring {
        guard let range = spec.range(of: ";made=") else { return spec[...] }
        return spec[..<range.lowerBound]
    }

    /// What follows `;made=` in a record's spec string, if anything does.
    static func madePart(of spec: String) -> Substring? {
        spec.range(of: ";made=").map { spec[$0.upperBound...] }
    }

    /// What a variant's bytes are: encoded at a quality, the source itself, or a lossless encoding.
    public enum Made: Sendable, Hashable {
        /// Encoded at a quality; `score` is what its quality search measured there (none for a fixed
        /// quality, which is not measured).
        case quality(Int, score: SSIMScore? = nil)
        case source
        case lossless

        /// From a record's spec string; records written before qualities were kept say nothing, and
        /// then a fixed quality is the spec's own.
        public init(recorded spec: String, of variant: VariantSpec) {
            if let made = VariantSpec.madePart(of: spec).flatMap(Made.init(suffix:)) {
                self = made
            } else {
                self = variant.isLossy && variant.auto == nil ? .quality(variant.quality) : .lossless
            }
        }

        /// `q74`, `q74;ssim=9652` or `source` (what follows `;made=`); nil for anything else, a quality
        /// outside 1–100 or a score outside 0–10000 too.
        init?(suffix: Substring) {
            let parts = suffix.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
            if suffix == "source" {
                self = .source
            } else if let first = parts.first, first.hasPrefix("q"), first.count <= 4, let q = Int(first.dropFirst()), (1...100).contains(q) {
                guard parts.count == 2 else { self = .quality(q); return }
                guard parts[1].hasPrefix("ssim="), parts[1].count <= 10, let value = Int(parts[1].dropFirst(5)),
                      let score = SSIMScore(tenThousandths: value) else { return nil }
                self = .quality(q, score: score)
            } else {
                return nil
            }
        }

        /// The encoder quality, if the bytes were encoded at one.
        public var quality: Int? {
            if case .quality(let q, _) = self { return q }
            return nil
        }

        /// What the quality search measured at that quality, if it searched.
        public var score: SSIMScore? {
            if case .quality(_, let score) = self { return score }
            return nil
        }
    }

    /// Encoded at a quality (WebP, AVIF, JPEG); PNG and GIF are lossless here.
    public var isLossy: Bool { format == .webp || format == .avif || format == .jpeg || format == .jxl }

    /// Bumped whenever the encoding code changes what it writes for the same spec, so that no variant
    /// made by other code is taken for this code's (CHANGELOG.md says what each revision changed).
    static let encoderRevision = 9

    /// The salt that ties variants to the code and library versions that made them: the stack's libvips
    /// (its build id names its savers and their codecs: libwebp, aom, mozjpeg, libpng, cgif).
    static var salt: String { "imgbake-encoder-\(encoderRevision);\(ImageStack.id)" }

    /// A JPEG XL variant's encoder besides: libjxl, which is not libvips', and its version, so that a
    /// cache shared by builds on two libjxl versions gives neither the other's files.
    static let jpegXLEncoder = ";libjxl-\(JpegXL.version)"

    public func key(original: BlobID) -> VariantKey { Self.key(original: original, canonical: canonical) }

    /// The key of the variant written `canonical` of `original` for this build's encoder: what a
    /// record read from elsewhere (a remote cache) must name to be taken as that variant.
    package static func key(original: BlobID, canonical: String) -> VariantKey {
        let encoder = canonical.contains(";f=jxl;") ? jpegXLEncoder : ""
        let text = "\(original.hex)|\(canonical)|\(Self.salt)\(encoder)"
        return VariantKey(hex: Hex.lowercase(SHA256.hash(Array(text.utf8))))
    }

    /// Made from the same pixels as `other` (whatever the format and encoder settings).
    func hasSamePixels(as other: VariantSpec) -> Bool {
        width == other.width && from == other.from && animated == other.animated
    }

    /// The encoder and its settings at `quality` (what an automatic quality tries, and then uses).
    func encoding(quality: Int) -> VariantEncoding {
        switch format {
        case .webp: .vips(.webp(quality: quality, effort: effort))
        case .avif: .vips(.avif(quality: quality, effort: effort, fullChroma: fullChroma))
        case .jpeg: .vips(.jpeg(quality: quality))
        case .png: .vips(.png(compression: effort, palette: false, quality: 100, effort: 7))
        case .gif: .vips(.gif)
        case .jxl: .jpegXL(quality: quality, effort: effort)
        case .svg: .vips(.png(compression: 6, palette: false, quality: 100, effort: 7)) // never planned: SVG is copied through
        }
    }

    /// libvips' settings at `quality`, for a format libvips writes (every one but JPEG XL).
    func encodeFormat(quality: Int) -> EncodeFormat {
        guard case .vips(let format) = encoding(quality: quality) else { preconditionFailure("\(format) is not written by libvips") }
        return format
    }
}

/// Who writes a variant: libvips' savers, or libjxl from the pixels libvips decoded (the stack's
/// libvips has no JPEG XL saver).
enum VariantEncoding: Sendable, Hashable {
    case vips(EncodeFormat)
    case jpegXL(quality: Int, effort: Int)
}

/// A mean SSIM (libwebp's, on luma) in ten-thousandths, as targets are given (`AutoQuality.ssim`):
/// exact to compare and to keep in a record.
public struct SSIMScore: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let tenThousandths: Int

    /// nil outside 0–10000.
    public init?(tenThousandths: Int) {
        guard (0...10_000).contains(tenThousandths) else { return nil }
        self.tenThousandths = tenThousandths
    }

    /// The measured SSIM rounded down to a ten-thousandth, so a score never claims more than was
    /// measured (a try at 0.96499 does not read as reaching 0.9650).
    public init(measured ssim: Double) {
        tenThousandths = max(0, min(10_000, Int((ssim * 10_000).rounded(.down))))
    }

    public var value: Double { Double(tenThousandths) / 10_000 }
    /// `0.9652`.
    public var description: String {
        let fraction = String(tenThousandths % 10_000)
        return "\(tenThousandths / 10_000).\(String(repeating: "0", count: 4 - fraction.count))\(fraction)"
    }
    public static func < (a: SSIMScore, b: SSIMScore) -> Bool { a.tenThousandths < b.tenThousandths }
}

/// The facts about an original that decide its variants.
public struct SourceInfo: Sendable, Hashable {
    public var format: ImageFormat
    /// Upright width (after EXIF orientation) of one frame.
    public var width: Int
    public var height: Int
    public var pages: Int
}

/// Which variants an original gets for a request: every requested width capped at the source's own
/// width (a narrower image keeps its own width, nothing is upscaled), in every requested format, best
/// first, and always the source's own format as the `<img>` fallback.
public struct VariantPlan: Sendable {
    public var settings: ImageSettings

    public init(settings: ImageSettings) { self.settings = settings }

    public var defaultRequest: VariantRequest { VariantRequest(settings) }

    /// What an image given markup (`<picture>` or `<img srcset>`) asks for, from what its reference asks:
    /// in a `<picture>`, the fallback at one width unless every width is configured.
    /// (`Configuration.madeImages` sets every width where imgbake writes no `<picture>`.)
    public func markupRequest(_ request: VariantRequest) -> VariantRequest {
        request.inPicture(oneFallbackAt: settings.oneFallbackWidth)
    }

    public func specs(for source: SourceInfo, request: VariantRequest? = nil) -> [VariantSpec] {
        guard source.format != .svg else { return [] }
        let request = request ?? defaultRequest
        let anchor = anchorWidth(for: source)
        return outputFormats(for: source, request: request).flatMap { format in
            widths(of: format, for: source, request: request).map { width in
                VariantSpec(width: width, format: format, quality: quality(format), effort: effort(format),
                            animated: source.pages > 1 && (format == .webp || format == .gif),
                            keepMetadata: settings.keepMetadata.map { $0.lowercased() }.sorted(), auto: auto(format),
                            from: width < anchor ? anchor : nil, alone: !Self.isFallback(format, of: source) && settings.fallback == .one,
                            fullChroma: format == .avif && (source.format == .png || source.format == .gif))
            }
        }
    }

    /// The one decode every narrower width of a source is resized from: the widest configured width,
    /// capped at the source's. A setting, not what one request happens to ask for, so a social card or
    /// an image shown small is the same file as the same width beside the page's others. Shrink-on-load
    /// to each width instead would read every coefficient of a JPEG (decode a whole WebP, inflate a
    /// whole PNG) once per width.
    public func anchorWidth(for source: SourceInfo) -> Int {
        min(settings.widths.max() ?? source.width, source.width)
    }

    /// The widths `format` is made at: the fallback's, WebP's (one where a better format is made), or
    /// every requested width.
    public func widths(of format: ImageFormat, for source: SourceInfo, request: VariantRequest) -> [Int] {
        if Self.isFallback(format, of: source) { return fallbackWidths(for: source, request: request) }
        if format == .webp { return webpWidths(for: source, request: request) }
        return widths(for: source, request: request)
    }

    /// The WebP widths asked for, capped at the source width; every width when WebP is the best format
    /// made of this source (an animation has no AVIF).
    public func webpWidths(for source: SourceInfo, request: VariantRequest) -> [Int] {
        let formats = outputFormats(for: source, request: request)
        guard request.webpWidths != nil, formats.contains(.avif) || formats.contains(.jxl) else { return widths(for: source, request: request) }
        return Array(Set(request.webp.map { min($0, source.width) })).filter { $0 > 0 }.sorted()
    }

    /// Requested widths capped at the source width.
    public func widths(for source: SourceInfo, request: VariantRequest) -> [Int] {
        let ratio = source.height > 0 ? Double(source.width) / Double(source.height) : 1
        let shown = request.displayHeights.map { Int((Double($0) * ratio).rounded()) }
        return Array(Set((request.widths + shown).map { min($0, source.width) })).filter { $0 > 0 }.sorted()
    }

    /// The widths made in the source's own format: those the request asks the fallback at, capped at the
    /// source width; every width when no other format is made (a WebP source asked for WebP, or only
    /// the original asked for): then the fallback is all there is.
    public func fallbackWidths(for source: SourceInfo, request: VariantRequest) -> [Int] {
        guard request.fallbackWidths != nil, outputFormats(for: source, request: request).contains(where: { !Self.isFallback($0, of: source) }) else {
            return widths(for: source, request: request)
        }
        return Array(Set(request.fallback.map { min($0, source.width) })).filter { $0 > 0 }.sorted()
    }

    /// Requested formats resolved for this source, duplicates removed, the source's own format last
    /// (`original` means it). AVIF and JPEG XL are skipped for animations (libheif here writes stills
    /// only; imgbake writes JPEG XL stills only).
    public func outputFormats(for source: SourceInfo, request: VariantRequest? = nil) -> [ImageFormat] {
        var formats: [ImageFormat] = []
        for format in (request ?? defaultRequest).formats {
            let resolved: ImageFormat = switch format {
            case .webp: .webp
            case .avif: .avif
            case .jxl: .jxl
            case .original: source.format
            }
            if (resolved == .avif || resolved == .jxl) && source.pages > 1 { continue }
            if !formats.contains(resolved) { formats.append(resolved) }
        }
        formats.removeAll { $0 == source.format }
        return formats + Self.fallbackFormats(for: source)
    }

    /// The formats the fallback (the `<img src>`, the one-for-one copy) of `source` is made in, at the
    /// same widths; at each width the manager keeps one (`ImageManager.keepingOnlyWorthwhile`). A PNG
    /// gets a JPEG beside its PNG: a photograph kept as PNG is often a tenth the bytes as a JPEG at
    /// the search's SSIM, a screenshot or a drawing is smaller as PNG, and a PNG with transparency
    /// gets no JPEG at all. Every other source: its own format.
    public static func fallbackFormats(for source: SourceInfo) -> [ImageFormat] {
        source.format == .png && source.pages == 1 ? [.jpeg, .png] : [source.format]
    }

    public static func isFallback(_ format: ImageFormat, of source: SourceInfo) -> Bool {
        fallbackFormats(for: source).contains(format)
    }

    /// A fixed quality (0 when the format has none or it is automatic).
    private func quality(_ format: ImageFormat) -> Int {
        guard case .fixed(let q) = settings.quality.choice(for: format) else { return 0 }
        // libwebp at method 2 (below) needs Q+1 to match method 4's PSNR at Q: the configured number
        // keeps meaning what libwebp's default makes of it (docs/MEASUREMENTS.md).
        return format == .webp ? min(100, q + 1) : q
    }

    private func auto(_ format: ImageFormat) -> AutoQuality? {
        guard case .auto(let auto) = settings.quality.choice(for: format) else { return nil }
        return auto
    }

    private func effort(_ format: ImageFormat) -> Int {
        switch format {
        case .webp: 2 // 0.45x the CPU of libwebp's default method 4; at Q+1 the same PSNR, 7 % more bytes
        case .avif: 1 // 1200 px, aom: effort 1 = 0.07 s and 13 KB, effort 2 = 0.50 s and 12 KB (docs/MEASUREMENTS.md)
        case .png: 4  // zlib level, with adaptive row filters: 0.43x level 6's CPU for 6 % more bytes, still 0.81x libvips' default size
        case .jxl: 3  // libjxl: effort 4 is no smaller; 5 and 7 are 1–9 % smaller at 3–8x the CPU (Benchmarks/formats.py)
        default: 0
        }
    }
}
