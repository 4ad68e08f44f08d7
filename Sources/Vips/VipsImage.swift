import CShims.Vips
import CVips

/// Owner of one `VipsImage*` reference, released in `deinit`. Deliberately not `Sendable`: a pipeline
/// is built and run on one thread.
public final class VipsImage {
    let pointer: OpaquePointer
    /// The encoded bytes a lazy image still reads from.
    private let source: ImageBuffer?

    init(taking pointer: OpaquePointer, source: ImageBuffer?) {
        self.pointer = pointer
        self.source = source
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }

    /// Opens `buffer` lazily: only the header is decoded, so dimensions can be checked before any
    /// pixels are (a small file can declare a huge image). Access is sequential: the pixels can be read
    /// once; `materialized()` gives an image that can be read any number of times.
    public static func open(_ buffer: ImageBuffer, allPages: Bool = false) throws(VipsError) -> VipsImage {
        try VipsRuntime.start()
        var out: OpaquePointer?
        guard imgbake_vips_open_buffer(buffer.baseAddress, buffer.count, allPages ? 1 : 0, &out) == 0, let out
        else { throw VipsError.drain("cannot read image header", source: buffer) }
        return VipsImage(taking: out, source: buffer)
    }

    /// Decodes `buffer` straight to `width` pixels wide with shrink-on-load, upright (EXIF orientation
    /// applied); with `colourManage`, from its embedded profile (or CMYK) to sRGB. Never upscales.
    /// Corrupt or truncated input is an error, not grey pixels.
    public static func thumbnail(_ buffer: ImageBuffer, width: Int, allPages: Bool = false,
                                 colourManage: Bool = false) throws(VipsError) -> VipsImage {
        try VipsRuntime.start()
        var out: OpaquePointer?
        guard imgbake_vips_thumbnail_buffer(buffer.baseAddress, buffer.count, Int32(width), allPages ? 1 : 0,
                                            colourManage ? 1 : 0, &out) == 0, let out
        else { throw VipsError.drain("cannot decode image", source: buffer) }
        return VipsImage(taking: out, source: buffer)
    }

    /// Opens `buffer` to be decoded as stored (not turned upright, in its own colour space), once,
    /// as the pixels stream in. `shrink` (1, 2, 4 or 8) divides both sides while decoding where the
    /// format can (a JPEG's DCT scaling, libwebp's scaled decode), much cheaper than decoding every
    /// pixel and resizing them. Corrupt or truncated input is an error, not grey pixels.
    public static func load(_ buffer: ImageBuffer, shrink: Int = 1) throws(VipsError) -> VipsImage {
        try VipsRuntime.start()
        var out: OpaquePointer?
        guard imgbake_vips_load(buffer.baseAddress, buffer.count, Int32(shrink), &out) == 0, let out
        else { throw VipsError.drain("cannot decode image", source: buffer) }
        return VipsImage(taking: out, source: buffer)
    }

    /// The pixels in 8-bit sRGB, from the embedded profile (or CMYK).
    public func convertedToSRGB() throws(VipsError) -> VipsImage {
        var out: OpaquePointer?
        guard imgbake_vips_to_srgb(pointer, &out) == 0, let out else { throw VipsError.drain("cannot convert to sRGB", source: source) }
        return VipsImage(taking: out, source: source)
    }

    /// Turned upright by the EXIF orientation. Cheapest on a small image: it reads the pixels in
    /// another order than they were stored.
    public func autorotated() throws(VipsError) -> VipsImage {
        var out: OpaquePointer?
        guard imgbake_vips_autorot(pointer, &out) == 0, let out else { throw VipsError.drain("cannot turn image upright", source: source) }
        return VipsImage(taking: out, source: source)
    }

    /// This image resized to exactly `width` pixels wide (lanczos3), and `height` high (in proportion
    /// when nil); with `.premultiplied`, a constant colour under varying transparency stays constant.
    /// Returns the image itself when it already has that size.
    public func resized(width: Int, height: Int? = nil, alpha: AlphaResize = .premultiplied) throws(VipsError) -> VipsImage {
        let height = height ?? max(1, Int((Double(self.height) * Double(width) / Double(self.width)).rounded()))
        guard width != self.width || height != self.height else { return self }
        var out: OpaquePointer?
        guard imgbake_vips_resize_exact(pointer, Int32(width), Int32(height), alpha == .premultiplied ? 1 : 0, &out) == 0, let out
        else { throw VipsError.drain("cannot resize image", source: source) }
        return VipsImage(taking: out, source: source)
    }

    /// How a resize treats an alpha band.
    public enum AlphaResize: Sendable {
        /// Colours weighed by their opacity (in floating point): right for any transparency.
        case premultiplied
        /// The band resized like the others, in 8 bits: right where the image is opaque, and several
        /// times cheaper.
        case asBand
    }

