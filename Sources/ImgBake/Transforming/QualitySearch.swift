import Foundation
import Vips

/// Chooses one variant's encoder quality: the lowest between the floor and the ceiling whose output
/// reaches the target SSIM against the variant's own pixels (the ceiling when none does). It looks at
/// those pixels only — never at other widths or formats of the image, or at what was made before — so
/// the same source and spec always give the same quality and the same bytes.
///
/// Each try encodes and decodes a sample of the picture, not all of it: the whole variant up to
/// `wholeLimit` pixels, else `tiles` tiles of `tile` pixels from an even grid over it (two thirds of a
/// 400 px variant, a sixth of an 800 px one, a twenty-fourth of a 1,600 px one): a larger sample costs
/// more CPU for the same qualities (what the search costs beside fixed qualities: `make bench`, and
/// docs/MEASUREMENTS.md). `QualitySearchTests` checks that the whole picture at the quality found is
/// within 0.01 of the target.
struct QualitySearch {
    let spec: VariantSpec
    let auto: AutoQuality

    static let wholeLimit = 65_536
    static let tile = 64
    static let tiles = 16
    /// Tries at most: the model's guesses give way to halving when only that would still finish, so any
    /// floor and ceiling (up to 4,095 apart) end at the lowest quality that reaches the target; the
    /// model usually lands in 1 (the floor) to 3.
    static let maxTries = 12
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

    /// One width's sample and its luma, made once and tried by every format searched at that width;
    /// its SSIMULACRA2 scales too, the first time a format searched with that target asks.
    final class Sample {
        let image: VipsImage
        let reference: LumaPlane
        private var perceptual: PerceptualReference?

        init(of pixels: VipsImage) throws(VipsError) {
            image = try QualitySearch.sample(of: pixels)
            reference = try image.luma()
        }

        func perceptualReference() throws(VipsError) -> PerceptualReference {
            if let perceptual { return perceptual }
            let made = try PerceptualReference(try image.samples())
            perceptual = made
            return made
        }
    }

    /// What a search settles on: the quality, and the SSIM its try measured there.
    struct Found: Equatable {
        let quality: Int
        let score: SSIMScore
    }

    /// The quality for `image` (a variant's pixels, upright, 8-bit sRGB).
    func quality(for image: VipsImage) throws(VipsError) -> Int {
        try find(on: Sample(of: image)).quality
    }

    /// The quality for the pixels `sample` was taken from, and its score.
    func find(on sample: Sample) throws(VipsError) -> Found {
        var measured: [Int: Double] = [:]
        let quality = try Self.lowest(floor: auto.floor, ceiling: auto.ceiling, target: auto.target) { q throws(VipsError) in
            let scores = try measure(sample, quality: q)
            measured[q] = scores.ssim
            return Self.combined(scores, auto)
        }
        // The ceiling is the answer without a try of its own when nothing below it reached the target.
        let ssim: Double
        if let tried = measured[quality] { ssim = tried } else { ssim = try measure(sample, quality: quality).ssim }
        return Found(quality: quality, score: SSIMScore(measured: ssim))
    }

    /// Both targets as one SSIM for the search: the SSIM, or lower where the SSIMULACRA2 falls further
    /// short of its own target (on the same scale of distances, ln(1 − score)), so it reaches the SSIM
    /// target exactly when both are reached, and the search's model still sees how far off a try is.
    static func combined(_ scores: (ssim: Double, perceptual: Double?), _ auto: AutoQuality) -> Double {
        guard let perceptual = scores.perceptual, let target = auto.ssimulacra2 else { return scores.ssim }
        let short = Search.distance(perceptual / 100) - Search.distance(Double(target) / 100)
        return 1 - exp(max(Search.distance(scores.ssim), Search.distance(auto.target) + short))
    }

