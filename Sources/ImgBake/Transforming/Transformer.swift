import Foundation
import Exif
import Jxl
import Vips

/// One encoded variant, before it is stored.
public struct EncodedVariant: Sendable {
    public var spec: VariantSpec
    public var bytes: [UInt8]
    public var width: Int
    public var height: Int
    /// What the bytes are: encoded at a quality (chosen, for an automatic one), or the source's own.
    public var made: VariantSpec.Made

    /// A variant that cannot be made from this source (no bytes): a JPEG of a PNG with transparency.
    /// The manager records it as dropped, so it is not asked for again.
    public var isUnmade: Bool { bytes.isEmpty }
}

/// Why an original could not be turned into variants. All of these are permanent for those bytes.
public enum TransformError: Error, Sendable, CustomStringConvertible {
    case tooManyPixels(width: Int, height: Int, pages: Int, limit: Int)
    case tooManyFrames(pages: Int, limit: Int)
    case undecodable(String)
    case encodeFailed(String)

    public var description: String {
        switch self {
        case .tooManyPixels(let w, let h, let pages, let limit):
            let frames = pages > 1 ? " × \(pages) frames" : ""
            return "image is \(w)×\(h)\(frames) = \(Self.megapixels(w * h * pages)) MP, over the \(Self.megapixels(limit)) MP limit (max_pixels)"
        case .tooManyFrames(let pages, let limit):
            return "animation has \(pages) frames, over the \(limit)-frame limit (max_frames)"
        case .undecodable(let why): return "cannot decode image (\(why))"
        case .encodeFailed(let why): return "cannot encode variant (\(why))"
        }
    }

    private static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}

/// What one decode of an original must produce.
public struct TransformJob: Sendable {
    public var specs: [VariantSpec]
    public var placeholder: Placeholder

    public init(specs: [VariantSpec], placeholder: Placeholder = .none) {
        self.specs = specs
        self.placeholder = placeholder
    }
}

/// The header facts of an original, read without decoding pixels.
public struct Inspection: Sendable {
    public var info: SourceInfo
    public var credits: Credits
    public var hasAlpha = false
    /// Has an embedded ICC profile or is CMYK: must be converted to sRGB.
    public var needsColourManagement = false
    public var isCMYK = false
    /// The embedded profile is sRGB: dropping it changes no colour.
    public var profileIsSRGB = false
    /// EXIF orientation 1: nothing to turn.
    public var upright = true
    /// EXIF orientations 5–8: stored with width and height swapped.
    public var quarterTurned = false
    /// A multi-scan (progressive) JPEG: libjpeg keeps every coefficient of it while decoding.
    public var progressive = false
}

/// Turns an original into its variants with libvips, on a pool of threads it owns. Each source is
/// decoded once, straight to the largest width needed (shrink-on-load), upright, in 8-bit sRGB;
/// smaller widths and the placeholder are derived from that copy in memory. Metadata is removed from
/// a copy before encoding, because libvips 8.14's WebP saver ignores `strip`.
public final class Transformer: Sendable {
    private let pool: WorkerPool
    /// Header reads are cheap: they get their own thread, so a downloaded original is inspected,
    /// stored and released at once instead of waiting (in memory) behind long encodes.
    private let inspectPool: WorkerPool
    private let limits: Limits
    /// Decodes at once while their expected memory fits `memoryPerThread` × threads: a 17 MP
    /// progressive JPEG alone takes 130 MiB, and two heavy decodes together took the bench's cold
    /// build to 305–321 MiB (208–224 MiB with the gate, over the same five runs' noise in time).
    private let memory: MemoryGate
    public static let memoryPerThread = 96 << 20

    public struct Limits: Sendable {
        public var maxPixels: Int
        public var maxFrames: Int
        public init(maxPixels: Int, maxFrames: Int = 1000) {
            self.maxPixels = maxPixels
            self.maxFrames = maxFrames
        }
    }

