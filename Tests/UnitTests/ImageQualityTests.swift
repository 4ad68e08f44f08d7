import Exif
import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

/// Decoded-pixel and metadata checks of what the transformer writes.
@Suite struct ColourTests {
    static func reference(_ name: String = "reference.png") throws -> VipsImage {
        try VipsImage.open(ImageBuffer(Paths.fixture("colour/" + name))).materialized()
    }

    /// What a colour-managed viewer shows: the reference, except for CMYK, which cannot hold all of it.
    static func expected(for fixture: String) throws -> VipsImage {
        switch fixture {
        case "colour/cmyk.jpg": try reference("cmyk-expected.png")
        case "colour/cmyk-no-profile.jpg": try reference("cmyk-no-profile-expected.png")
        default: try reference()
        }
    }

    static func transform(_ fixture: String, settings: ImageSettings = ImageSettings()) async throws -> [EncodedVariant] {
        try await transform(bytes: Paths.fixture(fixture), settings: settings)
    }

    static func transform(bytes: [UInt8], settings: ImageSettings = ImageSettings()) async throws -> [EncodedVariant] {
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        let plan = VariantPlan(settings: settings)
        return try await transformer.variants(of: ImageBuffer(bytes), format: ImageFormat.sniff(bytes)!) { plan.specs(for: $0) }.1
    }

    @Test(arguments: ["colour/prophoto.jpg", "colour/p3.png", "colour/cmyk.jpg", "colour/cmyk-no-profile.jpg", "colour/rgb16.png"])
    func everySourceComesOutAs8BitSRGBLookingLikeTheReference(fixture: String) async throws {
        let variants = try await Self.transform(fixture)
        // AVIF, WebP and the source's format; a PNG's fallback is made as a JPEG too (the smaller is kept).
        #expect(Set(variants.map(\.spec.format)).count == (fixture.hasSuffix(".png") ? 4 : 3))
        for variant in variants {
            let image = try VipsImage.open(ImageBuffer(variant.bytes)).materialized()
            #expect(image.bitsPerSample == 8 && image.interpretation == .sRGB, "\(fixture) → \(variant.spec.format)")
            #expect(!image.hasColourProfile, "the output is plain sRGB, without a profile")
            #expect(try OrientationTests.difference(image, try Self.expected(for: fixture)) < 5, "\(fixture) → \(variant.spec.format)")
        }
    }

    @Test func ignoringTheProfileWouldBeVisiblyWrong() throws {
        // The same comparison tells a wide-gamut image read as if it were sRGB apart.
        let naive = try VipsImage.open(ImageBuffer(Paths.fixture("colour/prophoto.jpg"))).materialized()
        #expect(try OrientationTests.difference(naive, try Self.reference()) > 15)
    }

    @Test func pureGreysStayGreyWithoutAProfile() async throws {
        // An image without a profile is not colour-managed (LittleCMS tinted greys by up to 3 levels).
        // At a fixed quality: the colours are what this is about, and a searched one may be the floor.
        var settings = ImageSettings()
        settings.quality.jpeg = 80
        let variants = try await Self.transform("../../Examples/images/astronaut.jpg", settings: settings)
        let grey = try VipsImage.open(ImageBuffer(Paths.image("astronaut.jpg"))).materialized()
        let jpeg = try #require(variants.first { $0.spec.format == .jpeg && $0.width == 512 })
        #expect(try OrientationTests.difference(try VipsImage.open(ImageBuffer(jpeg.bytes)).materialized(), grey) < 2)
    }
}

@Suite struct MetadataTests {
    static func exif(_ bytes: [UInt8]) throws -> ExifSummary? {
        try VipsImage.open(ImageBuffer(bytes)).blob(field: "exif-data").flatMap { blob in blob.withUnsafeBytes { ExifReader.read($0) } }
    }