    /// An animation (a stack of frames) with every frame resized to `width`; never upscales.
    public func animationResized(width: Int) throws(VipsError) -> VipsImage {
        guard width != self.width else { return self }
        var out: OpaquePointer?
        guard imgbake_vips_thumbnail_image(pointer, Int32(width), &out) == 0, let out
        else { throw VipsError.drain("cannot resize animation", source: source) }
        return VipsImage(taking: out, source: source)
    }

    /// True when the image carries an ICC profile.
    public var hasColourProfile: Bool { vips_image_get_typeof(pointer, "icc-profile-data") != 0 }

    /// Runs the pipeline into memory. A pipeline reads its source sequentially, so it can be encoded
    /// once; a memory image can be resized and encoded any number of times.
    public func materialized() throws(VipsError) -> VipsImage {
        guard let out = vips_image_copy_memory(pointer)
        else { throw VipsError.drain("cannot decode image", source: source) }
        return VipsImage(taking: out, source: nil)
    }

    /// A copy sharing the pixels, without the metadata fields for which `drop` returns true.
    public func removingFields(where drop: (String) -> Bool) throws(VipsError) -> VipsImage {
        var out: OpaquePointer?
        guard imgbake_vips_copy(pointer, &out) == 0, let out else { throw VipsError.drain("cannot copy image", source: source) }
        let copy = VipsImage(taking: out, source: source)
        for name in copy.fieldNames where drop(name) {
            _ = vips_image_remove(copy.pointer, name)
        }
        return copy
    }

    // MARK: Header

    public var width: Int { Int(vips_image_get_width(pointer)) }
    /// Height of the whole image; for an animation, all frames stacked (see `pageHeight`).
    public var height: Int { Int(vips_image_get_height(pointer)) }
    public var bands: Int { Int(vips_image_get_bands(pointer)) }
    public var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    /// Number of frames (1 for a still image).
    public var pages: Int { Int(vips_image_get_n_pages(pointer)) }
    /// Height of one frame.
    public var pageHeight: Int { Int(vips_image_get_page_height(pointer)) }
    /// EXIF orientation 1–8 (1 when absent).
    public var orientation: Int { int(field: "orientation") ?? 1 }

    public var fieldNames: [String] {
        guard let fields = vips_image_get_fields(pointer) else { return [] }
        defer { g_strfreev(fields) }
        var names: [String] = []
        var i = 0
        while let name = fields[i] {
            names.append(String(cString: name))
            i += 1
        }
        return names
    }

    public func int(field: String) -> Int? {
        guard vips_image_get_typeof(pointer, field) != 0 else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(pointer, field, &value) == 0 else { vips_error_clear(); return nil }
        return Int(value)
    }

    public func string(field: String) -> String? {
        guard vips_image_get_typeof(pointer, field) != 0 else { return nil }
        var value: UnsafePointer<CChar>?
        guard vips_image_get_string(pointer, field, &value) == 0, let value else { vips_error_clear(); return nil }
        return String(cString: value)
    }

    /// The colour space libvips says the pixels are in.
    public var interpretation: Interpretation {
        switch vips_image_get_interpretation(pointer) {
        case VIPS_INTERPRETATION_sRGB: .sRGB
        case VIPS_INTERPRETATION_RGB16: .rgb16
        case VIPS_INTERPRETATION_B_W: .grey
        case VIPS_INTERPRETATION_GREY16: .grey16
        case VIPS_INTERPRETATION_CMYK: .cmyk
        default: .other
        }
    }

    public enum Interpretation: Sendable { case sRGB, rgb16, grey, grey16, cmyk, other }

    /// Bits per sample (8 or 16 for what imgbake decodes).
    public var bitsPerSample: Int {
        switch vips_image_get_format(pointer) {
        case VIPS_FORMAT_UCHAR, VIPS_FORMAT_CHAR: 8
        case VIPS_FORMAT_USHORT, VIPS_FORMAT_SHORT: 16
        default: 32
        }
    }

    /// The same pixels as 8-bit sRGB (or 8-bit grey for grey images), alpha kept.
    public func eightBit() throws(VipsError) -> VipsImage {
        guard bitsPerSample != 8 || (interpretation != .sRGB && interpretation != .grey) else { return self }
        let target: VipsInterpretation = interpretation == .grey16 || interpretation == .grey ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        var out: OpaquePointer?
        guard imgbake_vips_colourspace(pointer, target, &out) == 0, let out else { throw VipsError.drain("cannot convert to 8 bits", source: source) }
        return VipsImage(taking: out, source: source)
    }