    /// `memoryPerThread`: tests make it small to have every decode wait for room.
    public init(threads: Int, limits: Limits, memoryPerThread: Int = Transformer.memoryPerThread) throws {
        // libvips starts with the first image (`VipsImage` starts it): loading it and its modules is
        // a sixth of a build that has no image to make (a warm rebuild).
        pool = WorkerPool(threads: threads, name: "transform")
        inspectPool = WorkerPool(threads: 1, name: "inspect")
        self.limits = limits
        memory = MemoryGate(budget: max(1, threads) * memoryPerThread)
    }

    /// Finishes the work queued so far and ends the threads.
    public func shutdown() async {
        await pool.shutdown()
        await inspectPool.shutdown()
    }

    public convenience init(threads: Int, maxPixels: Int) throws {
        try self.init(threads: threads, limits: Limits(maxPixels: maxPixels))
    }

    /// Reads a file (a local image) on the header thread, not on Swift's cooperative pool.
    func readFile(_ path: String) async throws(AtomicFile.ReadError) -> [UInt8] {
        let result = await inspectPool.run { () -> Result<[UInt8], AtomicFile.ReadError> in
            Result { () throws(AtomicFile.ReadError) in try AtomicFile.readWithStamp(path).0 }
        }
        return try result.get()
    }

    /// Reads the header and EXIF only (nothing is decoded) and checks the pixel and frame budgets.
    public func inspect(_ bytes: ImageBuffer, format: ImageFormat) async throws -> Inspection {
        try await inspectPool.run { [limits] in try Self.inspect(bytes, format: format, limits: limits) }
    }

    /// Decodes once and makes what `job` asks for, given the source's header.
    public func transform(_ bytes: ImageBuffer, format: ImageFormat,
                          job: @escaping @Sendable (SourceInfo) -> TransformJob) async throws -> TransformOutput {
        try await transform(loading: { bytes }, format: format, job: job)
    }

    /// Same, reading the source on the transform thread itself: the bytes exist only while this
    /// image is decoded, so memory is bounded by the number of threads, not by the images queued.
    /// A decode whose expected memory does not fit beside the running ones lets go of its bytes and
    /// thread, waits for them to end, and starts again (reading the header twice is cheap).
    public func transform(loading source: @escaping @Sendable () throws -> ImageBuffer, format: ImageFormat,
                          job: @escaping @Sendable (SourceInfo) -> TransformJob) async throws -> TransformOutput {
        var held: Int?
        while true {
            let attempt = try await pool.run { [limits, memory, held] () throws -> Attempt in
                var taken = held
                defer { if let taken { memory.give(taken) } }
                let bytes = try source()
                let inspection = try Self.inspect(bytes, format: format, limits: limits)
                let work = job(inspection.info)
                if taken == nil {
                    let weight = Self.expectedMemory(work, inspection)
                    guard memory.take(weight) else { return .wait(weight) }
                    taken = weight
                }
                return .done(try Self.run(work, on: bytes, inspection: inspection))
            }
            switch attempt {
            case .done(let output): return output
            case .wait(let weight):
                await memory.wait(for: weight)
                held = weight
            }
        }
    }

    private enum Attempt: Sendable {
        case done(TransformOutput)
        case wait(Int)
    }

    /// The memory a decode for `job` is expected to take, from the bench corpus one image at a time
    /// (peak RSS above the process's own): a progressive JPEG about 8 bytes a pixel (every
    /// coefficient kept), a shrink-on-load decode about 2, a source decoded whole (PNG, alpha, CMYK,
    /// animation frames) 56 MiB of encoders' and resizers' buffers and 4 bytes a pixel.
    static func expectedMemory(_ job: TransformJob, _ inspection: Inspection) -> Int {
        let info = inspection.info, pixels = info.width * info.height * max(1, info.pages)
        if inspection.progressive { return 8 * pixels }
        if shrinksOnLoad(job, inspection) { return 2 * pixels }
        return (56 << 20) + 4 * pixels
    }

