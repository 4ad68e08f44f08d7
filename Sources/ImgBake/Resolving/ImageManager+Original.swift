import Vips

extension ImageManager {
    /// A remote image is downloaded (or found in the cache); a local one is read from the site.
    /// `revalidate`: a cached remote original is asked about again however fresh it looks.
    nonisolated func loadOriginal(_ source: ImageSource, key: OriginalKey, force: Bool, revalidate: Bool = false) async -> OriginalOutcome {
        switch source {
        case .remote(let url): await loadRemote(url, key: key, force: force, revalidate: revalidate)
        case .local(let path): await loadLocal(path, key: key, force: force)
        }
    }

    /// Cache query, freshness and revalidation, failure memory, download, store.
    nonisolated func loadRemote(_ url: RemoteURL, key: OriginalKey, force: Bool, revalidate: Bool = false) async -> OriginalOutcome {
        var notes: [String] = []
        var record: OriginalRecord?
        if !force {
            do { record = try await cache.original(key) } catch {
                notes.append("cache index unreadable (\(error)); fetching")
            }
            if record == nil { record = await remoteOriginal(key) }
        }
        if let record { return await cached(record, url: url, key: key, revalidate: revalidate, notes: notes) }

        if fetch.isOffline {
            let why = force ? "the cached copy is damaged" : "not in the cache"
            return .failed(ImageFailure(reason: "\(why) (\(fetch.policy == .frozen ? "--frozen" : "--offline"): no network)", kind: .offlineMiss))
        }
        if !fetch.retryFailed, !force, let remembered = await cache.failure(key),
           now() - remembered.failedAt < Double(fetch.failureTTL.components.seconds) {
            let when = Self.describeAge(now() - remembered.failedAt)
            return .failed(ImageFailure(reason: "failed before (\(remembered.reason), \(when) ago); use --retry-failed", kind: .remembered))
        }
        switch await downloader.download(url, revalidating: nil) {
        case .fetched(let bytes, let validators):
            return await store(bytes, validators: validators, url: .remote(url), key: key, notes: notes)
        case .notModified:
            return .failed(ImageFailure(reason: "unexpected 304 to an unconditional request", kind: .fetch(.final)))
        case .failed(let failure):
            return await fail(failure, url: .remote(url), key: key)
        }
    }

    /// A cached original: used while fresh (or with no network), else revalidated; a revalidation that
    /// fails for a passing reason keeps the cached copy (stale).
    private nonisolated func cached(_ record: OriginalRecord, url: RemoteURL, key: OriginalKey, revalidate: Bool,
                                    notes: [String]) async -> OriginalOutcome {
        var notes = notes
        let credits = await cache.credits(of: record.blob) ?? Credits()
        let fresh = Freshness.isFresh(record, now: now(), defaultTTL: fetch.ttl)
        if fetch.isOffline || (fresh && fetch.policy != .refresh && !revalidate) {
            return .available(record, origin: .cached, credits: credits, notes: notes)
        }
        switch await downloader.download(url, revalidating: record.validators) {
        case .notModified(let validators):
            var refreshed = record
            refreshed.validators = merged(record.validators, validators)
            refreshed.fetchedAt = now()
            await cache.revalidated(refreshed, now: now())
            writeBack(refreshed, credits: credits, downloaded: false)
            return .available(refreshed, origin: .revalidated, credits: credits, notes: notes)
        case .fetched(let bytes, let validators):
            return await store(bytes, validators: validators, url: .remote(url), key: key, notes: notes)
        case .failed(let failure) where failure.kind == .transient || failure.kind == .unreachable:
            notes.append("revalidation failed (\(failure.reason)); using the cached copy")
            return .available(record, origin: .stale, credits: credits, notes: notes)
        case .failed(let failure):
            return await fail(failure, url: .remote(url), key: key)
        }
    }

    /// After a download: sniff the format, read the header (pixel and frame budgets, credits), store
    /// the blob and the index rows.
    /// `blob`: the bytes' id when the caller has already hashed them.
    nonisolated func store(_ bytes: [UInt8], validators: Validators, url: ImageSource, key: OriginalKey, notes: [String],
                           origin: ResolutionOrigin = .downloaded, blob known: BlobID? = nil) async -> OriginalOutcome {
        guard let format = ImageFormat.sniff(bytes) else {
            let got = validators.contentType.map { "Content-Type \($0)" } ?? "no Content-Type"
            let what = bytes.isEmpty ? "an empty response" : "\(got), starts with \(Self.preview(bytes))"
            return await fail(FetchFailure("not an image (\(what))", kind: .permanent), url: url, key: key)
        }
        let blob = known ?? BlobID(of: bytes)
        do {
            let inspection: Inspection
            if format == .svg {
                let size = SVGSize.parse(bytes)
                inspection = Inspection(info: SourceInfo(format: .svg, width: size?.width ?? 0, height: size?.height ?? 0, pages: 1),
                                        credits: Credits())
            } else if let known = await knownInspection(for: blob) {
                inspection = known
            } else {
                inspection = try await transformer.inspect(ImageBuffer(bytes), format: format)
                await remember(inspection, for: blob)
            }
            let info = inspection.info
            let record = OriginalRecord(key: key, url: url.serialized, blob: blob, format: format, width: info.width,
                                        height: info.height, pages: info.pages, bytes: bytes.count,
                                        validators: validators, fetchedAt: now())
            await cache.storeOriginal(bytes, as: record, credits: inspection.credits, now: now())
            writeBack(record, credits: inspection.credits)
            return .available(record, origin: origin, credits: inspection.credits, notes: notes)
        } catch let error as TransformError {
            return await fail(FetchFailure(error.description, kind: .permanent), url: url, key: key, transform: true)
        } catch {
            return .failed(ImageFailure(reason: "cannot read the image (\(error))", kind: .fetch(.final)))
        }
    }

    nonisolated func fail(_ failure: FetchFailure, url: ImageSource, key: OriginalKey, transform: Bool = false) async -> OriginalOutcome {
        // A local file is looked at again every build (a fix changes its stamp): no failure memory.
        if failure.kind == .permanent, case .remote = url {
            let record = FailureRecord(key: key, url: url.serialized, reason: failure.reason, failedAt: now())
            await cache.rememberFailure(record)
        }
        return .failed(ImageFailure(reason: failure.reason, kind: transform ? .transform : .fetch(failure.kind), host: failure.host))
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
