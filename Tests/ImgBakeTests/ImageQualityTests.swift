import Exif
import Foundation
import Testing
import Vips
@testable import ImgBake

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
        let bytes = Paths.fixture(fixture)
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        let plan = VariantPlan(settings: settings)
        return try await transformer.variants(of: ImageBuffer(bytes), format: ImageFormat.sniff(bytes)!) { plan.specs(for: $0) }.1
    }

    @Test(arguments: ["colour/prophoto.jpg", "colour/p3.png", "colour/cmyk.jpg", "colour/cmyk-no-profile.jpg", "colour/rgb16.png"])
    func everySourceComesOutAs8BitSRGBLookingLikeTheReference(fixture: String) async throws {
        let variants = try await Self.transform(fixture)
        #expect(Set(variants.map(\.spec.format)).count == 2)
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
        let variants = try await Self.transform("../../../Examples/images/astronaut.jpg")
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

@Suite struct LimitTests {
    /// A valid 1-bit PNG declaring 30000×30000 pixels: about 110 KB of zlib-compressed zeros.
    static func bomb(in folder: TemporaryFolder) throws -> String {
        let path = folder.path + "/bomb.png"
        let script = """
        import struct, zlib
        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
        n = 30000
        row = b"\\0" * (1 + (n + 7) // 8)
        c = zlib.compressobj(9)
        idat = b"".join(c.compress(row) for _ in range(n)) + c.flush()
        png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", n, n, 1, 0, 0, 0, 0)) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
        open("\(path)", "wb").write(png)
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        try process.run()
        process.waitUntilExit()
        return path
    }

    @Test func a30000By30000PNGOfUnder1MBIsRefusedFromItsHeader() async throws {
        let folder = TemporaryFolder()
        let path = try Self.bomb(in: folder)
        let bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        #expect(bytes.count < 1_000_000)
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        await #expect(throws: TransformError.self) { _ = try await transformer.inspect(ImageBuffer(bytes), format: .png) }
        do { _ = try await transformer.inspect(ImageBuffer(bytes), format: .png) } catch let error as TransformError {
            #expect(error.description == "image is 30000×30000 = 900 MP, over the 100 MP limit (max_pixels)")
        }

        // Through a build: refused, reported, remembered, and nothing was decoded.
        let origin = try Origin(root: folder.path)
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/bomb.png"))\">")
        let result = try await site.build(origin: origin)
        #expect(result.diagnostics.map(\.message) == ["http://images.test/img/bomb.png: image is 30000×30000 = 900 MP, over the 100 MP limit (max_pixels)"])
        #expect(result.summary.variantsEncoded == 0)
    }

    @Test func animationsOverTheFrameBudgetAreRefused() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/deep-field.gif"))\">")
        var config = site.configuration(origin: origin)
        config.images.maxFrames = 3
        let result = try await site.build(config)
        #expect(result.diagnostics.map(\.message) == ["http://images.test/img/deep-field.gif: animation has 4 frames, over the 3-frame limit (max_frames)"])
    }

    @Test func onlyTheAllowedFormatsAreDecoded() async throws {
        // A BMP libvips could read (through ImageMagick) is refused at the door.
        let folder = TemporaryFolder()
        var bmp: [UInt8] = Array("BM".utf8) + [70, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 24, 0]
        bmp += [UInt8](repeating: 0, count: 24) + [UInt8](repeating: 0x80, count: 16)
        folder.write("tiny.bmp", bmp)
        let origin = try Origin(root: folder.path)
        let site = TestSite()
        site.page("a.html", "<img src=\"\(origin.url("img/tiny.bmp"))\">")
        let result = try await site.build(origin: origin)
        #expect(result.diagnostics.first?.message.hasPrefix("http://images.test/img/tiny.bmp: not an image (Content-Type application/octet-stream") == true)
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

    @Test func base64() {
        #expect(Base64.encode(Array("hello!?".utf8)) == Data("hello!?".utf8).base64EncodedString())
        #expect(Base64.encode([]) == "" && Base64.encode([255]) == "/w==" && Base64.encode([1, 2]) == "AQI=")
    }
}

@Suite struct VariantSizeTests {
    @Test func noVariantIsLargerThanItsFallbackAtTheSameWidth() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", (Paths.exampleImages + ["diagram.png", "two-colours.png", "camera.jpg", "p3.png", "cmyk.jpg"])
            .map { "<img src=\"\(origin.url("img/" + $0))\">" }.joined())
        var config = site.configuration(origin: origin)
        config.images.formats = [.avif, .webp, .original]
        _ = try await site.build(config)
        var sizes: [String: [String: Int]] = [:] // "stem-width" → format → bytes
        for file in site.folder.files(under: "out/_img") {
            let match = try #require(file.firstMatch(of: /^(.+)-[0-9a-f]{10}-(\d+)\.(\w+)$/))
            sizes["\(match.output.1)-\(match.output.2)", default: [:]][String(match.output.3)] = site.folder.read("out/_img/" + file)!.count
        }
        #expect(sizes.count > 10)
        for (name, formats) in sizes {
            let fallback = try #require(formats.first { ["jpg", "png", "gif"].contains($0.key) }?.value, "\(name) has a fallback")
            for (format, bytes) in formats where ["webp", "avif"].contains(format) {
                #expect(bytes <= fallback, "\(name).\(format) is \(bytes) bytes, the fallback \(fallback)")
            }
        }
        // The diagram's WebP at 960 px was larger than its PNG: dropped (AVIF was smaller). At 480 px WebP wins.
        #expect(Set(sizes["diagram-960"]?.keys.map { $0 } ?? []) == ["png", "avif"])
        #expect(Set(sizes["diagram-480"]?.keys.map { $0 } ?? []) == ["png", "webp", "avif"])
    }

    @Test func theDropRuleComparesAtTheSameWidthOnly() {
        func encoded(_ format: ImageFormat, _ width: Int, _ bytes: Int) -> EncodedVariant {
            EncodedVariant(spec: VariantSpec(width: width, format: format, quality: 80, effort: 4, animated: false, keepMetadata: []),
                           bytes: [UInt8](repeating: 0, count: bytes), width: width, height: 10)
        }
        let kept = ImageManager.keepingOnlyWorthwhile(
            [encoded(.webp, 480, 900), encoded(.webp, 960, 1100), encoded(.jpeg, 480, 1000), encoded(.avif, 960, 500)],
            besides: [VariantRecord(key: VariantKey(hex: "x"), originalBlob: BlobID(of: [1]), spec: "", blob: BlobID(of: [2]),
                                    format: .jpeg, width: 960, height: 10, bytes: 1000)],
            fallback: .jpeg)
        #expect(kept.map { "\($0.0.spec.format.rawValue)@\($0.0.width):\($0.dropped)" } == [
            "webp@480:false", "webp@960:true", "jpeg@480:false", "avif@960:false",
        ])
    }
}