    /// JPEG and opaque WebP shrink on load (`Intermediates.shrink`), and animations are thumbnailed
    /// frame by frame; the rest (PNG, anything with alpha) is decoded at full size and resized.
    static func shrinksOnLoad(_ job: TransformJob, _ inspection: Inspection) -> Bool {
        let format = inspection.info.format
        return job.specs.contains { $0.animated } || format == .jpeg || (format == .webp && !inspection.hasAlpha)
    }

    /// Same, with a fixed list of specs (and no placeholder).
    public func variants(of bytes: ImageBuffer, format: ImageFormat,
                         plan: @escaping @Sendable (SourceInfo) -> [VariantSpec]) async throws -> (SourceInfo, [EncodedVariant]) {
        let output = try await transform(bytes, format: format) { TransformJob(specs: plan($0)) }
        return (output.info, output.variants)
    }

    /// A small WebP of an encoded image as a data URI (for HTML reports); nil when it cannot be read.
    public func thumbnail(of bytes: [UInt8], width: Int) async -> String? {
        await pool.run {
            guard let image = try? VipsImage.open(ImageBuffer(bytes)).firstFrame() else { return nil }
            guard let small = try? image.resized(width: min(width, image.width)).materialized(),
                  let webp = try? small.removingFields(where: { _ in true }).encoded(as: .webp(quality: 60, effort: 2))
            else { return nil }
            return "data:image/webp;base64," + Data(WebPContainer.strippingMetadata(webp)).base64EncodedString()
        }
    }

    static func inspect(_ bytes: ImageBuffer, format: ImageFormat, limits: Limits) throws -> Inspection {
        guard format != .svg else { throw TransformError.undecodable("SVG is copied, not decoded") }
        if let problem = bytes.withUnsafeBytes({ ContainerCheck.problem(in: $0, format: format) }) {
            throw TransformError.undecodable(problem)
        }
        let image: VipsImage
        do { image = try VipsImage.open(bytes, allPages: format.canAnimate) } catch { throw TransformError.undecodable(error.detail ?? error.message) }
        let pages = max(1, image.pages)
        let frameHeight = pages > 1 ? image.pageHeight : image.height
        guard pages <= limits.maxFrames else { throw TransformError.tooManyFrames(pages: pages, limit: limits.maxFrames) }
        guard image.width * frameHeight * pages <= limits.maxPixels else {
            throw TransformError.tooManyPixels(width: image.width, height: frameHeight, pages: pages, limit: limits.maxPixels)
        }
        // Orientations 5–8 turn the image a quarter: width and height swap once it is upright.
        let swapped = (5...8).contains(image.orientation)
        let info = SourceInfo(format: format, width: swapped ? frameHeight : image.width,
                              height: swapped ? image.width : frameHeight, pages: pages)
        let exif = image.blob(field: "exif-data").flatMap { blob in blob.withUnsafeBytes { ExifReader.read($0) } }
        return Inspection(info: info, credits: Credits(copyright: exif?.copyright, artist: exif?.artist, captured: exif?.captureDate),
                          hasAlpha: image.hasAlpha, needsColourManagement: image.hasColourProfile || image.interpretation == .cmyk,
                          isCMYK: image.interpretation == .cmyk,
                          profileIsSRGB: image.blob(field: "icc-profile-data").map(ICCProfile.isSRGB) ?? false,
                          upright: image.orientation == 1, quarterTurned: swapped,
                          progressive: format == .jpeg && image.int(field: "jpeg-multiscan") == 1)
    }

