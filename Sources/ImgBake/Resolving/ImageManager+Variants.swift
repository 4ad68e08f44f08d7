import Vips

extension ImageManager {
    /// One variant set: the original, then its variants from the index, made from the original where
    /// missing. A damaged original blob is fetched again, once, and the set made from what came back
    /// (the repair is reported with the image).
    nonisolated func load(_ url: ImageSource, _ key: ImageKey) async -> Resolution {
        var outcome = await original(url, key.original)
        var damaged: String?
        while true {
            guard case .available(let record, let origin, let credits, var notes) = outcome else { return outcome.failure }
            switch await variantSet(record, request: key.request) {
            case .success(let made):
                if let damaged { notes.append("cache: the original \(damaged); fetched again") }
                await writeBackDone(record, request: key.request, origin: origin, credits: credits)
                return .resolved(image(record, url: url, made, origin: origin, credits: credits), notes: notes)
            case .failure(.originalDamaged(let why)) where damaged == nil:
                damaged = why
                outcome = await refetchOriginal(url, key.original)
            case .failure(let failure):
                return failure.resolution
            }
        }
    }

    /// The cached original could not be read back as stored.
    struct DamagedOriginal: Error {
        let why: String
    }

    struct MadeVariants: Sendable {
        var variants: [StoredVariant]
        var encoded: Int
        var placeholder: String?
    }

    enum VariantSetError: Error, CustomStringConvertible {
        case originalDamaged(String)
        case transform(TransformError)
        /// Not localised by the configuration's choice (an SVG policy).
        case refused(String)
        /// Asked of the local cache only, which has not got every variant.
        case notMade

        var description: String {
            switch self {
            case .originalDamaged(let why): "the cached original \(why)"
            case .transform(let error): error.description
            case .refused(let why): why
            case .notMade: "not made yet"
            }
        }

        var resolution: Resolution {
            if case .transform = self { return .failed(ImageFailure(reason: description, kind: .transform)) }
            if case .refused = self { return .failed(ImageFailure(reason: description, kind: .refused)) }
            return .failed(ImageFailure(reason: description, kind: .fetch(.final)))
        }
    }

    /// Steps 1 and 2 of the data flow: every variant from the index when all are there (no decode, no
    /// network); otherwise the missing ones from the cached original, in one decode.
    /// `makeMissing: false` asks the local cache only: a variant not in it, or a placeholder not made,
    /// is the failure `.notMade` (no remote, no decode).
    nonisolated func variantSet(_ record: OriginalRecord, request: VariantRequest, makeMissing: Bool = true) async -> Result<MadeVariants, VariantSetError> {
        let source = SourceInfo(format: record.format, width: record.width, height: record.height, pages: record.pages)
        if record.format == .svg {
            guard makeMissing else { return .failure(.notMade) }
            await localiseOriginal(record)
            return await svgVariant(record)
        }
        let specs = plan.specs(for: source, request: request)
        let keys = specs.map { $0.key(original: record.blob) }
        let kind = placeholder
        // A row whose blob file vanished or changed size is a miss.
        let local = (try? await cache.storedVariants(keys, placeholder: kind == .none ? nil : kind.rawValue, of: record.blob)) ?? ([:], nil)
        let (stored, storedPlaceholder) = makeMissing ? await withRemoteVariants(local, keys, placeholder: kind == .none ? nil : kind.rawValue,
                                                                                 of: record) : local
        let missing = specs.filter { stored[$0.key(original: record.blob)] == nil }
        let needsPlaceholder = kind != .none && storedPlaceholder == nil
        guard makeMissing || (missing.isEmpty && !needsPlaceholder) else { return .failure(.notMade) }
        var records = specs.compactMap { stored[$0.key(original: record.blob)] }
        var encodedCount = 0
        var placeholderValue = storedPlaceholder

        if !missing.isEmpty || needsPlaceholder {
            await localiseOriginal(record)
            let output: TransformOutput, job = TransformJob(specs: missing, placeholder: needsPlaceholder ? kind : .none)
            do throws(VariantSetError) { output = try await transformed(record, job).get() } catch { return .failure(error) }
            let cachedRows = specs.compactMap { spec in stored[spec.key(original: record.blob)].map { (width: spec.width, record: $0) } }
            let made = Self.keepingOnlyWorthwhile(output.variants, besides: cachedRows, fallback: record.format)
            let rows = made.map { variant, dropped in
                (row: VariantRecord(key: variant.spec.key(original: record.blob), originalBlob: record.blob,
                                    spec: variant.spec.recorded(as: variant.made), blob: nil, format: variant.spec.format,
                                    width: variant.width, height: variant.height, bytes: variant.bytes.count),
                 bytes: dropped ? nil : variant.bytes)
            }
            // What the cache cannot store (read-only, full disk) it keeps for this build.
            let newPlaceholder = output.placeholder.map { (kind: kind.rawValue, value: $0) }
            let storedRows = await cache.storeVariants(rows, of: record.blob, placeholder: newPlaceholder, now: now())
            writeBack(storedRows, of: record, placeholder: newPlaceholder)
            records += storedRows
            encodedCount = made.count
            placeholderValue = output.placeholder ?? placeholderValue
        }
        return .success(MadeVariants(variants: Self.variants(specs, records: records, of: record.blob, source: source),
                                     encoded: encodedCount, placeholder: placeholderValue))
    }

