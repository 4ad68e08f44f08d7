import CShims.Vips
import CVips

/// The luma of an image as 8-bit samples, row by row: what SSIM is measured on. Colour differences the
/// encoders make (4:2:0 chroma) are not in it; the eye is less sensitive to them, and the services that
/// choose quality per image weigh luma first too.
public struct LumaPlane: Sendable, Equatable {
    public let samples: [UInt8]
    public let width: Int
    public let height: Int

    /// `samples` row by row, `width` to a row.
    public init(samples: [UInt8], width: Int, height: Int) {
        precondition(samples.count == width * height, "a \(width)x\(height) plane needs \(width * height) samples")
        (self.samples, self.width, self.height) = (samples, width, height)
    }

    /// Mean SSIM of the two planes (1 when they are equal), as libwebp defines it (7 × 7 windows, what
    /// `cwebp -print_ssim` reports, to the bit); nil when the sizes differ. Deterministic: integer
    /// window sums, added up row by row.
    public func ssim(_ other: LumaPlane) -> Double? {
        guard width == other.width, height == other.height, width > 0, height > 0 else { return nil }
        var result = 0.0
        let status = samples.withUnsafeBufferPointer { a in
            other.samples.withUnsafeBufferPointer { b in
                imgbake_plane_ssim(a.baseAddress, b.baseAddress, Int32(width), Int32(height), &result)
            }
        }
        return status == 0 ? result : nil
    }
}

extension LumaPlane {
    /// The luma of an encoded image (a quality search's try), decoded.
    public init(decoding buffer: ImageBuffer) throws(VipsError) {
        try VipsRuntime.start()
        var plane: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0
        guard imgbake_vips_decode_luma_plane(buffer.baseAddress, buffer.count, &plane, &width, &height) == 0, let plane
        else { throw VipsError.drain("cannot take the luma of an image", source: buffer) }
        defer { g_free(plane) }
        self.init(samples: Array(UnsafeBufferPointer(start: plane, count: Int(width) * Int(height))), width: Int(width), height: Int(height))
    }
}

extension VipsImage {
    /// The luma plane (Rec. 601 weights, rounded; alpha flattened onto white, as a page without a
    /// background shows the image). For 8-bit sRGB or grey images.
    public func luma() throws(VipsError) -> LumaPlane {
        var plane: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0
        guard imgbake_vips_luma_plane(pointer, &plane, &width, &height) == 0, let plane
        else { throw VipsError.drain("cannot take the luma of an image") }
        defer { g_free(plane) }
        return LumaPlane(samples: Array(UnsafeBufferPointer(start: plane, count: Int(width) * Int(height))), width: Int(width), height: Int(height))
    }

    /// A sample of the picture to try an encoder on: `across` × `down` square tiles of `tile` pixels, one
    /// from the middle of each cell of an even grid, joined into one image in memory. The same image
    /// always gives the same sample.
    public func tileSample(tile: Int, across: Int, down: Int) throws(VipsError) -> VipsImage {
        var out: OpaquePointer?
        guard imgbake_vips_tile_sample(pointer, Int32(tile), Int32(across), Int32(down), &out) == 0, let out
        else { throw VipsError.drain("cannot sample tiles of an image") }
        return try VipsImage(taking: out, source: nil).materialized()
    }
}

/// An image's 8-bit samples, interleaved (1 grey, 2 grey and alpha, 3 sRGB, 4 sRGB and alpha): what an
/// encoder other than libvips' takes (JPEG XL), and what its decoder gives back.
public struct PixelSamples: Sendable {
    public var bytes: [UInt8]
    public var width: Int
    public var height: Int
    public var bands: Int

    public init(bytes: [UInt8], width: Int, height: Int, bands: Int) {
        precondition(bytes.count == width * height * bands, "\(width)x\(height)x\(bands) samples need \(width * height * bands) bytes")
        (self.bytes, self.width, self.height, self.bands) = (bytes, width, height, bands)
    }
}

extension VipsImage {
    /// Its samples (an 8-bit image of 1 to 4 bands).
    public func samples() throws(VipsError) -> PixelSamples {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0, bands: Int32 = 0
        guard imgbake_vips_pixels(pointer, &pixels, &width, &height, &bands) == 0, let pixels
        else { throw VipsError.drain("cannot read the pixels of an image") }
        defer { g_free(pixels) }
        let count = Int(width) * Int(height) * Int(bands)
        return PixelSamples(bytes: Array(UnsafeBufferPointer(start: pixels, count: count)), width: Int(width), height: Int(height), bands: Int(bands))
    }
}

extension LumaPlane {
    /// The luma of samples (an encoder's decoded output), as `VipsImage.luma` takes it.
    public init(_ samples: PixelSamples) {
        let count = samples.width * samples.height
        let plane = samples.bytes.withUnsafeBufferPointer { imgbake_luma($0.baseAddress, count, Int32(samples.bands)) }
        defer { g_free(plane) }
        self.init(samples: Array(UnsafeBufferPointer(start: plane, count: count)), width: samples.width, height: samples.height)
    }
}

/// SSIMULACRA2 against one reference image (Sources/CShims/ssimulacra2.c): the reference's scales are
/// computed once, each try scored against them. 100 is identical; about 70 is where artefacts begin to
/// show at a normal viewing distance, 90 where they are gone. Transparency is flattened onto white, as
/// the luma is. The one owner of its C handle.
public final class PerceptualReference: @unchecked Sendable {
    private let handle: OpaquePointer
    public let width: Int
    public let height: Int

    public init(_ samples: PixelSamples) throws(VipsError) {
        guard let handle = samples.bytes.withUnsafeBufferPointer({
            imgbake_ss2_reference_new($0.baseAddress, Int32(samples.width), Int32(samples.height), Int32(samples.bands))
        }) else { throw VipsError(message: "cannot take the scales of a \(samples.width)x\(samples.height) image") }
        (self.handle, width, height) = (handle, samples.width, samples.height)
    }

    deinit { imgbake_ss2_reference_free(handle) }

    /// The score of `samples` (the reference's size); nil when the size differs.
    public func score(_ samples: PixelSamples) -> Double? {
        guard samples.width == width, samples.height == height else { return nil }
        var score = 0.0
        let status = samples.bytes.withUnsafeBufferPointer {
            imgbake_ss2_score(handle, $0.baseAddress, Int32(width), Int32(height), Int32(samples.bands), &score)
        }
        return status == 0 ? score : nil
    }
}

extension PixelSamples {
    /// The samples of an encoded image (a quality search's try), decoded by libvips.
    public init(decoding buffer: ImageBuffer) throws(VipsError) {
        self = try VipsImage.open(buffer).samples()
    }
}