    static func run(_ job: TransformJob, on bytes: ImageBuffer, inspection: Inspection) throws -> TransformOutput {
        let info = inspection.info
        let placeholderWidth = job.placeholder == .none ? nil : min(info.width, 64)
        guard !job.specs.isEmpty || placeholderWidth != nil else { return TransformOutput(info: info, variants: [], placeholder: nil) }
        var pixels = Intermediates(bytes, inspection: inspection, animated: job.specs.contains { $0.animated })
        // The source itself (metadata removed) stands for a variant in its own format whenever it needs
        // no pixel change and is smaller than the re-encode: an output is never larger than its source.
        let passthroughAllowed = info.pages == 1 && !job.specs.contains { $0.animated } && inspection.upright
            && (!inspection.needsColourManagement || (inspection.profileIsSRGB && !inspection.isCMYK))
        var passthrough: [UInt8]??
        func sourceBytes(for spec: VariantSpec) -> [UInt8]? {
            guard passthroughAllowed, spec.format == info.format, spec.keepMetadata.isEmpty else { return nil }
            if passthrough == nil {
                passthrough = .some(bytes.withUnsafeBytes { SourcePassthrough.stripped($0, format: info.format, dropSRGBProfile: inspection.profileIsSRGB) })
            }
            return passthrough!
        }
        var encoded: [EncodedVariant] = []
        // Widest decode first, each decode made once for every variant made from it and let go before
        // the next; within one, widest first, each width made once for all its formats.
        // One sample per width, tried by each format searched there.
        var sample: (spec: VariantSpec, sample: QualitySearch.Sample)?
        for spec in job.specs.sorted(by: Intermediates.order) {
            // A JPEG has no transparency: a PNG that has some keeps its PNG fallback alone.
            if spec.format == .jpeg && info.format == .png && inspection.hasAlpha {
                encoded.append(EncodedVariant(spec: spec, bytes: [], width: spec.width,
                                              height: Intermediates.height(atWidth: spec.width, of: info), made: .lossless))
                continue
            }
            let image: VipsImage
            do { image = try pixels.image(for: spec) } catch { throw TransformError.undecodable(error.detail ?? error.message) }
            do throws(VipsError) {
                let found = try spec.auto.map { auto throws(VipsError) -> QualitySearch.Found in
                    if sample.map({ !$0.spec.hasSamePixels(as: spec) }) ?? true { sample = (spec, try QualitySearch.Sample(of: image)) }
                    return try QualitySearch(spec: spec, auto: auto).find(on: sample!.sample)
                }
                var output = try Metadata.encode(image, spec: spec, quality: found?.quality, credits: inspection.credits)
                var made: VariantSpec.Made = spec.isLossy ? .quality(found?.quality ?? spec.quality, score: found?.score) : .lossless
                var size = (width: image.width, height: max(1, image.pages) > 1 ? image.pageHeight : image.height)
                if let original = sourceBytes(for: spec), original.count <= output.count {
                    // At a smaller width too: a source compressed harder than the encoder's quality
                    // (a 2,000 px, 194 KB JPEG became a 255 KB file 1,920 px wide) is sent as it is.
                    output = original
                    made = .source
                    size = (info.width, info.height)
                }
                encoded.append(EncodedVariant(spec: spec, bytes: output, width: size.width, height: size.height, made: made))
            } catch {
                throw TransformError.encodeFailed("\(spec.format.rawValue) \(spec.width)w: \(error.message)")
            }
        }
        let placeholder: String?
        do { placeholder = try placeholderWidth.flatMap { width throws(VipsError) in try Placeholders.make(job.placeholder, from: try pixels.decoded(width: width)) } } catch {
            throw TransformError.encodeFailed("placeholder: \(error.message)")
        }
        return TransformOutput(info: info, variants: encoded, placeholder: placeholder)
    }
}

/// The decoded pixels each variant is made from. A variant's pixels depend on the source and its own
/// spec only, never on which other variants one job asks for: a social card made alone and made beside
/// the page's widths is the same file (a cold build and a warm one after any history give one site).
/// - A spec with an anchor (`from`) is the source decoded to the anchor's width, then resized to its
///   own: all of a page's narrower widths share that one decode.
/// - A spec without one (the anchor itself, a width above it, a placeholder) is the source decoded to
///   its own width.
/// Every width's height is the source's in proportion, rounded, however it was reached.
struct Intermediates {
    let bytes: ImageBuffer
    let inspection: Inspection
    let animated: Bool
    private var last: (width: Int, image: VipsImage)?

    init(_ bytes: ImageBuffer, inspection: Inspection, animated: Bool) {
        self.bytes = bytes
        self.inspection = inspection
        self.animated = animated
    }

