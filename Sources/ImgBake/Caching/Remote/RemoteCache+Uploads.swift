/// What the remote holds in an image's pack, as far as this build knows (from its read, or its own
/// write): which variants and placeholders, not their records, which are in the local cache. Kept for
/// every image a build looks up, so it is small.
struct PackContents: Sendable, Equatable {
    var originalBlob: BlobID
    var hasOriginal: Bool
    var variants: Set<VariantKey>
    var placeholders: Set<String>

    init(originalBlob: BlobID, hasOriginal: Bool, variants: Set<VariantKey>, placeholders: Set<String>) {
        self.originalBlob = originalBlob
        self.hasOriginal = hasOriginal
        self.variants = variants
        self.placeholders = placeholders
    }

    init(_ pack: Pack) {
        self.init(originalBlob: pack.originalBlob, hasOriginal: pack.original != nil, variants: Set(pack.variants.keys),
                  placeholders: Set(pack.placeholders.keys))
    }
}

/// What this build made for one image and has yet to write into its pack.
struct PackDraft: Sendable {
    var originalBlob: BlobID
    var original: (record: OriginalRecord, credits: Credits)?
    var variants: [VariantKey: VariantRecord] = [:]
    var placeholders: [String: String] = [:]
    /// This build has the original's bytes from its origin: they go up unless the remote has them.
    var uploadOriginal = false
    /// Something new since the last write of this pack.
    var dirty = false
    /// Written again although nothing is new: it is older than `RemoteCache.refreshAge`.
    var refresh = false
    /// Waiting in the queue or being written (one write at a time per pack: a later write has more).
    var scheduled = false

    init(originalBlob: BlobID) { self.originalBlob = originalBlob }
}

/// Packs known and being written, by key.
struct PackBook: Sendable {
    enum Known: Sendable {
        case absent
        case holds(PackContents)
    }

    var remote: [PackKey: Known] = [:]
    var drafts: [PackKey: PackDraft] = [:]
    /// Originals' blobs found missing (or bad) in the remote: uploaded whatever their pack says.
    var missingBlobs: Set<BlobID> = []
}

/// Packs waiting, workers running, and who waits for the queue to empty.
struct UploadQueue: Sendable {
    var jobs: [PackKey] = []
    var workers = 0
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// Packs not written because writing was off by the time their turn came.
    var dropped = 0
}

extension RemoteCache {
    // MARK: What the build made

    /// An original this build has: downloaded (its record and bytes go up with its pack) or
    /// revalidated (its new fetch time goes up only with a pack written anyway: a 304 is not worth a
    /// pack's bytes). A file of the site has no original in its pack: every machine has it.
    public func noteOriginal(_ record: OriginalRecord, credits: Credits, downloaded: Bool) {
        guard isWritable, !record.key.isSiteFile else { return }
        draft(for: record) { draft in
            draft.original = (record, credits)
            if downloaded {
                draft.uploadOriginal = record.format != .svg
                draft.dirty = true
            }
        }
    }

    /// Variants (and a placeholder) this build made of `record`.
    public func noteVariants(_ rows: [VariantRecord], placeholder: (kind: String, value: String)?, of record: OriginalRecord) {
        guard isWritable, !rows.isEmpty || placeholder != nil else { return }
        draft(for: record) { draft in
            for row in rows { draft.variants[row.key] = row }
            if let placeholder { draft.placeholders[placeholder.kind] = placeholder.value }
            draft.dirty = true
        }
    }

    /// A set of variants of `record` is done: its pack goes up (in the background) if anything is new.
    /// An image asked for with other variants later in the build gets its pack written again, with both.
    public func imageDone(_ record: OriginalRecord, credits: Credits) {
        guard isWritable else { return }
        let key = PackKey.of(record)
        let start = book.withLock { book -> Bool in
            guard var draft = book.drafts[key], draft.dirty, draft.originalBlob == record.blob else { return false }
            if case .original = key, draft.original == nil { draft.original = (record, credits) }
            defer { book.drafts[key] = draft }
            guard !draft.scheduled else { return false }
            draft.scheduled = true
            return true
        }
        if start { enqueue(key) }
    }

