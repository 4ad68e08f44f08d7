import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

@Suite struct ImageStageTests {
    @Test func formatsAreSniffedFromBytes() {
        #expect(ImageFormat.sniff(Paths.image("hubble.jpg")) == .jpeg)
        #expect(ImageFormat.sniff(Paths.image("coffee.png")) == .png)
        #expect(ImageFormat.sniff(Paths.image("deep-field.gif")) == .gif)
        #expect(ImageFormat.sniff(Paths.image("drawing.svg")) == .svg)
        #expect(ImageFormat.sniff(Array("<?xml version=\"1.0\"?>\n<!-- x -->\n<svg/>".utf8)) == .svg)
        #expect(ImageFormat.sniff(Array("<!doctype html><svg></svg>".utf8)) == nil)
        #expect(ImageFormat.sniff(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat.sniff(Array("\0\0\0\u{1C}ftypavif".utf8)) == .avif)
        #expect(ImageFormat.sniff([]) == nil)
    }

    @Test func widthsAreCappedAtTheSourceAndNeverUpscaled() {
        let plan = VariantPlan(settings: ImageSettings())
        func widths(_ width: Int) -> [Int] {
            Array(Set(plan.specs(for: SourceInfo(format: .jpeg, width: width, height: 100, pages: 1)).map(\.width))).sorted()
        }
        #expect(widths(4000) == [480, 960, 1320, 1920])
        #expect(widths(1500) == [480, 960, 1320, 1500])
        #expect(widths(1000) == [480, 960, 1000])
        #expect(widths(960) == [480, 960])
        #expect(widths(300) == [300])
    }

    @Test func formatsAreBestFirstWithTheOriginalAsFallback() {
        var settings = ImageSettings()
        settings.formats = [.avif, .webp, .original]
        let plan = VariantPlan(settings: settings)
        #expect(plan.outputFormats(for: SourceInfo(format: .png, width: 10, height: 10, pages: 1)) == [.avif, .webp, .jpeg, .png])
        #expect(plan.outputFormats(for: SourceInfo(format: .webp, width: 10, height: 10, pages: 1)) == [.avif, .webp])
        #expect(plan.outputFormats(for: SourceInfo(format: .gif, width: 10, height: 10, pages: 3)) == [.webp, .gif])
        settings.formats = [.webp]
        #expect(VariantPlan(settings: settings).outputFormats(for: SourceInfo(format: .jpeg, width: 10, height: 10, pages: 1)) == [.webp, .jpeg])
    }

    @Test func variantKeysChangeWithTheSpecOnly() {
        let blob = BlobID(of: [1, 2, 3])
        let spec = VariantSpec(width: 480, format: .webp, quality: 80, effort: 4, animated: false, keepMetadata: [])
        var other = spec
        other.quality = 81
        #expect(spec.key(original: blob) == spec.key(original: blob))
        #expect(spec.key(original: blob) != other.key(original: blob))
        #expect(spec.key(original: blob) != spec.key(original: BlobID(of: [1, 2, 4])))
    }