    /// The lowest quality in `floor...ceiling` whose `ssim` reaches `target` (the ceiling when none
    /// does), for an `ssim` that grows with the quality, in at most `maxTries` calls of it.
    static func lowest(floor: Int, ceiling: Int, target: Double, ssim: (Int) throws(VipsError) -> Double) throws(VipsError) -> Int {
        var search = Search(floor: floor, ceiling: ceiling, target: target)
        // The first try is the floor, where most variants end (177 of the bench's 237 WebPs in 60–69,
        // median 60): they cost one try.
        var next = floor
        for tried in 0..<maxTries where search.low < search.high {
            let q = min(max(next, search.low), search.high - 1)
            search.record(q, ssim: try ssim(q))
            next = search.nextTry(triesLeft: maxTries - tried - 1)
        }
        return search.high
    }

    /// What the tries so far say: the answer is in `low...high` (`high` reaches the target, or is the
    /// ceiling); the nearest tries on each side, as distances ln(1 − SSIM), which are close to a straight
    /// line in the quality over the useful range.
    struct Search {
        var low: Int, high: Int
        let target: Double
        var below: (q: Int, d: Double)?, above: (q: Int, d: Double)?
        /// How wide the interval was before the last try.
        var before: Int

        init(floor: Int, ceiling: Int, target: Double) {
            (low, high, self.target, before) = (floor, ceiling, target, ceiling - floor)
        }

        static func distance(_ ssim: Double) -> Double { log(max(1e-6, 1 - ssim)) }

        mutating func record(_ q: Int, ssim: Double) {
            before = high - low
            if ssim >= target { high = q; above = (q, Self.distance(ssim)) } else { low = q + 1; below = (q, Self.distance(ssim)) }
        }

        /// Where the next try goes: the model's guess, or the middle when halving is what finishes in
        /// time (the tries left are as many as a bisection needs) or the guess between two tries took
        /// off less than half the interval. So the search always ends at the lowest quality that
        /// reaches the target, in 1 try (the floor) to 3 usually and `maxTries` at most.
        func nextTry(triesLeft: Int) -> Int {
            let width = high - low, goal = Self.distance(target)
            let halvings = Int(log2(Double(width + 1)).rounded(.up))
            if triesLeft <= halvings || (below != nil && above != nil && 2 * width > before && width > 2) { return (low + high) / 2 }
            switch (below, above) {
            case (let b?, let a?) where a.d < b.d:
                // Between the two: the secant, rounded up (the answer must reach the target).
                return b.q + Int((Double(a.q - b.q) * (b.d - goal) / (b.d - a.d)).rounded(.up))
            case (let b?, _): return b.q + max(1, Int(((b.d - goal) / QualitySearch.slope).rounded(.up)))
            case (_, let a?): return a.q - max(1, Int(((goal - a.d) / QualitySearch.slope).rounded(.down)))
            default: return (low + high) / 2
            }
        }
    }

    /// The encoding a try measures: the variant's own, but for JPEG the sequential coding of the same
    /// coefficients (the pixels are what is measured, and progressive coding with optimised tables
    /// changes only the bytes).
    func trialFormat(quality: Int) -> VariantEncoding {
        let encoding = spec.encoding(quality: quality)
        if case .vips(.jpeg(let q)) = encoding { return .vips(.jpegSequential(quality: q)) }
        return encoding
    }

    private func measure(_ sample: Sample, quality: Int) throws(VipsError) -> (ssim: Double, perceptual: Double?) {
        let bytes = try sample.image.encoded(as: trialFormat(quality: quality))
        let size = "\(sample.reference.width)x\(sample.reference.height)"
        guard auto.ssimulacra2 != nil else {
            guard let ssim = try LumaPlane(decoding: bytes, as: spec.format).ssim(sample.reference) else {
                throw VipsError(message: "cannot measure SSIM of a \(size) sample")
            }
            return (ssim, nil)
        }
        let decoded = try PixelSamples(decoding: bytes, as: spec.format)
        guard let ssim = LumaPlane(decoded).ssim(sample.reference), let perceptual = try sample.perceptualReference().score(decoded) else {
            throw VipsError(message: "cannot measure SSIM and SSIMULACRA2 of a \(size) sample")
        }
        return (ssim, perceptual)
    }
}
