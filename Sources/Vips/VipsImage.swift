import CShims.Vips
import CVips

/// Owner of one `VipsImage*` reference, released in `deinit`. Deliberately not `Sendable`: a pipeline
/// is built and run on one thread.
public final class VipsImage {
    let pointer: UnsafeMutablePointer<CVips.VipsImage>
    /// The encoded bytes a lazy image still reads from.
    private let source: ImageBuffer?

    init(taking pointer: UnsafeMutablePointer<CVips.VipsImage>, source: ImageBuffer?) {
        self.pointer = pointer
        self.source = source
    }

    deinit { g_object_unref(pointer) }

    /// Opens `buffer` lazily: only the header is decoded, so dimensions can be checked before any
    /// pixels are (a small file can declare a huge image). Access is sequential: the pixels can be read
    /// once; `materialized()` gives an image that can be read any number of times.
    public static func open(_ buffer: ImageBuffer, allPages: Bool = false) throws(VipsError) -> VipsImage {
        try VipsRuntime.start()
        var out: UnsafeMutablePointer<CVips.VipsImage>?
        guard imgbake_vips_open_buffer(buffer.baseAddress, buffer.count, allPages ? 1 : 0, &out) == 0, let out
        else { throw VipsError.drain("cannot read image header") }
        return VipsImage(taking: out, source: buffer)
    }

    /// Decodes `buffer` straight to `width` pixels wide with shrink-on-load, upright (EXIF orientation
    /// applied) and in sRGB. Never upscales. Corrupt or truncated input is an error, not grey pixels.
    public static func thumbnail(_ buffer: ImageBuffer, width: Int, allPages: Bool = false) throws(VipsError) -> VipsImage {
        try VipsRuntime.start()
        var out: UnsafeMutablePointer<CVips.VipsImage>?
        guard imgbake_vips_thumbnail_buffer(buffer.baseAddress, buffer.count, Int32(width), allPages ? 1 : 0, &out) == 0,
              let out
        else { throw VipsError.drain("cannot decode image") }
        return VipsImage(taking: out, source: buffer)
    }

    /// A smaller copy of this (decoded) image, `width` pixels wide; never upscales.
    public func thumbnail(width: Int) throws(VipsError) -> VipsImage {
        var out: UnsafeMutablePointer<CVips.VipsImage>?
        guard imgbake_vips_thumbnail_image(pointer, Int32(width), &out) == 0, let out
        else { throw VipsError.drain("cannot resize image") }
        return VipsImage(taking: out, source: source)
    }

    /// Runs the pipeline into memory. A pipeline reads its source sequentially, so it can be encoded
    /// once; a memory image can be resized and encoded any number of times.
    public func materialized() throws(VipsError) -> VipsImage {
        guard let out = vips_image_copy_memory(pointer)
        else { throw VipsError.drain("cannot decode image") }
        return VipsImage(taking: out, source: nil)
    }

    /// A copy sharing the pixels, without the metadata fields for which `drop` returns true.
    public func removingFields(where drop: (String) -> Bool) throws(VipsError) -> VipsImage {
        var out: UnsafeMutablePointer<CVips.VipsImage>?
        guard imgbake_vips_copy(pointer, &out) == 0, let out else { throw VipsError.drain("cannot copy image") }
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

    /// The decoded pixels, row by row, `bands` bytes per pixel (8-bit images).
    public func pixels() throws(VipsError) -> [UInt8] {
        var size = 0
        guard let memory = vips_image_write_to_memory(pointer, &size) else { throw VipsError.drain("cannot decode image") }
        defer { g_free(memory) }
        return Array(UnsafeRawBufferPointer(start: memory, count: size))
    }

    // MARK: Encoding

    /// Encodes the image; every saver is asked to strip metadata, but callers that must guarantee it
    /// (vips 8.14's WebP saver ignores `strip`) remove the fields first with `removingFields`.
    public func encoded(as format: EncodeFormat) throws(VipsError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status: Int32 = switch format {
        case .webp(let quality, let effort): imgbake_vips_webpsave(pointer, Int32(quality), Int32(effort), &buffer, &length)
        case .jpeg(let quality): imgbake_vips_jpegsave(pointer, Int32(quality), &buffer, &length)
        case .png(let compression, let palette, let quality):
            imgbake_vips_pngsave(pointer, Int32(compression), palette ? 1 : 0, Int32(quality), &buffer, &length)
        case .gif: imgbake_vips_gifsave(pointer, &buffer, &length)
        case .avif(let quality, let effort): imgbake_vips_avifsave(pointer, Int32(quality), Int32(effort), &buffer, &length)
        }
        guard status == 0, let buffer else { throw VipsError.drain("cannot encode \(format.name)") }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}

/// An output encoding and its settings.
public enum EncodeFormat: Sendable, Hashable {
    case webp(quality: Int, effort: Int)
    case jpeg(quality: Int)
    case png(compression: Int, palette: Bool, quality: Int)
    case gif
    case avif(quality: Int, effort: Int)

    public var name: String {
        switch self {
        case .webp: "WebP"
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .gif: "GIF"
        case .avif: "AVIF"
        }
    }
}