    /// The width of the decode `spec` is made from.
    static func decodeWidth(of spec: VariantSpec) -> Int { spec.from ?? spec.width }

    /// Widest decode first, then widest variant: the variants made from one decode come together.
    static func order(_ a: VariantSpec, _ b: VariantSpec) -> Bool {
        let (da, db) = (decodeWidth(of: a), decodeWidth(of: b))
        return da != db ? da > db : a.width > b.width
    }

    /// The source's height at `width`, in proportion.
    static func height(atWidth width: Int, of info: SourceInfo) -> Int {
        max(1, Int((Double(info.height) * Double(width) / Double(info.width)).rounded()))
    }

    /// What a decode to `width` divides the source's sides by while decoding: the largest of 2, 4 and 8
    /// that leaves it at least `width` wide, where the format can (JPEG, opaque WebP), else 1. The
    /// rest of the way is a lanczos3 resize. libvips' thumbnail leaves at least a factor of two to its
    /// resize: a resize that long is most of a 1,600 px decode's cost in libvips 8.14 (its horizontal
    /// lanczos is plain C), for 0.0003 of SSIM against a floating-point resize of the source.
    static func shrink(decodingTo width: Int, _ inspection: Inspection) -> Int {
        let info = inspection.info
        guard info.pages == 1, info.format == .jpeg || (info.format == .webp && !inspection.hasAlpha) else { return 1 }
        var shrink = 1
        while shrink < 8 && info.width / (2 * shrink) >= width { shrink *= 2 }
        return shrink
    }

    /// The pixels of `spec`: upright, 8-bit sRGB, in memory.
    mutating func image(for spec: VariantSpec) throws(VipsError) -> VipsImage {
        let decoded = try decoded(width: Self.decodeWidth(of: spec))
        guard spec.width < decoded.width else { return decoded }
        if animated { return try decoded.animationResized(width: spec.width).materialized() }
        return try decoded.resized(width: spec.width, height: Self.height(atWidth: spec.width, of: inspection.info)).materialized()
    }

    /// The source decoded to `width`, upright, 8-bit sRGB, in memory (kept until another width is asked for).
    mutating func decoded(width: Int) throws(VipsError) -> VipsImage {
        if let last, last.width == width { return last.image }
        last = nil
        let decoded = animated
            ? try VipsImage.thumbnail(bytes, width: width, allPages: true, colourManage: inspection.needsColourManagement)
            : try decode(to: width)
        let image = try decoded.materialized().eightBit().tidyingAlpha().materialized()
        last = (width, image)
        return image
    }

    /// The source resized to `width` as it is decoded, then in sRGB and upright: the colour conversion
    /// and the turn are made on the resized pixels, where they cost a fraction (a quarter turn of a
    /// whole decode reads it column by column). A source with an alpha band is resized first with the
    /// band as a plain one: when it comes out fully opaque the picture had no transparency to weigh its
    /// colours by, and the band is dropped (most such wallpapers and screenshots); otherwise it is
    /// decoded again and resized premultiplied, which costs several times as much (floating point)
    /// but keeps colours under transparency right.
    private func decode(to width: Int) throws(VipsError) -> VipsImage {
        let height = Self.height(atWidth: width, of: inspection.info)
        // As stored: a picture turned a quarter has its sides swapped until it is upright.
        let (storedWidth, storedHeight) = inspection.quarterTurned ? (height, width) : (width, height)
        let shrink = Self.shrink(decodingTo: width, inspection)
        func source() throws(VipsError) -> VipsImage {
            let stored = try VipsImage.load(bytes, shrink: shrink)
            // A profile converts whatever the depth; without one, 16 bits become 8 before the resize.
            return inspection.needsColourManagement ? stored : try stored.eightBit()
        }
        let first = try source()
        var image: VipsImage
        if first.hasAlpha, storedWidth < first.width {
            let plain = try first.resized(width: storedWidth, height: storedHeight, alpha: .asBand).materialized().tidyingAlpha()
            image = plain.hasAlpha ? try source().resized(width: storedWidth, height: storedHeight) : plain
        } else {
            image = try first.resized(width: storedWidth, height: storedHeight)
        }
        if inspection.needsColourManagement { image = try image.convertedToSRGB() }
        if !inspection.upright { image = try image.materialized().autorotated() }
        return image
    }
}