    /// Writes the pack of `key` again as the remote has it (it is old, and in use).
    func refresh(_ key: PackKey) {
        let start = book.withLock { book -> Bool in
            guard case .holds(let held)? = book.remote[key] else { return false }
            var draft = book.drafts[key] ?? PackDraft(originalBlob: held.originalBlob)
            guard draft.originalBlob == held.originalBlob else { return false }
            draft.refresh = true
            draft.dirty = true
            defer { book.drafts[key] = draft }
            guard !draft.scheduled else { return false }
            draft.scheduled = true
            return true
        }
        if start { enqueue(key) }
    }

    private func draft(for record: OriginalRecord, _ change: (inout PackDraft) -> Void) {
        let key = PackKey.of(record)
        book.withLock { book in
            var draft = book.drafts[key] ?? PackDraft(originalBlob: record.blob)
            if draft.originalBlob != record.blob {
                // The image changed: what was drafted for its old bytes is of no use in its pack.
                let scheduled = draft.scheduled
                draft = PackDraft(originalBlob: record.blob)
                draft.scheduled = scheduled
            }
            change(&draft)
            book.drafts[key] = draft
        }
    }

    // MARK: The queue

    private func enqueue(_ key: PackKey) {
        let startWorker = queue.withLock { queue in
            queue.jobs.append(key)
            guard queue.workers < store.settings.uploads else { return false }
            queue.workers += 1
            return true
        }
        if startWorker { Task { await self.work() } }
    }

