import CWebPOracle
import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

/// `images.quality = "auto"`: the quality each variant is given, measured on real images with libvips'
/// own encoders and decoders and libwebp's SSIM.
@Suite struct QualitySearchTests {
    static let auto = AutoQuality(ssim: 9700, floor: 30, ceiling: 95)

    static func spec(_ format: ImageFormat = .webp, width: Int, auto: AutoQuality = auto) -> VariantSpec {
        VariantSpec(width: width, format: format, quality: 0, effort: format == .webp ? 2 : 1, animated: false, keepMetadata: [], auto: auto)
    }

    /// A variant's pixels as the transformer has them: decoded to `width`, upright, in memory.
    static func pixels(_ image: String, width: Int? = nil) throws -> VipsImage {
        let bytes = Paths.image(image)
        let whole = try VipsImage.open(ImageBuffer(bytes))
        return try VipsImage.thumbnail(ImageBuffer(bytes), width: width ?? whole.width).materialized().eightBit().materialized()
    }

    /// A variant's pixels as the transformer makes them for `spec` (from its anchor's decode, if it has one).
    static func pixels(of bytes: [UInt8], for spec: VariantSpec) throws -> VipsImage {
        let buffer = ImageBuffer(bytes)
        let format = try #require(ImageFormat.sniff(bytes))
        let inspection = try Transformer.inspect(buffer, format: format, limits: .init(maxPixels: 100_000_000))
        var pixels = Intermediates(buffer, inspection: inspection, animated: spec.animated)
        return try pixels.image(for: spec)
    }

    /// SSIM of `image` encoded as `spec` at `quality`, decoded, against `image` itself.
    static func ssim(_ image: VipsImage, _ spec: VariantSpec, quality: Int) throws -> Double {
        let bytes = try image.encoded(as: spec.encodeFormat(quality: quality))
        return try #require(try VipsImage.open(ImageBuffer(bytes)).materialized().luma().ssim(try image.luma()))
    }

    /// A JPEG try is coded sequentially with standard tables, the file progressively with optimised
    /// ones: the same coefficients, so the same pixels and the same score, at every quality (92 is
    /// past libvips' switch to full-resolution chroma).
    @Test func aJPEGTryMeasuresWhatTheFileDecodesTo() throws {
        for (name, width) in [("hubble.jpg", 480), ("astronaut.jpg", 300), ("coffee.png", 300)] {
            let image = try Self.pixels(name, width: width)
            let reference = try image.luma()
            let search = QualitySearch(spec: Self.spec(.jpeg, width: width), auto: Self.auto)
            for quality in [45, 60, 80, 92] {
                let kept = try image.encoded(as: search.spec.encodeFormat(quality: quality))
                let tried = try image.encoded(as: search.trialFormat(quality: quality))
                let keptScore = try #require(try LumaPlane(decoding: ImageBuffer(kept)).ssim(reference))
                let triedScore = try #require(try LumaPlane(decoding: ImageBuffer(tried)).ssim(reference))
                #expect(keptScore == triedScore, "\(name) q\(quality): \(keptScore) and \(triedScore)")
            }
        }
    }