/// What one decode produced.
public struct TransformOutput: Sendable {
    public var info: SourceInfo
    public var variants: [EncodedVariant]
    /// The requested placeholder's value, if one was asked for.
    public var placeholder: String?
}

/// What metadata leaves with an output: by default nothing; with `keep_metadata`, a new EXIF block
/// holding only the kept tags (written with libexif from the typed values read at inspection). GPS,
/// serial numbers and MakerNotes can never be kept (the configuration refuses them). JPEG XL variants
/// carry none (libjxl writes the pixels alone here).
enum Metadata {
    /// `quality` overrides the spec's (an automatic quality, once chosen).
    static func encode(_ image: VipsImage, spec: VariantSpec, quality: Int? = nil, credits: Credits) throws(VipsError) -> [UInt8] {
        // Every metadata field goes: raw EXIF, XMP, IPTC, the ICC profile (outputs are sRGB, the web's
        // default), the orientation (outputs are upright), and the per-tag EXIF fields.
        let clean = try image.removingFields(where: isMetadata)
        let kept = ExifWriter.block(copyright: spec.keepMetadata.contains("copyright") ? credits.copyright : nil,
                                    artist: spec.keepMetadata.contains("artist") ? credits.artist : nil)
        if let kept { clean.set(blob: kept, field: "exif-data") }
        let bytes = try clean.encoded(as: spec.encoding(quality: quality ?? spec.quality), strip: kept == nil)
        // libvips 8.14's WebP saver writes EXIF whatever `strip` says: check the output, not the option.
        return spec.format == .webp ? WebPContainer.strippingMetadata(bytes, keepEXIF: kept != nil) : bytes
    }

    static func isMetadata(_ field: String) -> Bool {
        ["exif-data", "xmp-data", "iptc-data", "icc-profile-data", "orientation"].contains(field) || field.hasPrefix("exif-")
    }
}

extension ImageFormat {
    /// Formats that can hold an animation.
    var canAnimate: Bool { self == .gif || self == .webp }
}

extension VipsImage {
    /// These pixels as `encoding` writes them: libvips' saver, or libjxl from the samples (JPEG XL,
    /// which the stack's libvips cannot write; no metadata).
    func encoded(as encoding: VariantEncoding, strip: Bool = true) throws(VipsError) -> [UInt8] {
        switch encoding {
        case .vips(let format): return try encoded(as: format, strip: strip)
        case .jpegXL(let quality, let effort):
            let samples = try self.samples()
            do {
                return try JpegXL.encode(samples.bytes, width: samples.width, height: samples.height, bands: samples.bands,
                                         quality: quality, effort: effort)
            } catch { throw VipsError(message: "JPEG XL: \(error.message)") }
        }
    }
}

extension LumaPlane {
    /// The luma of an encoded variant (a quality search's try): JPEG XL decoded by libjxl, the rest by libvips.
    init(decoding bytes: [UInt8], as format: ImageFormat) throws(VipsError) {
        guard format == .jxl else { try self.init(decoding: ImageBuffer(bytes)); return }
        self.init(try PixelSamples(decoding: bytes, as: format))
    }
}

extension PixelSamples {
    /// The samples of an encoded variant (a quality search's try): JPEG XL decoded by libjxl, the rest by libvips.
    init(decoding bytes: [UInt8], as format: ImageFormat) throws(VipsError) {
        guard format == .jxl else { try self.init(decoding: ImageBuffer(bytes)); return }
        do {
            let decoded = try JpegXL.decode(bytes)
            self.init(bytes: decoded.samples, width: decoded.width, height: decoded.height, bands: decoded.bands)
        } catch { throw VipsError(message: "JPEG XL: \(error.message)") }
    }
}