    @Test func transformerMakesEveryVariant() async throws {
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        var settings = ImageSettings()
        settings.quality.jpeg = 80
        settings.formats = [.webp, .original]
        let plan = VariantPlan(settings: settings)
        let (info, variants) = try await transformer.variants(of: ImageBuffer(Paths.image("hubble-wide.jpg")), format: .jpeg) {
            plan.specs(for: $0)
        }
        #expect(info == SourceInfo(format: .jpeg, width: 2000, height: 872, pages: 1))
        // At quality 80 the 1,920 px JPEG re-encode (255 KB) is larger than the 2,000 px source itself
        // (179 KB without metadata; its profile is sRGB): the source stands for it.
        #expect(variants.map { "\($0.spec.format.rawValue)@\($0.width)x\($0.height)" }.sorted() == [
            "jpeg@1320x576", "jpeg@2000x872", "jpeg@480x209", "jpeg@960x419", "webp@1320x576", "webp@1920x837", "webp@480x209",
            "webp@960x419",
        ])
        let standIn = try #require(variants.first { $0.spec.format == .jpeg && $0.spec.width == 1920 })
        #expect(standIn.bytes.count < Paths.image("hubble-wide.jpg").count)
        for variant in variants {
            let decoded = try VipsImage.open(ImageBuffer(variant.bytes))
            #expect(decoded.width == variant.width && decoded.height == variant.height)
            #expect(ImageFormat.sniff(variant.bytes) == variant.spec.format)
        }
    }

    /// A variant's bytes depend on its source and its own spec only: made alone (a social card on a
    /// page of its own) or beside every other width (the same image in an `<img>` too), it is the same
    /// file. Once the 1,200 px card was made from the 1,920 px intermediate in one case and from the
    /// source in the other, so a warm build and a cold build of the same site differed.
    @Test(arguments: ["hubble-wide.jpg", "coffee.png", "astronaut-round.png", "deep-field.gif", "astronaut.jpg"])
    func eachVariantIsTheSameWhateverElseIsMadeWithIt(image: String) async throws {
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        let bytes = Paths.image(image)
        let format = try #require(ImageFormat.sniff(bytes))
        var settings = ImageSettings()
        settings.widths = [150, 480, 960, 1200, 1920]
        settings.formats = [.webp, .original]
        let plan = VariantPlan(settings: settings)
        let (_, together) = try await transformer.variants(of: ImageBuffer(bytes), format: format) { plan.specs(for: $0) }
        #expect(together.count >= 2)
        for variant in together {
            let (_, alone) = try await transformer.variants(of: ImageBuffer(bytes), format: format) { _ in [variant.spec] }
            #expect(alone.first?.bytes == variant.bytes, "\(image) \(variant.spec.canonical): made alone it differs")
        }
    }

    /// Narrower widths are resized from the anchor's one decode (the widest configured width, capped at
    /// the source's), and say so in their key; the anchor's width and wider ones are decoded to their own.
    /// One fallback: the source's format at the widest width up to `fallback_width` only, the modern
    /// formats at every width and `alone` (never dropped for a fallback); every width otherwise.
    @Test func aPictureAsksForOneFallbackFile() {
        var settings = ImageSettings()
        settings.widths = [400, 800, 1600]
        let plan = VariantPlan(settings: settings)
        let photo = SourceInfo(format: .jpeg, width: 3000, height: 2000, pages: 1)
        let one = plan.specs(for: photo, request: plan.markupRequest(plan.defaultRequest))
        #expect(one.filter { $0.format == .jpeg }.map(\.width) == [800])
        // AVIF, the best format, at every width; WebP, for the browsers that take no AVIF, one file too.
        #expect(one.filter { $0.format == .avif }.map(\.width) == [400, 800, 1600] && one.filter { $0.format == .avif }.allSatisfy(\.alone))
        #expect(one.filter { $0.format == .webp }.map(\.width) == [800] && one.filter { $0.format == .webp }.allSatisfy(\.alone))
        // Without a <picture> (no AVIF in an <img srcset>), WebP at every width; so too for an animation (no AVIF).
        let unwrapped = MarkupChoice.unwrapped(plan.markupRequest(plan.defaultRequest))
        #expect(plan.specs(for: photo, request: unwrapped).filter { $0.format == .webp }.map(\.width) == [400, 800, 1600])
        #expect(plan.markupRequest(plan.defaultRequest).union(unwrapped).webp == [400, 800, 1600])
        let animation = SourceInfo(format: .gif, width: 3000, height: 2000, pages: 8)
        #expect(plan.specs(for: animation, request: plan.markupRequest(plan.defaultRequest)).filter { $0.format == .webp }.map(\.width) == [400, 800, 1600])
        var img = Configuration(site: "/site", cacheDirectory: "/cache")
        img.images = settings
        img.output.markup = .img
        let imgPlan = VariantPlan(settings: img.madeImages)
        #expect(imgPlan.specs(for: photo, request: imgPlan.markupRequest(imgPlan.defaultRequest)).filter { $0.format == .jpeg }.count == 3)
        // Narrower than every width up to fallback_width: the narrowest; a source narrower still: capped.
        #expect(VariantRequest(widths: [1000, 2000], formats: [.webp, .original]).withOneFallback(at: 960).fallback == [1000])
        #expect(plan.fallbackWidths(for: SourceInfo(format: .png, width: 500, height: 500, pages: 1),
                                    request: plan.markupRequest(plan.defaultRequest)) == [500])
        // A WebP source asked for WebP: the fallback is all there is, at every width.
        let webp = SourceInfo(format: .webp, width: 3000, height: 2000, pages: 1)
        #expect(plan.specs(for: webp, request: plan.markupRequest(VariantRequest(widths: [400, 800, 1600], formats: [.webp]))).count == 3)
        // Every width: the source's format at each, the modern ones judged against it (not alone).
        settings.fallback = .everyWidth
        let every = VariantPlan(settings: settings).specs(for: photo, request: VariantPlan(settings: settings).markupRequest(plan.defaultRequest))
        #expect(every.filter { $0.format == .jpeg }.count == 3 && !every.contains(where: \.alone))
    }

    @Test func narrowerWidthsAreMadeFromTheAnchor() {
        var settings = ImageSettings()
        settings.widths = [400, 800, 1600]
        let plan = VariantPlan(settings: settings)
        let wide = plan.specs(for: SourceInfo(format: .jpeg, width: 5120, height: 2880, pages: 1),
                              request: VariantRequest(widths: [400, 800, 1600, 2400], formats: [.webp]))
        #expect(wide.map(\.from) == [1600, 1600, nil, nil, 1600, 1600, nil, nil])
        #expect(wide[0].canonical.contains(";from=1600") && !wide[2].canonical.contains("from"))
        // A source narrower than the widest width: its own width is the anchor.
        let narrow = plan.specs(for: SourceInfo(format: .png, width: 1000, height: 800, pages: 1), request: nil)
        // (AVIF, WebP, and the fallback as JPEG and as PNG.)
        #expect(narrow.map(\.width) == Array(repeating: [400, 800, 1000], count: 4).flatMap { $0 })
        #expect(narrow.map(\.from) == Array(repeating: [1000, 1000, nil], count: 4).flatMap { $0 })
    }

    /// An alpha band opaque everywhere is dropped before the resize, which then needs no premultiplying
    /// (floating point over the whole source): the variant is the one the same picture without the band
    /// gives. A band with transparency is kept.
    @Test func anOpaqueAlphaBandIsDroppedAndTransparencyKept() async throws {
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        let spec = VariantSpec(width: 48, format: .png, quality: 0, effort: 4, animated: false, keepMetadata: [])
        func made(_ bytes: [UInt8]) async throws -> VipsImage {
            let (_, variants) = try await transformer.variants(of: ImageBuffer(bytes), format: .png) { _ in [spec] }
            return try VipsImage.open(ImageBuffer(try #require(variants.first).bytes)).materialized()
        }
        let withBand = try await made(Paths.fixture("colour/opaque-alpha.png"))
        let without = try await made(Paths.fixture("colour/reference.png"))
        #expect(withBand.bands == 3 && withBand.width == 48)
        #expect(try withBand.pixels() == without.pixels())
        #expect(try await made(Paths.image("astronaut-round.png")).hasAlpha)
    }

    @Test func truncatedAndNonImageBytesAreUndecodable() async throws {
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        let jpeg = Paths.image("hubble.jpg")
        await #expect(throws: TransformError.self) {
            _ = try await transformer.variants(of: ImageBuffer(jpeg.prefix(jpeg.count / 2)), format: .jpeg) { _ in
                [VariantSpec(width: 480, format: .jpeg, quality: 80, effort: 0, animated: false, keepMetadata: [])]
            }
        }
    }

    @Test func blobsAreVerifiedWhenRead() throws {
        let folder = TemporaryFolder()
        let store = try BlobStore(root: folder.path + "/blobs")
        let id = try store.write(Array("hello".utf8))
        guard case .found(let bytes) = store.read(id) else { Issue.record("not found"); return }
        #expect(bytes == Array("hello".utf8))
        // Flip a byte behind the store's back: the read is a miss and the file is gone.
        FileManager.default.createFile(atPath: store.path(of: id), contents: Data("jello".utf8))
        guard case .corrupt = store.read(id) else { Issue.record("corruption not detected"); return }
        #expect(!store.exists(id))
        guard case .missing = store.read(id) else { Issue.record("expected a miss"); return }
    }

    @Test func svgSizeComesFromItsRootElement() {
        #expect(SVGSize.parse(Paths.image("drawing.svg"))! == (240, 120))
        #expect(SVGSize.parse(Array("<svg viewBox='0 0 50.5 20'>".utf8))! == (51, 20))
        #expect(SVGSize.parse(Array("<svg width=\"100%\" viewBox=\"0,0,10,5\">".utf8))! == (10, 5))
        #expect(SVGSize.parse(Array("<svg>".utf8)) == nil)
    }
}