    @Test func theFixtureCarriesEverything() throws {
        let summary = try #require(Paths.fixture("metadata/camera.jpg").withUnsafeBytes { ExifReader.read($0) })
        #expect(summary.hasGPS && summary.hasSerialNumber && summary.hasMakerNote)
        #expect(summary.copyright == "(c) 2026 Jane Doe" && summary.artist == "Jane Doe" && summary.captureDate == "2026:05:04 10:20:30")
    }

    @Test func outputsCarryNoMetadataByDefault() async throws {
        var settings = ImageSettings()
        settings.formats = [.avif, .webp, .original]
        let variants = try await ColourTests.transform("metadata/camera.jpg", settings: settings)
        #expect(variants.count == 3)
        for variant in variants {
            let image = try VipsImage.open(ImageBuffer(variant.bytes))
            #expect(image.blob(field: "exif-data") == nil, "\(variant.spec.format) has no EXIF")
            #expect(image.blob(field: "xmp-data") == nil && image.blob(field: "icc-profile-data") == nil)
        }
    }

    @Test func copyrightAndArtistAreKeptWhenAskedAndGPSSerialsAndMakerNotesNever() async throws {
        var settings = ImageSettings()
        settings.keepMetadata = ["copyright", "artist"]
        settings.formats = [.avif, .webp, .original]
        let variants = try await ColourTests.transform("metadata/camera.jpg", settings: settings)
        #expect(Set(variants.map(\.spec.format)) == [.avif, .webp, .jpeg])
        for variant in variants {
            let summary = try #require(try Self.exif(variant.bytes), "\(variant.spec.format) has EXIF")
            #expect(summary.copyright == "(c) 2026 Jane Doe" && summary.artist == "Jane Doe", "\(variant.spec.format)")
            #expect(!summary.hasGPS && !summary.hasSerialNumber && !summary.hasMakerNote, "\(variant.spec.format)")
            #expect(summary.orientation == nil || summary.orientation == 1)
        }
    }

    @Test func creditsAreReadWithLibexifForTemplates() async throws {
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        let inspection = try await transformer.inspect(ImageBuffer(Paths.fixture("metadata/camera.jpg")), format: .jpeg)
        #expect(inspection.credits == Credits(copyright: "(c) 2026 Jane Doe", artist: "Jane Doe", captured: "2026:05:04 10:20:30"))
    }
}

@Suite struct PlaceholderTests {
    static func pixels(_ fixture: String) throws -> RGBPixels {
        try RGBPixels(try VipsImage.open(ImageBuffer(Paths.fixture(fixture))).materialized())
    }

    @Test func blurHashMatchesTheReferenceImplementation() throws {
        // Values from the Python reference implementation (PyPI blurhash 1.1.4) on the same pixels.
        #expect(BlurHash.encode(try Self.pixels("orientation/upright.png"), x: 4, y: 3) == "LSKTVl~B4:xZ0LM{f7bFRjNG%2xt")
        #expect(BlurHash.encode(try Self.pixels("colour/two-colours.png"), x: 4, y: 3) == "L=GR_V0s=:R:j[a#j?fQfQfQfQfQ")
    }

    @Test func theDominantColourIsTheMostCommonOne() throws {
        // 70 % of the image is rgb(30, 90, 200).
        #expect(Placeholders.dominantColour(try Self.pixels("colour/two-colours.png")) == "#1e5ac8")
    }

    @Test func theLQIPIsATinyBlurredWebP() throws {
        let image = try VipsImage.open(ImageBuffer(Paths.fixture("colour/reference.png"))).materialized()
        let uri = try #require(try Placeholders.make(.lqip, from: image))
        #expect(uri.hasPrefix("data:image/webp;base64,") && uri.utf8.count < 600)
        let bytes = [UInt8](Data(base64Encoded: String(uri.dropFirst("data:image/webp;base64,".count)))!)
        let decoded = try VipsImage.open(ImageBuffer(bytes))
        #expect(decoded.width == 16 && ImageFormat.sniff(bytes) == .webp)
        #expect(decoded.blob(field: "exif-data") == nil)
    }
}
