/// What a build made, to be written back to the remote.
public enum RemoteUpload: Sendable {
    /// An original: its blob, then its record.
    case original(OriginalRecord, Credits)
    /// Variants of one original (each blob, then its record) and its placeholder.
    case variants([VariantRecord], of: BlobID, placeholder: (kind: String, value: String)?)
}

/// Jobs waiting, workers running, and who waits for the queue to empty.
struct UploadQueue: Sendable {
    var jobs: [RemoteUpload] = []
    var workers = 0
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// Jobs not done because writing was off by the time their turn came.
    var dropped = 0
}

extension RemoteCache {
    /// Queues `job`; it runs in the background, at most `settings.uploads` at a time. Does nothing
    /// when the remote is read only or has stopped taking writes.
    public func upload(_ job: RemoteUpload) {
        guard state.withLock({ $0.writesOff != .readOnly }) else { return }
        let startWorker = queue.withLock { queue in
            queue.jobs.append(job)
            guard queue.workers < store.settings.uploads else { return false }
            queue.workers += 1
            return true
        }
        if startWorker { Task { await self.work() } }
    }

    /// Returns once every queued upload has run (or was dropped because writing stopped). Bounded:
    /// each request has a timeout, and after a few failures in a row the rest are dropped.
    public func finishUploads() async {
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
        while let job = nextJob() {
            if isWritable { await run(job) } else { queue.withLock { $0.dropped += 1 } }
        }
    }

    /// The next job, or nil after this worker has signed off (atomically with finding the queue empty).
    private func nextJob() -> RemoteUpload? {
        let (job, waiters) = queue.withLock { queue -> (RemoteUpload?, [CheckedContinuation<Void, Never>]) in
            if !queue.jobs.isEmpty { return (queue.jobs.removeFirst(), []) }
            queue.workers -= 1
            guard queue.workers == 0 else { return (nil, []) }
            defer { queue.waiters = [] }
            return (nil, queue.waiters)
        }
        for waiter in waiters { waiter.resume() }
        return job
    }

    private func run(_ job: RemoteUpload) async {
        switch job {
        case .original(let record, let credits):
            guard await ensureBlob(record.blob) else { return }
            await put(RemotePath.original(record.key), RemoteJSON.encode(RemoteOriginalEntry(record, credits: credits)))
        case .variants(let rows, let original, let placeholder):
            for row in rows {
                if let blob = row.blob { guard await ensureBlob(blob) else { continue } }
                await put(RemotePath.variant(row.key), RemoteJSON.encode(RemoteVariantEntry(row)))
            }
            if let placeholder {
                let entry = RemotePlaceholderEntry(original: original.hex, kind: placeholder.kind, value: placeholder.value)
                await put(RemotePath.placeholder(placeholder.kind, of: original), RemoteJSON.encode(entry))
            }
        }
    }

    /// Makes sure the remote has blob `id`: known this build, or seen with HEAD, or written from the
    /// local cache. False when it could not be (the record that names it is then not written).
    private func ensureBlob(_ id: BlobID) async -> Bool {
        let (known, bad) = state.withLock { ($0.present.contains(id), $0.badBlobs.contains(id)) }
        if known { return true }
        if !bad {
            let (answer, elapsed) = await store.head(RemotePath.blob(id))
            account(answer, elapsed, writing: true)
            if case .found = answer {
                state.withLock { $0.present.insert(id); $0.counters.alreadyThere += 1 }
                return true
            }
            guard answer == .absent, isWritable else { return false }
        }
        guard case .found(let bytes) = await local.readBlob(id) else { return false }
        // Read back verified against its id, which is also the payload hash S3 wants.
        guard await put(RemotePath.blob(id), bytes, contentType: "application/octet-stream", payloadHash: id.hex) else { return false }
        state.withLock { $0.present.insert(id); $0.badBlobs.remove(id) }
        return true
    }

    @discardableResult
    private func put(_ path: String, _ bytes: [UInt8], contentType: String = "application/json",
                     payloadHash: String? = nil) async -> Bool {
        guard isWritable else { return false }
        let (answer, elapsed) = await store.put(path, bytes, contentType: contentType, payloadHash: payloadHash)
        account(answer, elapsed, writing: true, sent: bytes.count)
        return answer == .stored
    }
}
