import Vips

extension ImageManager {
    /// Steps 1–5 of the data flow for one key.
    nonisolated func load(_ url: RemoteURL, key: OriginalKey) async -> Resolution {
        var notes: [String] = []
        let record: OriginalRecord?
        do { record = try await cache.perform { index, _ in try index.original(key) } } catch {
            notes.append("cache index unreadable (\(error)); fetching")
            record = nil
        }

        if let record {
            let fresh = Freshness.isFresh(record, now: now(), defaultTTL: fetch.ttl)
            if fetch.isOffline || (fresh && fetch.policy != .refresh) {
                if let image = await fromCache(record, origin: .cached, notes: &notes) { return .resolved(image, notes: notes) }
            } else {
                switch await downloader.download(url, revalidating: record.validators) {
                case .notModified(let validators):
                    var refreshed = record
                    refreshed.validators = merged(record.validators, validators)
                    refreshed.fetchedAt = now()
                    try? await cache.perform { [refreshed, now] index, _ in try index.putOriginal(refreshed, now: now()) }
                    if let image = await fromCache(refreshed, origin: .revalidated, notes: &notes) { return .resolved(image, notes: notes) }
                case .fetched(let bytes, let validators):
                    return await store(bytes, validators: validators, url: url, key: key, notes: notes)
                case .failed(let failure) where failure.kind == .transient:
                    if let image = await fromCache(record, origin: .stale, notes: &notes) {
                        notes.append("revalidation failed (\(failure.reason)); using the cached copy")
                        return .resolved(image, notes: notes)
                    }
                case .failed(let failure):
                    return await fail(failure, url: url, key: key)
                }
            }
        }

        if fetch.isOffline {
            return .failed(ImageFailure(reason: "not in the cache (\(fetch.policy == .frozen ? "--frozen" : "--offline"): no network)", kind: .offlineMiss))
        }
        if !fetch.retryFailed, let remembered = try? await cache.perform({ index, _ in try index.failure(key) }),
           now() - remembered.failedAt < Double(fetch.failureTTL.components.seconds) {
            let when = Self.describeAge(now() - remembered.failedAt)
            return .failed(ImageFailure(reason: "failed before (\(remembered.reason), \(when) ago); use --retry-failed", kind: .remembered))
        }
        switch await downloader.download(url) {
        case .fetched(let bytes, let validators):
            return await store(bytes, validators: validators, url: url, key: key, notes: notes)
        case .notModified:
            return .failed(ImageFailure(reason: "unexpected 304 to an unconditional request", kind: .fetch(.final)))
        case .failed(let failure):
            return await fail(failure, url: url, key: key)
        }
    }

    /// Step 1–2: all variants from the index (no decode, no network); missing ones are made from the
    /// cached original. Nil when the original itself is gone or corrupt (the caller downloads).
    nonisolated func fromCache(_ record: OriginalRecord, origin: ResolutionOrigin, notes: inout [String]) async -> ResolvedImage? {
        let source = SourceInfo(format: record.format, width: record.width, height: record.height, pages: record.pages)
        let specs = plan.specs(for: source)
        if record.format == .svg {
            guard (try? await cache.perform({ _, blobs in blobs.exists(record.blob) })) == true else { return nil }
            return svgImage(record, origin: origin)
        }
        let keys = specs.map { $0.key(original: record.blob) }
        let stored: [VariantKey: VariantRecord] = (try? await cache.perform { index, blobs in
            // A row whose blob file vanished is a miss.
            try index.variants(keys).filter { blobs.size($0.value.blob) == $0.value.bytes }
        }) ?? [:]
        let missing = specs.filter { stored[$0.key(original: record.blob)] == nil }
        var variants = specs.compactMap { spec -> StoredVariant? in
            stored[spec.key(original: record.blob)].map { StoredVariant(spec: spec, record: $0) }
        }
        var encoded = 0
        if !missing.isEmpty {
            let read = try? await cache.perform { _, blobs in blobs.read(record.blob) }
            guard case .found(let bytes)? = read else {
                if case .corrupt? = read { notes.append("cache: original \(record.blob.hex.prefix(12)) was corrupt; removed and fetched again") }
                try? await cache.perform { index, _ in try index.removeOriginal(record.key) }
                return nil
            }
            guard let made = try? await encodeAndStore(bytes, format: record.format, blob: record.blob, only: missing) else {
                return nil
            }
            variants += made
            encoded = made.count
        }
        return image(record, source: source, variants: variants, origin: origin, encoded: encoded)
    }

