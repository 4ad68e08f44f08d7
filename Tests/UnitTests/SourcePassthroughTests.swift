import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

/// At the source's own width and format an output is never larger than the source: the source's own
/// bytes (metadata removed) are used when re-encoding does not make them smaller.
@Suite struct SourcePassthroughTests {
    /// A 64×64 palette PNG of four colours in a noisy pattern, with a tEXt chunk: as a palette image it
    /// is far smaller than any truecolour re-encode of the same pixels.
    static func palettePNG(in folder: TemporaryFolder) throws -> [UInt8] {
        let path = folder.path + "/palette.png"
        let script = """
        import struct, zlib
        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
        w = h = 64
        seed, rows = 12345, b""
        for y in range(h):
            row = b"\\0"
            for x in range(w):
                seed = (seed * 1103515245 + 12345) & 0x7fffffff
                row += bytes([(seed >> 16) & 3])
            rows += row
        png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))
               + chunk(b"tEXt", b"Comment\\0made by a test") + chunk(b"PLTE", bytes([0, 0, 0, 255, 0, 0, 0, 128, 255, 255, 255, 255]))
               + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
        open("\(path)", "wb").write(png)
        """
        _ = try ChildProcess("/usr/bin/env", ["python3", "-c", script]).wait()
        return [UInt8](FileManager.default.contents(atPath: path)!)
    }

    static func fields(_ bytes: [UInt8]) throws -> [String] {
        try VipsImage.open(ImageBuffer(bytes)).fieldNames
    }

    @Test func aPalettePNGAtItsOwnWidthStaysItsOwnBytesWithoutMetadata() async throws {
        let folder = TemporaryFolder()
        let source = try Self.palettePNG(in: folder)
        var settings = ImageSettings()
        settings.widths = [32, 64, 128]
        let variants = try await ColourTests.transform(bytes: source, settings: settings)
        let png64 = try #require(variants.first { $0.spec.format == .png && $0.width == 64 })
        #expect(png64.bytes.count < source.count, "the source minus its tEXt chunk: \(png64.bytes.count) of \(source.count) bytes")
        #expect(!String(decoding: png64.bytes, as: UTF8.self).contains("tEXt"))
        let decodedSource = try VipsImage.open(ImageBuffer(source)).materialized()
        #expect(try OrientationTests.difference(try VipsImage.open(ImageBuffer(png64.bytes)).materialized(), decodedSource) == 0)
        // A narrower width is never larger than the source either: re-encoded, or the source stands for it.
        let png32 = try #require(variants.first { $0.spec.format == .png && $0.spec.width == 32 })
        #expect(png32.bytes.count <= png64.bytes.count && [32, 64].contains(png32.width))
    }

    @Test func noOutputIsLargerThanItsSourceAtTheSameWidthAndFormat() async throws {
        let folder = TemporaryFolder()
        let sources: [(String, [UInt8])] = [("palette.png", try Self.palettePNG(in: folder)), ("coffee.png", Paths.image("coffee.png")),
                                             ("astronaut.jpg", Paths.image("astronaut.jpg")), ("camera.jpg", Paths.fixture("metadata/camera.jpg")),
                                             ("hubble-wide.jpg", Paths.image("hubble-wide.jpg"))]
        for (name, source) in sources {
            let format = try #require(ImageFormat.sniff(source))
            let variants = try await ColourTests.transform(bytes: source, settings: ImageSettings())
            // At every width: a one-for-one replacement (a CSS hero, an icon, a feed's image) is never
            // larger than the file it replaces.
            for variant in variants where variant.spec.format == format {
                #expect(variant.bytes.count <= source.count, "\(name) \(variant.spec.width)w: \(variant.bytes.count) > \(source.count)")
            }
        }
    }

    /// An sRGB profile changes no colour when dropped; any other does, and keeps the source from
    /// standing for a variant.
    @Test func onlyAnSRGBProfileMayBeDropped() async throws {
        let profile = { (fixture: [UInt8]) in try VipsImage.open(ImageBuffer(fixture)).blob(field: "icc-profile-data") }
        #expect(try profile(Paths.image("hubble-wide.jpg")).map(ICCProfile.isSRGB) == true)
        #expect(try profile(Paths.fixture("colour/prophoto.jpg")).map(ICCProfile.isSRGB) == false)
        #expect(try profile(Paths.fixture("colour/p3.png")).map(ICCProfile.isSRGB) == false)
        #expect(ICCProfile.isSRGB(Array(repeating: 0, count: 200)) == false)
        // A Display P3 photo re-encoded to sRGB is never replaced by its own bytes, whatever their size.
        let source = Paths.fixture("colour/p3.png")
        let variants = try await ColourTests.transform(bytes: source, settings: ImageSettings())
        for variant in variants {
            #expect(try VipsImage.open(ImageBuffer(variant.bytes)).blob(field: "icc-profile-data") == nil)
            #expect(variant.bytes != source.withUnsafeBytes { SourcePassthrough.stripped($0, format: .png, dropSRGBProfile: true) })
        }
    }

    @Test func jpegMetadataGoesAndTheScansStayAsTheyAre() throws {
        let source = Paths.fixture("metadata/camera.jpg")
        let stripped = try #require(source.withUnsafeBytes { SourcePassthrough.jpeg($0) })
        #expect(stripped.count < source.count)
        let image = try VipsImage.open(ImageBuffer(stripped))
        #expect(image.blob(field: "exif-data") == nil && image.blob(field: "xmp-data") == nil && image.blob(field: "icc-profile-data") == nil)
        #expect(try OrientationTests.difference(try image.materialized(), try VipsImage.open(ImageBuffer(source)).materialized()) == 0)
        // From the first scan on, the file is the source's tail, byte for byte.
        let scan = try #require(stripped.indices.first { stripped[$0] == 0xFF && stripped[$0 + 1] == 0xDA })
        let tail = stripped.count - scan
        #expect(stripped.suffix(tail).elementsEqual(source.suffix(tail)))
    }

    @Test func sourcesThatNeedAPixelChangeAreNeverPassedThrough() throws {
        // 16-bit PNG (outputs are 8-bit); ICC-profiled PNG (outputs are converted to sRGB).
        #expect(Paths.fixture("colour/rgb16.png").withUnsafeBytes { SourcePassthrough.png($0) } == nil)
        #expect(Paths.fixture("colour/p3.png").withUnsafeBytes { SourcePassthrough.png($0) } == nil)
        #expect([UInt8]("not a png".utf8).withUnsafeBytes { SourcePassthrough.png($0) } == nil)
        #expect([UInt8]([0xFF, 0xD8, 0xFF, 0xE1, 0x00]).withUnsafeBytes { SourcePassthrough.jpeg($0) } == nil)
    }
}