@Suite struct OrientationTests {
    static let folder = Paths.fixtures + "/orientation"

    /// Mean absolute difference per channel between two same-sized 8-bit images.
    static func difference(_ a: VipsImage, _ b: VipsImage) throws -> Double {
        let (x, y) = (try a.pixels(), try b.pixels())
        guard x.count == y.count else { return .infinity }
        return Double(zip(x, y).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(x.count)
    }

    @Test(arguments: 1...8)
    func everyEXIFOrientationComesOutUpright(orientation: Int) async throws {
        let bytes = [UInt8](FileManager.default.contents(atPath: "\(Self.folder)/o\(orientation).jpg")!)
        let upright = try VipsImage.open(ImageBuffer([UInt8](FileManager.default.contents(atPath: "\(Self.folder)/upright.png")!))).materialized()
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        let plan = VariantPlan(settings: ImageSettings())
        let (info, variants) = try await transformer.variants(of: ImageBuffer(bytes), format: .jpeg) { plan.specs(for: $0) }
        #expect(info.width == 96 && info.height == 64)
        let jpeg = try #require(variants.first { $0.spec.format == .jpeg })
        #expect(jpeg.width == 96 && jpeg.height == 64)
        let output = try VipsImage.open(ImageBuffer(jpeg.bytes))
        #expect(try Self.difference(output, upright) < 4, "orientation \(orientation)")
        // The same comparison tells a wrongly turned image apart, so the check above can fail.
        let mirrored = try VipsImage.open(ImageBuffer([UInt8](FileManager.default.contents(atPath: "\(Self.folder)/o2.jpg")!)))
        #expect(try Self.difference(mirrored, upright) > 20)
    }
}