    /// One decode of the cached original for `job`. A damaged original is forgotten (fetched again next
    /// time); an undecodable one is remembered as failed.
    private nonisolated func transformed(_ record: OriginalRecord, _ job: TransformJob) async -> Result<TransformOutput, VariantSetError> {
        let cache = self.cache
        do {
            return .success(try await transformer.transform(loading: {
                switch cache.readBlobHere(record.blob) {
                case .found(let bytes): return ImageBuffer(bytes)
                case .corrupt: throw DamagedOriginal(why: "did not match its hash")
                case .missing: throw DamagedOriginal(why: "was missing")
                }
            }, format: record.format) { _ in job })
        } catch let damaged as DamagedOriginal {
            await cache.forgetOriginal(record.key)
            return .failure(.originalDamaged(damaged.why))
        } catch {
            let failure = error as? TransformError ?? .undecodable("\(error)")
            if case .undecodable = failure { await forgetUndecodable(record, reason: failure.description) }
            return .failure(.transform(failure))
        }
    }

    /// The variants of `specs` that have a file, from their rows; a fallback file names the other
    /// fallback format made at its width and not kept (the report's "instead").
    private static func variants(_ specs: [VariantSpec], records: [VariantRecord], of blob: BlobID, source: SourceInfo) -> [StoredVariant] {
        let bySpec = Dictionary(records.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        return specs.compactMap { spec -> StoredVariant? in
            guard let row = bySpec[spec.key(original: blob)], row.blob != nil else { return nil }
            var variant = StoredVariant(spec: spec, record: row)
            if VariantPlan.isFallback(spec.format, of: source),
               let other = specs.first(where: { $0.width == spec.width && $0.format != spec.format && VariantPlan.isFallback($0.format, of: source) }),
               let passed = bySpec[other.key(original: blob)], passed.blob == nil {
                variant.passedOver = .init(format: other.format, bytes: passed.bytes)
            }
            return variant
        }
    }

    /// SVG is copied through unmodified (never rasterised), if the policy lets this one be served from
    /// the site's origin. The policy is applied here, not when downloading: the original stays cached,
    /// so changing `images.svg` needs no request.
    nonisolated func svgVariant(_ record: OriginalRecord) async -> Result<MadeVariants, VariantSetError> {
        switch svgPolicy {
        case .refuse:
            return .failure(.refused("SVG is not localised (images.svg = \"refuse\")"))
        case .safe:
            guard case .found(let bytes) = await cache.readBlob(record.blob) else { return .failure(.originalDamaged("was missing")) }
            if let problem = SVGSafety.problem(bytes) {
                return .failure(.refused("\(problem): not copied to the site, where it would run (images.svg = \"copy\" copies it anyway)"))
            }
        case .copy:
            guard await cache.hasBlob(record.blob) else { return .failure(.originalDamaged("was missing")) }
        }
        return .success(MadeVariants(variants: [svgCopy(record)], encoded: 0, placeholder: nil))
    }

    /// An original whose header read but whose pixels do not decode is a permanent failure, like one
    /// refused from its header: its row and blob go (unless another row shares the blob) and the failure
    /// is remembered, so later builds neither keep it nor decode it again, and this build does not
    /// download it again for another variant set.
    nonisolated func forgetUndecodable(_ record: OriginalRecord, reason: String) async {
        // First, so that a variant set finding the blob gone (refetchOriginal) gets the failure.
        await markFailed(record.key, ImageFailure(reason: reason, kind: .transform))
        let failure = FailureRecord(key: record.key, url: record.url, reason: reason, failedAt: now())
        await cache.forgetUndecodable(record, failure: failure)
    }

    /// A modern-format variant is offered only where it beats what a browser would otherwise get at
    /// that width: it is dropped (recorded as such, so not encoded again, and left out of the markup)
    /// when a kept variant of a later format of the same spec width (the fallback, which may be the
    /// source itself a little wider; for AVIF the WebP too) is no larger and at least as good. Every
    /// lossy file is searched to the same SSIM target, so all that reach it are equally good and the
    /// smaller wins; one that stopped at its ceiling below the target is only as good as its score;
    /// lossless files, the source's own bytes and fixed qualities count as reaching it. A variant made
    /// `alone` (one fallback file per image) is not judged against the fallback.
    static func keepingOnlyWorthwhile(_ encoded: [EncodedVariant], besides stored: [(width: Int, record: VariantRecord)],
                                      fallback: ImageFormat) -> [(EncodedVariant, dropped: Bool)] {
        /// Later formats first: each is judged against the kept ones after it. A PNG's JPEG fallback ranks
        /// with the PNG.
        func rank(_ format: ImageFormat) -> Int { format == fallback || format == .jpeg ? 0 : format == .webp ? 1 : 2 }
        var kept: [Int: [(rank: Int, bytes: Int, level: Int)]] = [:] // spec width → kept variants
        for (width, row) in stored where row.blob != nil {
            let spec = VariantSpec(width: width, format: row.format, quality: 0, effort: 0, animated: false, keepMetadata: [])
            kept[width, default: []].append((rank(row.format), row.bytes, level(VariantSpec.Made(recorded: row.spec, of: spec), target: nil)))
        }
        var dropped = Set(encoded.indices.filter { encoded[$0].isUnmade })
        if fallback == .png { dropped.formUnion(pngOrJPEGDropped(encoded, besides: stored, dropped: dropped)) }
        for index in encoded.indices.sorted(by: { rank(encoded[$0].spec.format) < rank(encoded[$1].spec.format) }) where !dropped.contains(index) {
            let variant = encoded[index], r = rank(variant.spec.format)
            // A variant searched to SSIMULACRA2 as well is better than any searched to SSIM alone, however
            // their SSIMs compare: it is not dropped for a smaller file that may not reach its target.
            let own = variant.spec.auto?.ssimulacra2 != nil ? Int.max - 1
                : level(variant.made, target: variant.spec.auto.flatMap { SSIMScore(tenThousandths: $0.ssim) })
            // A variant made alone is judged against the other modern formats only (AVIF against WebP).
            let lowest = variant.spec.alone ? 1 : 0
            if r > 0, kept[variant.spec.width, default: []].contains(where: { (lowest..<r).contains($0.rank) && $0.bytes <= variant.bytes.count && $0.level >= own }) {
                dropped.insert(index)
            } else {
                kept[variant.spec.width, default: []].append((r, variant.bytes.count, own))
            }
        }
        return encoded.indices.map { (encoded[$0], dropped.contains($0)) }
    }

    /// A PNG's fallback, made as PNG and as JPEG at a width: the one of the two that goes. The JPEG is
    /// kept where it reached its search's target (what the search takes to look the same) and is
    /// smaller, else the PNG; one of the two is kept, whichever was made first.
    private static func pngOrJPEGDropped(_ encoded: [EncodedVariant], besides stored: [(width: Int, record: VariantRecord)],
                                         dropped unmade: Set<Int>) -> Set<Int> {
        var dropped = unmade
        let pair: Set<ImageFormat> = [.png, .jpeg]
        /// A PNG is lossless; a JPEG is as good where its search reached the target.
        func reached(_ variant: EncodedVariant) -> Bool {
            variant.spec.format == .png || level(variant.made, target: nil) >= (variant.spec.auto?.ssim ?? 0)
        }
        // A stored one of the pair is the one kept when both were made: the JPEG only if it reached.
        let storedPair = Dictionary(stored.filter { $0.record.blob != nil && pair.contains($0.record.format) }
            .map { ($0.width, (format: $0.record.format, bytes: $0.record.bytes, reached: true)) }, uniquingKeysWith: { a, _ in a })
        for index in encoded.indices where !dropped.contains(index) && pair.contains(encoded[index].spec.format) {
            let variant = encoded[index]
            let other = encoded.indices.first { $0 != index && !dropped.contains($0) && encoded[$0].spec.width == variant.spec.width
                && pair.contains(encoded[$0].spec.format) }
                .map { (format: encoded[$0].spec.format, bytes: encoded[$0].bytes.count, reached: reached(encoded[$0])) }
                ?? storedPair[variant.spec.width]
            guard let other else { continue }
            let (jpeg, png) = variant.spec.format == .jpeg
                ? ((bytes: variant.bytes.count, reached: reached(variant)), other.bytes)
                : ((bytes: other.bytes, reached: other.reached), variant.bytes.count)
            if (jpeg.reached && jpeg.bytes < png) != (variant.spec.format == .jpeg) { dropped.insert(index) }
        }
        return dropped.subtracting(unmade)
    }

    /// How good a variant is, for comparing formats: its search's score, up to the target (all that
    /// reach the target are equally good); anything not searched counts as reaching it.
    private static func level(_ made: VariantSpec.Made, target: SSIMScore?) -> Int {
        guard let score = made.score else { return Int.max }
        return min(score.tenThousandths, target?.tenThousandths ?? Int.max)
    }

    // MARK: Assembling

    /// `url` names the files when the record's own URL (the first fetched under this key) cannot be read.
    nonisolated func image(_ record: OriginalRecord, url: ImageSource, _ made: MadeVariants, origin: ResolutionOrigin, credits: Credits) -> ResolvedImage {
        let source = SourceInfo(format: record.format, width: record.width, height: record.height, pages: record.pages)
        let formats = record.format == .svg ? [.svg] : plan.outputFormats(for: source, request: VariantRequest(widths: [], formats: OutputFormat.allCases))
        let ordered = made.variants.sorted {
            let a = formats.firstIndex(of: $0.format) ?? 0, b = formats.firstIndex(of: $1.format) ?? 0
            return a != b ? a < b : $0.width < $1.width
        }
        return ResolvedImage(key: record.key, url: ImageSource(serialized: record.url) ?? url,
                             source: source, originalBlob: record.blob, originalBytes: record.bytes, variants: ordered,
                             origin: origin, encoded: made.encoded, credits: credits, placeholder: made.placeholder)
    }

    /// SVG is copied through unmodified (never rasterised): its one "variant" is the original.
    nonisolated func svgCopy(_ record: OriginalRecord) -> StoredVariant {
        let spec = VariantSpec(width: record.width, format: .svg, quality: 0, effort: 0, animated: false, keepMetadata: [])
        return StoredVariant(spec: spec, key: spec.key(original: record.blob), blob: record.blob, format: .svg,
                             width: record.width, height: record.height, bytes: record.bytes)
    }
}

extension StoredVariant {
    init(spec: VariantSpec, record: VariantRecord) {
        self.init(spec: spec, key: record.key, blob: record.blob!, format: record.format,
                  width: record.width, height: record.height, bytes: record.bytes,
                  made: VariantSpec.Made(recorded: record.spec, of: spec))
    }
}