    /// Returns once every queued upload has run (or was dropped because writing stopped). Bounded:
    /// each request has a timeout, and after a few failures in a row the rest are dropped.
    public func finishUploads() async {
        // A marker asked for ahead (`askLayoutAhead`) by a build that then needed nothing from the
        // remote: its answer, counted and judged, before anyone reads the counters or the warnings.
        await layoutAskedFor()
        await withCheckedContinuation { continuation in
            let done = queue.withLock { queue in
                if queue.workers == 0 && queue.jobs.isEmpty { return true }
                queue.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func work() async {
        while let key = nextJob() {
            if isWritable { await write(key) } else {
                queue.withLock { $0.dropped += 1 }
                book.withLock { $0.drafts[key]?.scheduled = false }
            }
        }
    }

    /// The next job, or nil after this worker has signed off (atomically with finding the queue empty).
    private func nextJob() -> PackKey? {
        let (job, waiters) = queue.withLock { queue -> (PackKey?, [CheckedContinuation<Void, Never>]) in
            if !queue.jobs.isEmpty { return (queue.jobs.removeFirst(), []) }
            queue.workers -= 1
            guard queue.workers == 0 else { return (nil, []) }
            defer { queue.waiters = [] }
            return (nil, queue.waiters)
        }
        for waiter in waiters { waiter.resume() }
        return job
    }

    /// After a write: again if something new came in meanwhile, else done.
    private func finish(_ key: PackKey) {
        let again = book.withLock { book -> Bool in
            guard book.drafts[key]?.dirty == true else {
                book.drafts[key]?.scheduled = false
                return false
            }
            return true
        }
        if again { queue.withLock { $0.jobs.append(key) } }
    }

    // MARK: Writing a pack

    /// Merges what the remote holds with what this build made, then writes the original's bytes (if
    /// this build downloaded them and the remote lacks them) and the pack: at most two PUTs, no HEAD
    /// (content-addressed PUTs are idempotent, and a pack is replaced whole: last writer wins, which
    /// is never wrong since readers verify everything).
    private func write(_ key: PackKey) async {
        // Every way out clears what was taken (a job that returned early with its draft still new would
        // be queued again at once, for ever).
        defer { finish(key) }
        // What is taken moves out of the draft: a pack written holds it, and the draft stays small.
        guard let draft = book.withLock({ book -> PackDraft? in
            guard let draft = book.drafts[key] else { return nil }
            var left = PackDraft(originalBlob: draft.originalBlob)
            left.scheduled = draft.scheduled
            book.drafts[key] = left
            return draft
        }) else { return }
        guard await layout() != .unusable else { return }
        if let marker = markerWrite.withLock({ $0 }) { await marker.value }
        guard isWritable else { return }
        // What the remote holds: known from this build's read or write, else asked now (a --shard build
        // whose local cache had the image), so that nothing another machine put there is lost.
        if book.withLock({ $0.remote[key] }) == nil { _ = await localise(key) }
        let known = book.withLock { $0.remote[key] } ?? .absent
        var base: PackContents?
        if case .holds(let held) = known, held.originalBlob == draft.originalBlob { base = held }

        let new = base.map { base in
            draft.variants.keys.contains { !base.variants.contains($0) } || draft.placeholders.keys.contains { !base.placeholders.contains($0) }
                || (draft.original != nil && !base.hasOriginal)
        } ?? true
        guard new || draft.refresh else {
            state.withLock { $0.counters.alreadyThere += 1 }
            return
        }
        var original = draft.original
        if original == nil, base?.hasOriginal == true, case .original(let originalKey) = key,
           let record = try? await local.original(originalKey), record.blob == draft.originalBlob {
            original = (record, await local.credits(of: record.blob) ?? Credits())
        }
        if case .original = key, original == nil { return }

        let lost = book.withLock { $0.missingBlobs.contains(draft.originalBlob) }
        if draft.uploadOriginal, base == nil || lost {
            // Its bytes before the pack that names them.
            guard case .found(let bytes) = await local.readBlob(draft.originalBlob),
                  await put(RemotePath.blob(draft.originalBlob), bytes, contentType: "application/octet-stream",
                            payloadHash: draft.originalBlob.hex) else { return }
            book.withLock { _ = $0.missingBlobs.remove(draft.originalBlob) }
        }

        let (kept, placeholders, blobsRead, shrinks) = await contents(base: base, draft: draft)
        var blobs = blobsRead
        // A refresh never makes a pack smaller than the one it replaces.
        if draft.refresh && !new && shrinks { return }
        if let original, original.record.format == .svg {
            guard case .found(let bytes) = await local.readBlob(original.record.blob) else { return }
            blobs.append((original.record.blob, bytes))
        }
        let bytes = Pack.encode(key: key, originalBlob: draft.originalBlob, original: original, variants: Array(kept.values),
                                placeholders: placeholders, blobs: blobs, written: clock())
        guard await put(RemotePath.pack(key), bytes, contentType: "application/octet-stream") else { return }
        book.withLock {
            $0.remote[key] = .holds(PackContents(originalBlob: draft.originalBlob, hasOriginal: original != nil,
                                                 variants: Set(kept.keys), placeholders: Set(placeholders.keys)))
        }
    }

    /// What the remote had, from the local cache (a read keeps a pack there), then what this build
    /// made, with the variants' bytes; `shrinks` when some of what the remote had is not here.
    private func contents(base: PackContents?, draft: PackDraft) async
        -> (variants: [VariantKey: VariantRecord], placeholders: [String: String], blobs: [(BlobID, [UInt8])], shrinks: Bool) {
        var variants: [VariantKey: VariantRecord] = [:]
        var placeholders: [String: String] = [:]
        if let base {
            variants = (try? await local.storedVariants(Array(base.variants), placeholder: nil, of: base.originalBlob))?.variants ?? [:]
            for kind in base.placeholders {
                if let value = (try? await local.storedVariants([], placeholder: kind, of: base.originalBlob))?.placeholder {
                    placeholders[kind] = value
                }
            }
        }
        var shrinks = base.map { variants.count < $0.variants.count || placeholders.count < $0.placeholders.count } ?? false
        variants.merge(draft.variants) { _, made in made }
        placeholders.merge(draft.placeholders) { _, made in made }
        var blobs: [(BlobID, [UInt8])] = []
        var kept: [VariantKey: VariantRecord] = [:]
        for row in variants.values.sorted(by: { $0.key.hex < $1.key.hex }) {
            if let blob = row.blob {
                guard case .found(let bytes) = await local.readBlob(blob) else { continue }
                blobs.append((blob, bytes))
            }
            kept[row.key] = row
        }
        shrinks = shrinks || kept.count < variants.count
        return (kept, placeholders, blobs, shrinks)
    }

    @discardableResult
    func put(_ path: String, _ bytes: [UInt8], contentType: String = "application/json", payloadHash: String? = nil) async -> Bool {
        guard isWritable else { return false }
        let (answer, elapsed, retries) = await store.put(path, bytes, contentType: contentType, payloadHash: payloadHash)
        account(answer, elapsed, retries, writing: true, sent: bytes.count)
        return answer == .stored
    }
}
