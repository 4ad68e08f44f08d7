import Foundation
import Vips

/// Chooses one variant's encoder quality: the lowest between the floor and the ceiling whose output
/// reaches the target SSIM against the variant's own pixels (the ceiling when none does). It looks at
/// those pixels only — never at other widths or formats of the image, or at what was made before — so
/// the same source and spec always give the same quality and the same bytes.
///
/// Each try encodes and decodes a sample of the picture, not all of it: the whole variant up to
/// `wholeLimit` pixels, else `tiles` tiles of `tile` pixels from an even grid over it (two thirds of a
/// 400 px variant, a sixth of an 800 px one, a twenty-fourth of a 1,600 px one). The bench's cold
/// build costs 1.12× the CPU of fixed qualities (48.0 s against 42.7 s; with twice the sample and the
/// first try halfway between floor and ceiling it was 1.24×, with the same bytes and SSIM within
/// 0.0005; docs/MEASUREMENTS.md). `QualitySearchTests` checks that the whole picture at the quality
/// found is within 0.01 of the target.
struct QualitySearch {
    let spec: VariantSpec
    let auto: AutoQuality

    static let wholeLimit = 65_536
    static let tile = 64
    static let tiles = 16
    /// Tries at most: a try the model places badly is followed by a halving, so 31 qualities end within
    /// this; the model usually lands in 1 (the floor) to 3.
    static let maxTries = 10
    /// Where the first try goes, as a fraction of the way from floor to ceiling: the floor, where most
    /// variants end (177 of the bench's 237 WebPs in 60–69, median 60), so that they cost one try.
    static let start = 0.0
    /// How fast ln(1 − SSIM) falls per quality step (libwebp, bench median), for the first step.
    static let slope = 0.03

    /// The sample the tries encode, with no metadata (it is not written anywhere).
    static func sample(of image: VipsImage) throws(VipsError) -> VipsImage {
        let frame = try image.firstFrame()
        let (w, h) = (frame.width, frame.height)
        guard w * h > wholeLimit, w >= tile, h >= tile else { return try frame.removingFields { _ in true }.materialized() }
        let across = max(1, min(w / tile, Int((Double(tiles * w) / Double(h)).squareRoot().rounded())))
        let down = max(1, min(h / tile, tiles / across))
        return try frame.tileSample(tile: tile, across: across, down: down).removingFields { _ in true }
    }

    /// The quality for `image` (a variant's pixels, upright, 8-bit sRGB).
    func quality(for image: VipsImage) throws(VipsError) -> Int {
        let sample = try Self.sample(of: image)
        let reference = try sample.luma()
        let target = auto.target
        // ln(1 − SSIM) is close to a straight line in the quality over the useful range.
        func distance(_ ssim: Double) -> Double { log(max(1e-6, 1 - ssim)) }
        var low = auto.floor, high = auto.ceiling
        var below: (q: Int, d: Double)?, above: (q: Int, d: Double)?
        var next = auto.floor + Int((Double(auto.ceiling - auto.floor) * Self.start).rounded())
        for _ in 0..<Self.maxTries where low < high {
            let q = min(max(next, low), high - 1)
            let width = high - low
            let ssim = try measure(sample, reference, quality: q)
            let d = distance(ssim)
            if ssim >= target { high = q; above = (q, d) } else { low = q + 1; below = (q, d) }
            let goal = distance(target)
            next = switch (below, above) {
            case _ where below != nil && above != nil && 2 * (high - low) > width && high - low > 2:
                // Between two tries, the model's guess took off less than half the interval: halve it
                // instead, so the search ends at the lowest quality that reaches the target.
                (low + high) / 2
            case (let b?, let a?) where a.d < b.d:
                // Between the two: the secant, rounded up (the answer must reach the target).
                b.q + Int((Double(a.q - b.q) * (b.d - goal) / (b.d - a.d)).rounded(.up))
            case (let b?, _): b.q + max(1, Int(((b.d - goal) / Self.slope).rounded(.up)))
            case (_, let a?): a.q - max(1, Int(((goal - a.d) / Self.slope).rounded(.down)))
            default: (low + high) / 2
            }
        }
        return high
    }

    private func measure(_ sample: VipsImage, _ reference: LumaPlane, quality: Int) throws(VipsError) -> Double {
        let bytes = try sample.encoded(as: spec.encodeFormat(quality: quality))
        let decoded = try VipsImage.open(ImageBuffer(bytes)).materialized()
        guard let ssim = try decoded.luma().ssim(reference) else {
            throw VipsError(message: "cannot measure SSIM (libwebp's WebPPlaneDistortion is missing)")
        }
        return ssim
    }
}
