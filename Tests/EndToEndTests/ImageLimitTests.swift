import Exif
import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

/// The pixel and frame limits and the size of variants, through real builds.
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
        _ = try ChildProcess("/usr/bin/env", ["python3", "-c", script]).wait()
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

@Suite struct VariantSizeTests {
    @Test func noVariantIsLargerThanItsFallbackAtTheSameWidth() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("a.html", (Paths.exampleImages + ["diagram.png", "two-colours.png", "camera.jpg", "p3.png", "cmyk.jpg"])
            .map { "<img src=\"\(origin.url("img/" + $0))\">" }.joined())
        var config = site.configuration(origin: origin)
        config.images.formats = [.avif, .webp, .original]
        // A fallback at every width, each modern variant judged against it (with one fallback file, the
        // modern variants are offered at every width).
        config.images.fallback = .everyWidth
        _ = try await site.build(config)
        var sizes: [String: [String: Int]] = [:] // "stem-width" → format → bytes
        var fallbacks: [String: [(width: Int, bytes: Int)]] = [:] // stem → its fallback files
        for file in site.folder.files(under: "out/_img") {
            let match = try #require(file.firstMatch(of: /^(.+)-[0-9a-f]{10}-(\d+)\.(\w+)$/))
            let bytes = site.folder.read("out/_img/" + file)!.count
            sizes["\(match.output.1)-\(match.output.2)", default: [:]][String(match.output.3)] = bytes
            if ["jpg", "png", "gif"].contains(String(match.output.3)) {
                fallbacks[String(match.output.1), default: []].append((Int(match.output.2)!, bytes))
            }
        }
        #expect(sizes.count > 10)
        for (name, formats) in sizes {
            // The fallback that stands for this width: the one at this width, or the source itself, a
            // little wider, when it was smaller than the re-encode.
            let stem = String(name[..<name.lastIndex(of: "-")!]), width = Int(name[name.index(after: name.lastIndex(of: "-")!)...])!
            let fallback = try #require(fallbacks[stem]?.filter { $0.width >= width }.min { $0.width < $1.width }?.bytes, "\(name) has a fallback")
            for (format, bytes) in formats where ["webp", "avif"].contains(format) {
                #expect(bytes <= fallback, "\(name).\(format) is \(bytes) bytes, the fallback \(fallback)")
            }
        }
        // The diagram's WebP is larger than its PNG at 960 px: dropped there (AVIF is smaller). At 480 px,
        // and for a photo, WebP wins.
        #expect(Set(sizes["diagram-960"]?.keys.map { $0 } ?? []) == ["png", "avif"])
        #expect(Set(sizes["diagram-480"]?.keys.map { $0 } ?? []) == ["png", "webp", "avif"], "\(sizes)")
        #expect(Set(sizes["astronaut-480"]?.keys.map { $0 } ?? []) == ["jpg", "webp", "avif"], "\(sizes)")
    }

    @Test func theDropRuleComparesAtTheSameWidthOnly() {
        func encoded(_ format: ImageFormat, _ width: Int, _ bytes: Int) -> EncodedVariant {
            EncodedVariant(spec: VariantSpec(width: width, format: format, quality: 80, effort: 4, animated: false, keepMetadata: []),
                           bytes: [UInt8](repeating: 0, count: bytes), width: width, height: 10, made: .quality(80))
        }
        let kept = ImageManager.keepingOnlyWorthwhile(
            [encoded(.webp, 480, 900), encoded(.webp, 960, 1100), encoded(.jpeg, 480, 1000), encoded(.avif, 960, 500)],
            besides: [(960, VariantRecord(key: VariantKey(hex: "x"), originalBlob: BlobID(of: [1]), spec: "", blob: BlobID(of: [2]),
                                          format: .jpeg, width: 960, height: 10, bytes: 1000))],
            fallback: .jpeg)
        #expect(kept.map { "\($0.0.spec.format.rawValue)@\($0.0.width):\($0.dropped)" } == [
            "webp@480:false", "webp@960:true", "jpeg@480:false", "avif@960:false",
        ])
    }

    /// Formats compare at equal quality: every lossy file is searched to one target, so of two that
    /// reach it the smaller is offered; one that stopped at its ceiling below the target is only as
    /// good as its score. AVIF is judged against the WebP kept beside it too.
    @Test func theDropRuleComparesAtEqualQuality() throws {
        let auto = AutoQuality.defaults(for: .webp)
        func encoded(_ format: ImageFormat, _ width: Int, _ bytes: Int, q: Int, ssim: Int) throws -> EncodedVariant {
            var spec = VariantSpec(width: width, format: format, quality: 0, effort: 2, animated: false, keepMetadata: [])
            spec.auto = AutoQuality(ssim: auto.ssim, floor: 1, ceiling: 100)
            return EncodedVariant(spec: spec, bytes: [UInt8](repeating: 0, count: bytes), width: width, height: 10,
                                  made: .quality(q, score: try #require(SSIMScore(tenThousandths: ssim))))
        }
        let target = auto.ssim
        let kept = ImageManager.keepingOnlyWorthwhile([
            // 480: the JPEG stopped at its ceiling below the target; the WebP reached it: offered though larger.
            try encoded(.jpeg, 480, 800, q: 92, ssim: target - 80), try encoded(.webp, 480, 900, q: 90, ssim: target + 10),
            // 960: both reach it, the WebP is larger: dropped; the AVIF is smaller than the JPEG: offered.
            try encoded(.jpeg, 960, 1000, q: 60, ssim: target + 5), try encoded(.webp, 960, 1100, q: 70, ssim: target + 40),
            try encoded(.avif, 960, 900, q: 40, ssim: target + 1),
            // 1320: the AVIF is smaller than the JPEG but not than the WebP kept beside it: dropped.
            try encoded(.jpeg, 1320, 3000, q: 50, ssim: target), try encoded(.webp, 1320, 2000, q: 60, ssim: target + 2),
            try encoded(.avif, 1320, 2100, q: 30, ssim: target + 3),
            // 1920: neither WebP nor JPEG reached the target; the WebP scores higher: offered though larger.
            try encoded(.jpeg, 1920, 4000, q: 92, ssim: target - 300), try encoded(.webp, 1920, 4100, q: 90, ssim: target - 100),
        ], besides: [], fallback: .jpeg)
        #expect(kept.filter(\.dropped).map { "\($0.0.spec.format.rawValue)@\($0.0.width)" } == ["webp@960", "avif@1320"])
        // An AVIF searched to SSIMULACRA2 as well (images.quality.auto.ssimulacra2) is better than the
        // smaller WebP searched to SSIM alone: kept.
        var perceptual = try encoded(.avif, 1320, 2100, q: 40, ssim: target + 3)
        perceptual.spec.auto?.ssimulacra2 = 70
        let both = ImageManager.keepingOnlyWorthwhile([try encoded(.jpeg, 1320, 3000, q: 50, ssim: target),
                                                       try encoded(.webp, 1320, 2000, q: 60, ssim: target + 2), perceptual],
                                                      besides: [], fallback: .jpeg)
        #expect(both.filter(\.dropped).isEmpty)
    }
}