    /// The SSIM is libwebp's to the bit (its WebPPlaneDistortion, from Debian's libwebp linked into
    /// these tests): on planes of every shape, those narrower or shorter than a window among them, dark
    /// ones (which count as equal), noise against noise, and a picture against its encodes.
    @Test func theSSIMIsLibwebpsToTheBit() throws {
        try VipsRuntime.start()
        func theirs(_ a: LumaPlane, _ b: LumaPlane) -> Double {
            var sum: Float = 0, logarithmic: Float = 0
            #expect(WebPPlaneDistortion(a.samples, a.width, b.samples, b.width, Int32(a.width), Int32(a.height), 1, 1, &sum, &logarithmic) == 1)
            return Double(sum) / Double(a.width * a.height)
        }
        var random = SplitMix(state: 30)
        var pairs: [(LumaPlane, LumaPlane)] = []
        for (width, height) in [(1, 1), (1, 9), (9, 1), (3, 5), (6, 6), (7, 7), (8, 13), (64, 64), (257, 31), (1024, 64)] {
            let a = (0..<width * height).map { _ in UInt8.random(in: 0...255, using: &random) }
            let near = a.map { UInt8(clamping: Int($0) + Int.random(in: -6...6, using: &random)) }
            let dark = a.map { $0 / 40 }
            let plane = { (samples: [UInt8]) in LumaPlane(samples: samples, width: width, height: height) }
            pairs += [(plane(a), plane(near)), (plane(a), plane(a.shuffled(using: &random))), (plane(dark), plane(near.map { $0 / 40 }))]
        }
        let image = try Self.pixels("hubble.jpg", width: 333)
        for quality in [10, 50, 90] {
            let bytes = try image.encoded(as: Self.spec(width: 333).encodeFormat(quality: quality))
            pairs.append((try LumaPlane(decoding: ImageBuffer(bytes)), try image.luma()))
        }
        for (a, b) in pairs {
            #expect(a.ssim(b) == theirs(a, b), "\(a.width)x\(a.height)")
        }
    }

    @Test func ssimIsOneForTheSamePixelsAndFallsWithTheQuality() throws {
        let image = try Self.pixels("hubble.jpg", width: 480)
        let plane = try image.luma()
        #expect(plane.ssim(plane) == 1)
        let spec = Self.spec(width: 480)
        let values = try [95, 75, 50, 20].map { try Self.ssim(image, spec, quality: $0) }
        #expect(values == values.sorted(by: >) && values.allSatisfy { $0 < 1 && $0 > 0.5 }, "\(values)")
        // A plane of another size is no comparison.
        #expect(plane.ssim(try Self.pixels("hubble.jpg", width: 240).luma()) == nil)
    }

    /// The quality found is the lowest whose try reaches the target: one step less does not. Photos of
    /// both sizes: the whole picture (coffee, 300 × 200) and a sample of tiles (hubble, 1,000 × 872).
    @Test(arguments: ["hubble.jpg", "astronaut.jpg", "coffee.png"])
    func theQualityIsTheLowestThatReachesTheTarget(image: String) throws {
        let pixels = try Self.pixels(image)
        let spec = Self.spec(width: pixels.width)
        let q = try QualitySearch(spec: spec, auto: Self.auto).quality(for: pixels)
        #expect(q > Self.auto.floor && q < Self.auto.ceiling, "\(image): \(q) is a bound, not a search result")
        let sample = try QualitySearch.sample(of: pixels)
        #expect(try Self.ssim(sample, spec, quality: q) >= 0.97)
        #expect(try Self.ssim(sample, spec, quality: q - 1) < 0.97)
        // The sample stands for the picture: the whole variant at that quality is near the target too.
        let whole = try Self.ssim(pixels, spec, quality: q)
        #expect(abs(whole - 0.97) < 0.01, "\(image): the whole picture's SSIM at \(q) is \(whole)")
        // The score is what the try at that quality measured.
        let found = try QualitySearch(spec: spec, auto: Self.auto).find(on: QualitySearch.Sample(of: pixels))
        #expect(found == QualitySearch.Found(quality: q, score: SSIMScore(measured: try Self.ssim(sample, spec, quality: q))))
    }

    @Test func aSampleIsTilesFromAllOverTheLargerPictures() throws {
        let large = try Self.pixels("hubble.jpg")
        let sample = try QualitySearch.sample(of: large)
        // About `tiles` tiles (the grid follows the picture's shape: 6 × 5 for this one).
        let tiles = sample.width * sample.height / (QualitySearch.tile * QualitySearch.tile)
        #expect(sample.width % QualitySearch.tile == 0 && sample.height % QualitySearch.tile == 0)
        #expect(tiles * 4 >= QualitySearch.tiles * 3 && tiles <= QualitySearch.tiles, "\(tiles) tiles")
        // Made again, the same pixels; a small picture is its own sample.
        #expect(try sample.pixels() == (try QualitySearch.sample(of: large).pixels()))
        let small = try Self.pixels("coffee.png")
        #expect(try QualitySearch.sample(of: small).pixels() == (try small.pixels()))
    }

