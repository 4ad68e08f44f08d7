/// The encoder quality of one format: a fixed number, or chosen for each variant (`"auto"`).
///
///     [images.quality]
///     webp = "auto"                              # the default: each variant's own quality
///     jpeg = 80                                  # one quality for every image
///     auto = { ssim = 0.97, webp = [40, 90] }    # what "auto" aims at, and its floor and ceiling
public enum QualityChoice: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// libvips' quality (1–100) for every image.
    case fixed(Int)
    /// The lowest quality between a floor and a ceiling whose output reaches a target SSIM.
    case auto(AutoQuality)

    public init(integerLiteral value: Int) { self = .fixed(value) }

    /// In the build fingerprint: a change of target, floor or ceiling builds the pages again.
    public var description: String {
        switch self {
        case .fixed(let quality): "\(quality)"
        case .auto(let auto): auto.canonical
        }
    }
}

/// What an automatic quality aims at. The target is the mean SSIM (on luma) of the encoded variant
/// against the very pixels it was encoded from, so resizing is not counted against the encoder; the
/// floor keeps an image whose SSIM drops slowly from going to mush, the ceiling keeps a noisy one from
/// costing the bytes of a near-lossless file.
public struct AutoQuality: Sendable, Hashable {
    /// In ten-thousandths (9700 is SSIM 0.97), so that keys and comparisons are exact.
    public var ssim: Int
    public var floor: Int
    public var ceiling: Int
    /// A second target, SSIMULACRA2 in whole points, that the same quality must reach too (nil: none;
    /// AVIF only, `images.quality.auto.ssimulacra2`). Luma SSIM does not see what AVIF loses at low
    /// qualities (colour, fine texture smoothed away); SSIMULACRA2 does. Off by default: on the bench
    /// it cost bytes at equal quality by either metric (docs/MEASUREMENTS.md, "Formats").
    public var ssimulacra2: Int?

    public init(ssim: Int, floor: Int, ceiling: Int, ssimulacra2: Int? = nil) {
        self.ssim = ssim
        self.floor = floor
        self.ceiling = ceiling
        self.ssimulacra2 = ssimulacra2
    }

    /// The target as a fraction.
    public var target: Double { Double(ssim) / 10_000 }

    /// `auto:ssim=0.9700:40-90` (and `:ss2=70` with a second target): part of the variant key.
    public var canonical: String {
        let fraction = String(ssim % 10_000)
        let perceptual = ssimulacra2.map { ":ss2=\($0)" } ?? ""
        return "auto:ssim=\(ssim / 10_000).\(String(repeating: "0", count: 4 - fraction.count))\(fraction):\(floor)-\(ceiling)\(perceptual)"
    }

    /// The default target (docs/MEASUREMENTS.md, "Quality per image").
    public static let defaultSSIM = 9650
    /// Floors and ceilings on each encoder's own scale (AVIF's 50 is about WebP's 80).
    public static func defaults(for format: ImageFormat) -> AutoQuality {
        switch format {
        // AVIF's floor is where SSIM stops seeing what it loses: below 50, on smooth gradients and
        // flat drawings, aom's smoothing keeps the luma SSIM at the target while SSIMULACRA2 falls 10
        // points under the WebP of the same variant (Benchmarks/formats.py, docs/MEASUREMENTS.md "Formats").
        case .avif: AutoQuality(ssim: defaultSSIM, floor: 50, ceiling: 75)
        // libjxl's quality scale (its distance follows): 60 is distance 4, 90 distance 1.
        case .jxl: AutoQuality(ssim: defaultSSIM, floor: 40, ceiling: 95)
        case .jpeg: AutoQuality(ssim: defaultSSIM, floor: 45, ceiling: 92)
        default: AutoQuality(ssim: defaultSSIM, floor: 60, ceiling: 90)
        }
    }
}
