// CJxl for its link directives: the stack's archive and the C++ runtime libjxl needs.
import CJxl
import CShims.Jxl

/// JPEG XL through libjxl (the stack's libvips has no JPEG XL saver): lossy encoding of 8-bit samples
/// at libjxl's quality scale, and decoding (for the quality search to measure what it made). Runs on
/// the calling thread, one image at a time, as libvips' encoders do on imgbake's transform threads.
public enum JpegXL {
    /// The libjxl this binary links, e.g. "0.11.2".
    public static let version = String(cString: imgbake_jxl_version())

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }

        /// From the message the shim wrote into `buffer` (NUL-terminated).
        init(_ buffer: [CChar]) {
            message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// `bands`: 1 grey, 2 grey and alpha, 3 sRGB, 4 sRGB and alpha, interleaved. `quality`: libjxl's
    /// 0–100 (its distance follows); `effort`: 1–9.
    public static func encode(_ samples: [UInt8], width: Int, height: Int, bands: Int, quality: Int, effort: Int) throws(Failure) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var error = [CChar](repeating: 0, count: 256)
        let status = samples.withUnsafeBufferPointer { pixels in
            imgbake_jxl_encode(pixels.baseAddress, Int32(width), Int32(height), Int32(bands), Float(quality), Int32(effort),
                               &out, &length, &error, error.count)
        }
        guard status == 0, let out else { throw Failure(error) }
        defer { imgbake_jxl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }

    /// The samples of a JPEG XL image, with its bands.
    public static func decode(_ bytes: [UInt8]) throws(Failure) -> (samples: [UInt8], width: Int, height: Int, bands: Int) {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0, bands: Int32 = 0
        var error = [CChar](repeating: 0, count: 256)
        let status = bytes.withUnsafeBufferPointer { input in
            imgbake_jxl_decode(input.baseAddress, input.count, &pixels, &width, &height, &bands, &error, error.count)
        }
        guard status == 0, let pixels else { throw Failure(error) }
        defer { imgbake_jxl_free(pixels) }
        return (Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * Int(bands))), Int(width), Int(height), Int(bands))
    }
}