    /// Whatever the shape of the curve (flat ones climb from the floor in small steps, steep ones jump)
    /// and wherever the answer lies, the search ends at the lowest quality that reaches the target,
    /// within `maxTries`: on synthetic curves ln(1 − SSIM) = a − b·q (with a bend), every floor and
    /// ceiling a configuration may give.
    @Test func theSearchAlwaysEndsAtTheLowestQualityThatReachesTheTarget() throws {
        var generator = SplitMix(state: 22)
        for _ in 0..<4000 {
            let slope = [0.002, 0.008, 0.03, 0.1, 0.4][Int(generator.next() % 5)] * (0.5 + Double(generator.next() % 100) / 100)
            let bend = Double(generator.next() % 60)
            let floor = Int(generator.next() % 95), ceiling = floor + 1 + Int(generator.next() % UInt64(100 - floor))
            let curve = { (q: Int) -> Double in 1 - exp(-1.5 - slope * Double(q) - (Double(q) > bend ? slope * (Double(q) - bend) : 0)) }
            // The answer anywhere between floor and ceiling, or (one time in ten) none reaching the target.
            let answer = floor + Int(generator.next() % UInt64(ceiling - floor + 1))
            let target = generator.next() % 10 == 0 ? curve(ceiling) + 1e-9 : curve(answer)
            var calls = 0
            let found = try QualitySearch.lowest(floor: floor, ceiling: ceiling, target: target) { q in calls += 1; return curve(q) }
            let lowest = (floor...ceiling).first { curve($0) >= target } ?? ceiling
            #expect(found == lowest && calls <= QualitySearch.maxTries,
                    "floor \(floor), ceiling \(ceiling), slope \(slope), bend \(bend): \(found) in \(calls) tries, not \(lowest)")
        }
    }

    @Test func aHigherTargetNeverGivesALowerQuality() throws {
        let pixels = try Self.pixels("hubble.jpg", width: 480)
        let qualities = try [9000, 9500, 9700, 9850, 9950].map { ssim in
            try QualitySearch(spec: Self.spec(width: 480), auto: AutoQuality(ssim: ssim, floor: 5, ceiling: 100)).quality(for: pixels)
        }
        #expect(qualities == qualities.sorted() && qualities.first! < qualities.last!, "\(qualities)")
    }

    @Test func theFloorAndTheCeilingBoundTheSearch() throws {
        let pixels = try Self.pixels("astronaut.jpg", width: 256)
        let spec = Self.spec(width: 256)
        #expect(try QualitySearch(spec: spec, auto: AutoQuality(ssim: 9999, floor: 30, ceiling: 70)).quality(for: pixels) == 70)
        #expect(try QualitySearch(spec: spec, auto: AutoQuality(ssim: 5000, floor: 30, ceiling: 70)).quality(for: pixels) == 30)
    }

    /// Different pictures need different qualities for the same SSIM: that is the point.
    @Test func picturesGetQualitiesOfTheirOwn() throws {
        let search = { (image: String) throws -> Int in
            let pixels = try Self.pixels(image, width: 300)
            return try QualitySearch(spec: Self.spec(width: 300), auto: Self.auto).quality(for: pixels)
        }
        let qualities = try ["hubble.jpg", "astronaut.jpg", "coffee.png"].map(search)
        #expect(Set(qualities).count > 1, "\(qualities)")
    }

    @Test(arguments: [ImageFormat.jpeg, .avif])
    func otherLossyFormatsAreSearchedTheSameWay(format: ImageFormat) throws {
        let pixels = try Self.pixels("astronaut.jpg", width: 320)
        var auto = AutoQuality.defaults(for: format)
        auto.ssim = 9600
        let spec = Self.spec(format, width: 320, auto: auto)
        let q = try QualitySearch(spec: spec, auto: auto).quality(for: pixels)
        #expect(q > auto.floor && q < auto.ceiling, "\(format): \(q)")
        let sample = try QualitySearch.sample(of: pixels)
        #expect(try Self.ssim(sample, spec, quality: q) >= 0.96)
        #expect(try Self.ssim(sample, spec, quality: q - 1) < 0.96)
    }

    /// SSIMULACRA2 as PyPI's `ssimulacra2` 0.3.0 scores the same pixels (Examples/images/coffee.png
    /// against its sequential JPEGs from this libvips: `compute_ssimulacra2` on the two written as PNG).
    @Test(arguments: [(30, 6_368, 52.3894), (60, 9_898, 57.1967), (90, 28_504, 80.7993)])
    func ssimulacra2ScoresAsThePublishedImplementation(quality: Int, bytes: Int, published: Double) throws {
        let image = try VipsImage.open(ImageBuffer(Paths.image("coffee.png"))).materialized()
        let jpeg = try image.encoded(as: .jpegSequential(quality: quality))
        #expect(jpeg.count == bytes, "another JPEG encoder: the published scores are of other pixels")
        let reference = try PerceptualReference(try image.samples())
        let score = try #require(reference.score(try PixelSamples(decoding: ImageBuffer(jpeg))))
        #expect(abs(score - published) < 0.01, "\(score) against \(published)")
        #expect(reference.score(try image.samples()) == 100)
        #expect(reference.score(try VipsImage.thumbnail(ImageBuffer(Paths.image("coffee.png")), width: 150).samples()) == nil)
    }

    /// Two targets reach the search's one exactly when both are reached; the SSIMULACRA2 shortfall
    /// counts on SSIM's scale of distances.
    @Test func aSecondTargetIsReachedOnlyWithTheFirst() {
        let auto = AutoQuality(ssim: 9650, floor: 30, ceiling: 75, ssimulacra2: 70)
        let cases: [(ssim: Double, ss2: Double, reached: Bool)] = [(0.97, 75, true), (0.97, 65, false), (0.96, 75, false),
                                                                  (0.96, 65, false), (0.965, 70, true), (0.99, 69.9, false)]
        for (ssim, ss2, reached) in cases {
            #expect((QualitySearch.combined((ssim, ss2), auto) >= auto.target - 1e-12) == reached, "\(ssim), \(ss2)")
        }
        #expect(QualitySearch.combined((0.97, 10), AutoQuality(ssim: 9650, floor: 30, ceiling: 75)) == 0.97)
        #expect(QualitySearch.combined((0.97, 50), auto) < QualitySearch.combined((0.97, 60), auto))
    }

    /// With a SSIMULACRA2 target, an AVIF is searched to the lowest quality that reaches both: never
    /// below what SSIM alone chooses.
    @Test func anAVIFSearchedToBothTargetsReachesBoth() throws {
        let pixels = try Self.pixels("astronaut.jpg", width: 320)
        let ssimOnly = AutoQuality(ssim: 9600, floor: 20, ceiling: 90)
        var both = ssimOnly
        both.ssimulacra2 = 80
        let alone = try QualitySearch(spec: Self.spec(.avif, width: 320, auto: ssimOnly), auto: ssimOnly).quality(for: pixels)
        let q = try QualitySearch(spec: Self.spec(.avif, width: 320, auto: both), auto: both).quality(for: pixels)
        #expect(q > alone, "\(q) against \(alone)")
        let sample = try QualitySearch.sample(of: pixels)
        let reference = try PerceptualReference(try sample.samples())
        func perceptual(_ quality: Int) throws -> Double {
            let bytes = try sample.encoded(as: Self.spec(.avif, width: 320, auto: both).encodeFormat(quality: quality))
            return try #require(reference.score(try PixelSamples(decoding: ImageBuffer(bytes))))
        }
        #expect(try perceptual(q) >= 80 && (try Self.ssim(sample, Self.spec(.avif, width: 320), quality: q)) >= 0.96)
        #expect(try perceptual(q - 1) < 80 || (try Self.ssim(sample, Self.spec(.avif, width: 320), quality: q - 1)) < 0.96)
    }

    /// The transformer encodes at the quality found and says which: encoding the variant's pixels again
    /// at that quality gives the same bytes.
    @Test func theTransformerEncodesAtTheQualityItRecords() async throws {
        let transformer = try Transformer(threads: 1, maxPixels: 100_000_000)
        var settings = ImageSettings()
        settings.widths = [300, 700]
        let plan = VariantPlan(settings: settings)
        let bytes = Paths.image("hubble.jpg")
        let (_, variants) = try await transformer.variants(of: ImageBuffer(bytes), format: .jpeg) { plan.specs(for: $0) }
        let webps = variants.filter { $0.spec.format == .webp }
        #expect(webps.count == 2)
        // The JPEG fallbacks are searched to the same target (or are the source itself).
        for variant in variants where variant.made != .source {
            let q = try #require(variant.made.quality)
            #expect(variant.spec.auto == AutoQuality.defaults(for: variant.spec.format))
            #expect(variant.made.score != nil, "\(variant.spec.canonical): a searched quality has its score")
            let pixels = try Self.pixels(of: bytes, for: variant.spec)
            let again = try Metadata.encode(pixels, spec: variant.spec, quality: q, credits: Credits())
            #expect(again == variant.bytes, "\(variant.spec.canonical) at \(q)")
        }
    }
}

