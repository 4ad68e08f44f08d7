import Vips

extension ImageManager {
    /// One variant set: the original, then its variants from the index, made from the original where
    /// missing. A damaged original blob is fetched again (reported).
    nonisolated func load(_ url: RemoteURL, _ key: ImageKey) async -> Resolution {
        guard case .available(let record, let origin, let credits, let notes) = await original(url, key.original) else {
            return await original(url, key.original).failure
        }
        switch await variantSet(record, request: key.request) {
        case .success(let made):
            return .resolved(image(record, url: url, made, origin: origin, credits: credits), notes: notes)
        case .failure(.originalDamaged(let why)):
            // Made again from a fresh download; the repair is reported with the image.
            let refetched = await refetchOriginal(url, key.original)
            guard case .available(let again, let origin, let credits, var notes) = refetched else { return refetched.failure }
            notes.append("cache: the original \(why); fetched again")
            switch await variantSet(again, request: key.request) {
            case .success(let made): return .resolved(image(again, url: url, made, origin: origin, credits: credits), notes: notes)
            case .failure(let failure): return failure.resolution
            }
        case .failure(let failure):
            return failure.resolution
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
        case store(any Error)

        var description: String {
            switch self {
            case .originalDamaged(let why): "the cached original \(why)"
            case .transform(let error): error.description
            case .store(let error): "cannot store in the cache (\(error))"
            }
        }

        var resolution: Resolution {
            if case .transform = self { return .failed(ImageFailure(reason: description, kind: .transform)) }
            return .failed(ImageFailure(reason: description, kind: .fetch(.final)))
        }
    }

    /// Steps 1 and 2 of the data flow: every variant from the index when all are there (no decode, no
    /// network); otherwise the missing ones from the cached original, in one decode.
    nonisolated func variantSet(_ record: OriginalRecord, request: VariantRequest) async -> Result<MadeVariants, VariantSetError> {
        let source = SourceInfo(format: record.format, width: record.width, height: record.height, pages: record.pages)
        if record.format == .svg {
            guard (try? await cache.perform({ _, blobs in blobs.exists(record.blob) })) == true else {
                return .failure(.originalDamaged("was missing"))
            }
            return .success(MadeVariants(variants: [svgCopy(record)], encoded: 0, placeholder: nil))
        }
        let specs = plan.specs(for: source, request: request)
        let keys = specs.map { $0.key(original: record.blob) }
        let kind = placeholder
        let (stored, storedPlaceholder): ([VariantKey: VariantRecord], String?) = (try? await cache.perform { index, blobs in
            // A row whose blob file vanished or changed size is a miss; a dropped variant has no blob.
            let rows = try index.variants(keys).filter { row in row.value.blob.map { blobs.size($0) == row.value.bytes } ?? true }
            return (rows, kind == .none ? nil : try index.placeholder(kind.rawValue, for: record.blob))
        }) ?? ([:], nil)
        let missing = specs.filter { stored[$0.key(original: record.blob)] == nil }
        let needsPlaceholder = kind != .none && storedPlaceholder == nil
        var records = specs.compactMap { stored[$0.key(original: record.blob)] }
        var encodedCount = 0
        var placeholderValue = storedPlaceholder

        if !missing.isEmpty || needsPlaceholder {
            let job = TransformJob(specs: missing, placeholder: needsPlaceholder ? kind : .none)
            let blobs = cache.blobs
            let output: TransformOutput
            do {
                output = try await transformer.transform(loading: {
                    switch blobs.read(record.blob) {
                    case .found(let bytes): return ImageBuffer(bytes)
                    case .corrupt: throw DamagedOriginal(why: "did not match its hash")
                    case .missing: throw DamagedOriginal(why: "was missing")
                    }
                }, format: record.format) { _ in job }
            } catch let damaged as DamagedOriginal {
                try? await cache.perform { index, _ in try index.removeOriginal(record.key) }
                return .failure(.originalDamaged(damaged.why))
            } catch {
                let failure = error as? TransformError ?? .undecodable("\(error)")
                if case .undecodable = failure { await forgetUndecodable(record, reason: failure.description) }
                return .failure(.transform(failure))
            }
            let made = Self.keepingOnlyWorthwhile(output.variants, besides: records, fallback: record.format)
            do {
                let rows = try await cache.perform { [now] index, blobs in
                    let rows = try made.map { variant, dropped in
                        VariantRecord(key: variant.spec.key(original: record.blob), originalBlob: record.blob,
                                      spec: variant.spec.canonical, blob: dropped ? nil : try blobs.write(variant.bytes),
                                      format: variant.spec.format, width: variant.width, height: variant.height,
                                      bytes: variant.bytes.count)
                    }
                    try index.putVariants(rows, now: now())
                    if let value = output.placeholder { try index.putPlaceholder(value, kind: kind.rawValue, for: record.blob) }
                    return rows
                }
                records += rows
            } catch {
                return .failure(.store(error))
            }
            encodedCount = made.count
            placeholderValue = output.placeholder ?? placeholderValue
        }
        let bySpec = Dictionary(records.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let variants = specs.compactMap { spec -> StoredVariant? in
            guard let row = bySpec[spec.key(original: record.blob)], row.blob != nil else { return nil }
            return StoredVariant(spec: spec, record: row)
        }
        return .success(MadeVariants(variants: variants, encoded: encodedCount, placeholder: placeholderValue))
    }

    /// An original whose header read but whose pixels do not decode is a permanent failure, like one
    /// refused from its header: its row and blob go (unless another row shares the blob) and the failure
    /// is remembered, so later builds neither keep it nor decode it again, and this build does not
    /// download it again for another variant set.
    nonisolated func forgetUndecodable(_ record: OriginalRecord, reason: String) async {
        // First, so that a variant set finding the blob gone (refetchOriginal) gets the failure.
        await markFailed(record.key, ImageFailure(reason: reason, kind: .transform))
        let failure = FailureRecord(key: record.key, url: record.url, reason: reason, failedAt: now())
        try? await cache.perform { index, blobs in
            try index.removeOriginal(record.key)
            try index.putFailure(failure)
            if try !index.entries().contains(where: { $0.blob == record.blob }) { blobs.remove(record.blob) }
        }
    }

    /// A modern-format variant larger than the fallback at the same width is worse in every way: it is
    /// recorded as dropped (so it is not encoded again) and left out of the markup.
    static func keepingOnlyWorthwhile(_ encoded: [EncodedVariant], besides stored: [VariantRecord],
                                      fallback: ImageFormat) -> [(EncodedVariant, dropped: Bool)] {
        var fallbackBytes: [Int: Int] = [:]
        for row in stored where row.format == fallback { fallbackBytes[row.width] = row.bytes }
        for variant in encoded where variant.spec.format == fallback { fallbackBytes[variant.width] = variant.bytes.count }
        return encoded.map { variant in
            guard variant.spec.format != fallback, let limit = fallbackBytes[variant.width] else { return (variant, false) }
            return (variant, variant.bytes.count > limit)
        }
    }

    // MARK: Assembling

    /// `url` names the files when the record's own URL (the first fetched under this key) cannot be read.
    nonisolated func image(_ record: OriginalRecord, url: RemoteURL, _ made: MadeVariants, origin: ResolutionOrigin, credits: Credits) -> ResolvedImage {
        let source = SourceInfo(format: record.format, width: record.width, height: record.height, pages: record.pages)
        let formats = record.format == .svg ? [.svg] : plan.outputFormats(for: source, request: VariantRequest(widths: [], formats: OutputFormat.allCases))
        let ordered = made.variants.sorted {
            let a = formats.firstIndex(of: $0.format) ?? 0, b = formats.firstIndex(of: $1.format) ?? 0
            return a != b ? a < b : $0.width < $1.width
        }
        return ResolvedImage(key: record.key, url: RemoteURL.resolve(record.url) ?? url,
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
                  width: record.width, height: record.height, bytes: record.bytes)
    }
}
