@testable import ImgBake
import Testing

/// What each `<source>` of a `<picture>` offers, from the variants made: the smallest file per width a
/// browser taking that source can decode.
@Suite struct FileChoiceTests {
    /// A PNG with transparency, 1080 px: AVIF kept at 400 only (dropped at 800 and 1080 as larger than
    /// the WebP), WebP at 800 and 1080, the PNG fallback at both.
    static func transparentPNG() -> ResolvedImage {
        let blob = BlobID(of: [7])
        func file(_ format: ImageFormat, _ width: Int, _ bytes: Int, alone: Bool = false) -> StoredVariant {
            let spec = VariantSpec(width: width, format: format, quality: 60, effort: 0, animated: false, keepMetadata: [], alone: alone)
            return StoredVariant(spec: spec, key: spec.key(original: blob), blob: BlobID(of: Array("\(format)\(width)".utf8)),
                                 format: format, width: width, height: width * 16 / 9, bytes: bytes)
        }
        let variants = [file(.avif, 400, 25_243, alone: true), file(.webp, 800, 41_330), file(.webp, 1080, 64_238),
                        file(.png, 800, 1_383_083), file(.png, 1080, 2_216_779)]
        return ResolvedImage(key: OriginalKey("https://example.com/a.png"), url: .remote(RemoteURL.resolve("https://example.com/a.png")!),
                             source: SourceInfo(format: .png, width: 1080, height: 1920, pages: 1), originalBlob: blob,
                             originalBytes: 2_217_171, variants: variants, origin: .cached, encoded: 0, credits: Credits(), placeholder: nil)
    }

    @Test func aWidthWithoutTheSourcesFormatOffersTheSmallestFileItsBrowsersTake() {
        let image = Self.transparentPNG()
        let choice = FileChoice(variants: image.variants, image: image, mode: .auto, wraps: true)
        let avif = choice.sources.first { $0.format == .avif }?.files.map { "\($0.format.rawValue) \($0.width)" }
        // Not the 1.4 MB PNG at 800 px: an AVIF browser takes the 41 KB WebP.
        #expect(avif == ["avif 400", "webp 800", "webp 1080"])
        #expect(choice.candidates.map(\.format) == [.png, .png])
    }
}