@Suite struct AutoQualitySpecTests {
    @Test func aFixedQualityKeepsItsKey() {
        // Caches made before automatic qualities stay valid for fixed ones: the canonical string is as it was.
        let fixed = VariantSpec(width: 480, format: .webp, quality: 81, effort: 2, animated: false, keepMetadata: [])
        #expect(fixed.canonical == "w=480;f=webp;q=81;e=2;anim=0;keep=")
    }

    @Test func theTargetAndBoundsAreInTheKey() {
        let blob = BlobID(of: [1, 2, 3])
        let spec = QualitySearchTests.spec(width: 480, auto: AutoQuality(ssim: 9700, floor: 40, ceiling: 90))
        #expect(spec.canonical == "w=480;f=webp;q=auto:ssim=0.9700:40-90;e=2;anim=0;keep=")
        var other = spec
        other.auto?.ssim = 9800
        #expect(other.canonical.contains("q=auto:ssim=0.9800:40-90") && other.key(original: blob) != spec.key(original: blob))
        other = spec
        other.auto?.ceiling = 85
        #expect(other.key(original: blob) != spec.key(original: blob))
        #expect(AutoQuality(ssim: 9050, floor: 1, ceiling: 100).canonical == "auto:ssim=0.9050:1-100")
    }

    @Test func theRecordSaysWhatTheBytesAre() throws {
        let auto = QualitySearchTests.spec(width: 480)
        #expect(VariantSpec.Made(recorded: auto.recorded(as: .quality(74)), of: auto) == .quality(74))
        #expect(VariantSpec.Made(recorded: auto.recorded(as: .source), of: auto) == .source)
        let jpeg = VariantSpec(width: 480, format: .jpeg, quality: 80, effort: 0, animated: false, keepMetadata: [])
        // A record written before qualities were kept: the fixed quality is the spec's.
        #expect(VariantSpec.Made(recorded: jpeg.canonical, of: jpeg) == .quality(80))
        let png = VariantSpec(width: 480, format: .png, quality: 0, effort: 4, animated: false, keepMetadata: [])
        #expect(VariantSpec.Made(recorded: png.recorded(as: .lossless), of: png) == .lossless)
        // A searched quality keeps what its search measured there, for the report.
        let score = try #require(SSIMScore(tenThousandths: 9652))
        #expect(auto.recorded(as: .quality(74, score: score)).hasSuffix(";made=q74;ssim=9652"))
        #expect(VariantSpec.Made(recorded: auto.recorded(as: .quality(74, score: score)), of: auto) == .quality(74, score: score))
        for bad in ["q74;ssim=10001", "q74;ssim=", "q74;ssim=96.5", "q74;q75", "q74;"] {
            #expect(VariantSpec.Made(suffix: bad[...]) == nil, "\(bad)")
        }
        #expect(SSIMScore(measured: 0.964_99).description == "0.9649" && SSIMScore(measured: 1).description == "1.0000")
    }