    /// Step 5 after a download: sniff, store the original, make and store every variant.
    nonisolated func store(_ bytes: [UInt8], validators: Validators, url: RemoteURL, key: OriginalKey, notes: [String]) async -> Resolution {
        guard let format = ImageFormat.sniff(bytes) else {
            let got = validators.contentType.map { "Content-Type \($0)" } ?? "no Content-Type"
            let what = bytes.isEmpty ? "an empty response" : "\(got), starts with \(Self.preview(bytes))"
            return await fail(FetchFailure("not an image (\(what))", kind: .permanent), url: url, key: key)
        }
        let blob = BlobID(of: bytes)
        do {
            let source: SourceInfo
            var variants: [StoredVariant] = []
            if format == .svg {
                let size = SVGSize.parse(bytes)
                source = SourceInfo(format: .svg, width: size?.width ?? 0, height: size?.height ?? 0, pages: 1)
                _ = try await cache.perform { _, blobs in try blobs.write(bytes) }
            } else {
                if let known = await header(for: blob) {
                    source = known
                } else {
                    source = try await transformer.inspect(ImageBuffer(bytes), format: format)
                    await remember(source, for: blob)
                }
                _ = try await cache.perform { _, blobs in try blobs.write(bytes) }
                variants = try await encodeAndStore(bytes, format: format, blob: blob, only: plan.specs(for: source))
            }
            let record = OriginalRecord(key: key, url: url.string, blob: blob, format: format, width: source.width,
                                        height: source.height, pages: source.pages, bytes: bytes.count,
                                        validators: validators, fetchedAt: now())
            try await cache.perform { [now] index, _ in
                try index.putOriginal(record, now: now())
                try index.removeFailure(key)
            }
            let image = format == .svg ? svgImage(record, origin: .downloaded)
                : image(record, source: source, variants: variants, origin: .downloaded, encoded: variants.count)
            return .resolved(image, notes: notes)
        } catch let error as TransformError {
            return await fail(FetchFailure(error.description, kind: .permanent), url: url, key: key, transform: true)
        } catch {
            return .failed(ImageFailure(reason: "cannot store in the cache (\(error))", kind: .fetch(.final)))
        }
    }

    /// Encodes `specs` from the original bytes and stores the variant blobs and rows.
    nonisolated func encodeAndStore(_ bytes: [UInt8], format: ImageFormat, blob: BlobID, only specs: [VariantSpec]) async throws -> [StoredVariant] {
        let wanted = specs
        let (_, encoded) = try await transformer.variants(of: ImageBuffer(bytes), format: format) { _ in wanted }
        let records = try await cache.perform { index, blobs in
            let records = try encoded.map { variant in
                VariantRecord(key: variant.spec.key(original: blob), originalBlob: blob, spec: variant.spec.canonical,
                              blob: try blobs.write(variant.bytes), format: variant.spec.format,
                              width: variant.width, height: variant.height, bytes: variant.bytes.count)
            }
            return records
        }
        try await cache.perform { [now] index, _ in try index.putVariants(records, now: now()) }
        return zip(encoded, records).map { StoredVariant(spec: $0.spec, record: $1) }
    }

    nonisolated func fail(_ failure: FetchFailure, url: RemoteURL, key: OriginalKey, transform: Bool = false) async -> Resolution {
        if failure.kind == .permanent {
            let record = FailureRecord(key: key, url: url.string, reason: failure.reason, failedAt: now())
            try? await cache.perform { index, _ in try index.putFailure(record) }
        }
        return .failed(ImageFailure(reason: failure.reason, kind: transform ? .transform : .fetch(failure.kind)))
    }

    // MARK: Assembling

    private nonisolated func image(_ record: OriginalRecord, source: SourceInfo, variants: [StoredVariant],
                                   origin: ResolutionOrigin, encoded: Int) -> ResolvedImage {
        let formats = plan.outputFormats(for: source)
        let ordered = variants.sorted {
            let a = formats.firstIndex(of: $0.format) ?? 0, b = formats.firstIndex(of: $1.format) ?? 0
            return a != b ? a < b : $0.width < $1.width
        }
        return ResolvedImage(key: record.key, url: RemoteURL.resolve(record.url) ?? RemoteURL.resolve("https://invalid/")!,
                             source: source, originalBlob: record.blob, originalBytes: record.bytes, variants: ordered,
                             formats: formats, origin: origin, encoded: encoded)
    }

    /// SVG is copied through unmodified (never rasterised): its one "variant" is the original.
    private nonisolated func svgImage(_ record: OriginalRecord, origin: ResolutionOrigin) -> ResolvedImage {
        let spec = VariantSpec(width: 0, format: .svg, quality: 0, effort: 0, animated: false, keepMetadata: [])
        let copy = StoredVariant(spec: spec, key: spec.key(original: record.blob), blob: record.blob, format: .svg,
                                 width: record.width, height: record.height, bytes: record.bytes)
        return ResolvedImage(key: record.key, url: RemoteURL.resolve(record.url) ?? RemoteURL.resolve("https://invalid/")!,
                             source: SourceInfo(format: .svg, width: record.width, height: record.height, pages: 1),
                             originalBlob: record.blob, originalBytes: record.bytes, variants: [copy], formats: [.svg],
                             origin: origin, encoded: 0)
    }

    private nonisolated func merged(_ old: Validators, _ new: Validators) -> Validators {
        Validators(etag: new.etag ?? old.etag, lastModified: new.lastModified ?? old.lastModified,
                   cacheControl: new.cacheControl ?? old.cacheControl, expires: new.expires ?? old.expires,
                   contentType: old.contentType)
    }

    static func describeAge(_ seconds: Double) -> String {
        let s = Int(seconds)
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        if s < 172_800 { return "\(s / 3600) h" }
        return "\(s / 86400) days"
    }

    /// The first bytes of a non-image body, printable, for the failure message.
    static func preview(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(24), as: UTF8.self)
            .map { $0.isASCII && !$0.isNewline && ($0.asciiValue ?? 0) >= 0x20 ? String($0) : "." }.joined()
        return "\"\(text)\(bytes.count > 24 ? "…" : "")\""
    }
}

extension StoredVariant {
    init(spec: VariantSpec, record: VariantRecord) {
        self.init(spec: spec, key: record.key, blob: record.blob, format: record.format,
                  width: record.width, height: record.height, bytes: record.bytes)
    }
}