    /// The first frame of an animation (the image itself when it has one frame).
    public func firstFrame() throws(VipsError) -> VipsImage {
        guard pages > 1 else { return self }
        var out: OpaquePointer?
        guard imgbake_vips_crop(pointer, 0, 0, Int32(width), Int32(pageHeight), &out) == 0, let out
        else { throw VipsError.drain("cannot take the first frame", source: source) }
        return VipsImage(taking: out, source: source)
    }

    /// Fully transparent pixels made black-transparent, and a fully opaque alpha band dropped: both
    /// invisible, both make PNG and GIF files smaller. Call on a decoded (memory) image.
    public func tidyingAlpha() throws(VipsError) -> VipsImage {
        var out: OpaquePointer?
        guard imgbake_vips_tidy_alpha(pointer, &out) == 0, let out else { throw VipsError.drain("cannot tidy transparency", source: source) }
        return VipsImage(taking: out, source: source)
    }

    public func blurred(sigma: Double) throws(VipsError) -> VipsImage {
        var out: OpaquePointer?
        guard imgbake_vips_gaussblur(pointer, sigma, &out) == 0, let out else { throw VipsError.drain("cannot blur", source: source) }
        return VipsImage(taking: out, source: source)
    }

    /// A binary metadata field (such as `exif-data`), copied.
    public func blob(field: String) -> [UInt8]? {
        guard vips_image_get_typeof(pointer, field) != 0 else { return nil }
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(pointer, field, &data, &length) == 0, let data else { vips_error_clear(); return nil }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }

    /// Sets a binary metadata field (such as `exif-data`) to a copy of `bytes`. Use on an image of
    /// one's own (a copy from `removingFields`): metadata is not shared.
    public func set(blob bytes: [UInt8], field: String) {
        bytes.withUnsafeBytes { vips_image_set_blob_copy(pointer, field, $0.baseAddress, $0.count) }
    }

    /// The decoded pixels, row by row, `bands` bytes per pixel (8-bit images).
    public func pixels() throws(VipsError) -> [UInt8] {
        var size = 0
        guard let memory = vips_image_write_to_memory(pointer, &size) else { throw VipsError.drain("cannot decode image", source: source) }
        defer { g_free(memory) }
        return Array(UnsafeRawBufferPointer(start: memory, count: size))
    }

    // MARK: Encoding

    /// Encodes the image. With `strip`, the saver drops all metadata; without it, whatever fields are
    /// left on the image are written, so callers remove what must not leave first (`removingFields`).
    /// vips 8.14's WebP saver ignores `strip`: callers that must guarantee it remove the fields too.
    public func encoded(as format: EncodeFormat, strip: Bool = true) throws(VipsError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let s: Int32 = strip ? 1 : 0
        let status: Int32 = switch format {
        case .webp(let quality, let effort): imgbake_vips_webpsave(pointer, Int32(quality), Int32(effort), s, &buffer, &length)
        case .jpeg(let quality): imgbake_vips_jpegsave(pointer, Int32(quality), s, &buffer, &length)
        case .jpegSequential(let quality): imgbake_vips_jpegsave_sequential(pointer, Int32(quality), &buffer, &length)
        case .png(let compression, let palette, let quality, let effort):
            imgbake_vips_pngsave(pointer, Int32(compression), palette ? 1 : 0, Int32(quality), Int32(effort), s, &buffer, &length)
        case .gif: imgbake_vips_gifsave(pointer, s, &buffer, &length)
        case .avif(let quality, let effort, let fullChroma):
            imgbake_vips_avifsave(pointer, Int32(quality), Int32(effort), fullChroma ? 1 : 0, s, &buffer, &length)
        }
        guard status == 0, let buffer else { throw VipsError.drain("cannot encode \(format.name)", source: source) }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}

/// An output encoding and its settings.
public enum EncodeFormat: Sendable, Hashable {
    case webp(quality: Int, effort: Int)
    case jpeg(quality: Int)
    /// What `.jpeg` decodes to (the same quantised coefficients), coded in one sequential scan with the
    /// standard Huffman tables, without metadata: a try of a quality costs a fraction of the progressive,
    /// optimised file's encode, and measures the same pixels.
    case jpegSequential(quality: Int)
    /// `palette` quantises to 256 colours with `quality` (0–100) and `effort` (1–10).
    case png(compression: Int, palette: Bool, quality: Int, effort: Int)
    case gif
    /// `fullChroma`: 4:4:4 (colour at every pixel), else 4:2:0.
    case avif(quality: Int, effort: Int, fullChroma: Bool = false)

    public var name: String {
        switch self {
        case .webp: "WebP"
        case .jpeg, .jpegSequential: "JPEG"
        case .png: "PNG"
        case .gif: "GIF"
        case .avif: "AVIF"
        }
    }
}