    /// The chosen quality travels in the spec string, which a remote pack's variant record already
    /// carries: no field of its own. The pack's check recomputes each key from the canonical part.
    @Test func theChosenQualityTravelsThroughARemotePack() throws {
        let spec = QualitySearchTests.spec(width: 480)
        let blob = BlobID(of: [9])
        let webp = Array("webp bytes".utf8)
        let jpegSpec = VariantSpec(width: 480, format: .jpeg, quality: 80, effort: 0, animated: false, keepMetadata: [])
        let rows = [
            VariantRecord(key: spec.key(original: blob), originalBlob: blob, spec: spec.recorded(as: .quality(63)),
                          blob: BlobID(of: webp), format: .webp, width: 480, height: 300, bytes: webp.count),
            VariantRecord(key: jpegSpec.key(original: blob), originalBlob: blob, spec: jpegSpec.recorded(as: .source),
                          blob: nil, format: .jpeg, width: 480, height: 300, bytes: 99),
        ]
        let encode = { (rows: [VariantRecord]) in
            Pack.encode(key: .content(blob), originalBlob: blob, original: nil, variants: rows, placeholders: [:],
                        blobs: [(BlobID(of: webp), webp)], written: 0)
        }
        let pack = try Pack.decode(encode(rows), expected: .content(blob), maxOriginalBytes: 100).get()
        #expect(pack.foreign == 0 && pack.variants.count == 2)
        let back = try #require(pack.variants[spec.key(original: blob)])
        #expect(back == rows[0] && StoredVariant(spec: spec, record: back).made == .quality(63))
        #expect(pack.variants[jpegSpec.key(original: blob)].map { VariantSpec.Made(recorded: $0.spec, of: jpegSpec) } == .source)

        // Another target is another key: the record is not taken for this spec.
        var other = spec
        other.auto?.ssim = 9800
        #expect(pack.variants[other.key(original: blob)] == nil)
        // A made part that says nothing readable is not vouched for.
        for bad in [";made=q0", ";made=q101", ";made=x", ";made=q74;made=q75"] {
            var row = rows[0]
            row.spec = spec.canonical + bad
            #expect(throws: RemoteRecordError.self, "\(bad)") { try Pack.decode(encode([row]), expected: .content(blob), maxOriginalBytes: 100).get() }
        }
    }

    @Test func thePlanAsksForAutomaticQualitiesByDefault() {
        var settings = ImageSettings()
        settings.formats = [.avif, .webp, .original]
        let specs = VariantPlan(settings: settings).specs(for: SourceInfo(format: .jpeg, width: 600, height: 400, pages: 1))
        #expect(Set(specs.map(\.format)) == [.avif, .webp, .jpeg])
        #expect(specs.allSatisfy { $0.auto == AutoQuality.defaults(for: $0.format) })
        // One target for every format: files compare at equal quality.
        #expect(Set(specs.compactMap(\.auto?.ssim)).count == 1)
        settings.quality.webp = 80
        #expect(VariantPlan(settings: settings).specs(for: SourceInfo(format: .jpeg, width: 600, height: 400, pages: 1))
            .filter { $0.format == .webp }.allSatisfy { $0.auto == nil && $0.quality == 81 })
    }
}
