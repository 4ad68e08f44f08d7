@testable import ImgBake
import Testing

/// What each `<source>` of a `<picture>` offers, from the variants made: the smallest file per width a
/// browser taking that source can decode.
@Suite struct FileChoiceTests {
    /// A PNG with transparency, 1080 px: AVIF (made alone) at 400 and 800, larger than the WebP at 800;
    /// none at 1080 (dropped there as larger than the WebP); WebP at every width, the PNG fallback at 800 and 1080.
    static func transparentPNG(perceptualAVIF: Bool = false) -> ResolvedImage {
        let blob = BlobID(of: [7])
        func file(_ format: ImageFormat, _ width: Int, _ bytes: Int, alone: Bool = false) -> StoredVariant {
            var spec = VariantSpec(width: width, format: format, quality: 0, effort: 0, animated: false, keepMetadata: [], alone: alone)
            guard format != .png else {
                return StoredVariant(spec: spec, key: spec.key(original: blob), blob: BlobID(of: Array("\(format)\(width)".utf8)),
                                     format: format, width: width, height: width * 16 / 9, bytes: bytes)
            }
            spec.auto = AutoQuality.defaults(for: format)
            if format == .avif && perceptualAVIF { spec.auto?.ssimulacra2 = 70 }
            return StoredVariant(spec: spec, key: spec.key(original: blob), blob: BlobID(of: Array("\(format)\(width)".utf8)),
                                 format: format, width: width, height: width * 16 / 9, bytes: bytes,
                                 made: .quality(60, score: SSIMScore(tenThousandths: 9660)))
        }
        let variants = [file(.avif, 400, 25_243, alone: true), file(.avif, 800, 52_000, alone: true), file(.webp, 400, 30_000),
                        file(.webp, 800, 41_330), file(.webp, 1080, 64_238),
                        file(.png, 800, 1_383_083), file(.png, 1080, 2_216_779)]
        return ResolvedImage(key: OriginalKey("https://example.com/a.png"), url: .remote(RemoteURL.resolve("https://example.com/a.png")!),
                             source: SourceInfo(format: .png, width: 1080, height: 1920, pages: 1), originalBlob: blob,
                             originalBytes: 2_217_171, variants: variants, origin: .cached, encoded: 0, credits: Credits(), placeholder: nil)
    }

    @Test func aWidthWithoutTheSourcesFormatOffersTheSmallestFileItsBrowsersTake() {
        let image = Self.transparentPNG()
        let choice = FileChoice(variants: image.variants, image: image, mode: .auto, wraps: true)
        let avif = choice.sources.first { $0.format == .avif }?.files.map { "\($0.format.rawValue) \($0.width)" }
        // Not the 2.2 MB PNG at 1080 px: an AVIF browser takes the 64 KB WebP. At 800 px the AVIF made
        // alone gives way to the smaller WebP.
        #expect(avif == ["avif 400", "webp 800", "webp 1080"])
        #expect(choice.candidates.map(\.format) == [.png, .png])
    }

    /// An AVIF searched to SSIMULACRA2 as well does not give way to a smaller WebP searched to SSIM alone.
    @Test func anAVIFSearchedToSSIMULACRA2KeepsItsWidths() {
        let image = Self.transparentPNG(perceptualAVIF: true)
        let choice = FileChoice(variants: image.variants, image: image, mode: .auto, wraps: true)
        let avif = choice.sources.first { $0.format == .avif }?.files.map { "\($0.format.rawValue) \($0.width)" }
        #expect(avif == ["avif 400", "avif 800", "webp 1080"])
    }
}
