import Foundation
import Locking
import SQLite

/// The persistent cache: blobs and index under one folder. Its methods are the only way in — every
/// SQL statement lives in this folder — and each runs on the cache's own I/O threads, so a busy lock
/// held by another build never blocks Swift's cooperative threads.
///
///     <dir>/index.sqlite3   the index (WAL)
///     <dir>/blobs/ab/ab…    originals and variants by SHA-256
///
/// Like Hugo's file caches, lookups are get-or-create in shape: the manager asks (`original`,
/// `storedVariants`), makes what is missing, and hands it back (`storeOriginal`, `storeVariants`).
public final class ImageCache: Sendable {
    public let directory: String
    let blobs: BlobStore
    let index: CacheIndex
    private let io: WorkerPool
    /// Nil when the cache can be written; else why not, naming the folder (`cannot write <dir>: Read-only
    /// file system`).
    public let readOnly: String?
    private let overlay = Locked(CacheOverlay())
    /// Variant blobs this process stored or found whole: `checkBlob` reads each other one once.
    private let whole = Locked(Set<BlobID>())

    /// Threads for disk and SQLite work. SQLite writes are serialised by its lock anyway; two threads
    /// let a blob copy proceed while another call waits on the index.
    static let ioThreads = 2

    /// Opens (creating if needed) the cache in `directory`. A folder that cannot be written is opened
    /// read-only: it serves lookups, and what a build makes is kept in memory instead of stored.
    ///
    /// An index that cannot be written as it is opened (a full disk, a read-only file) makes the cache
    /// read-only the same way: the build goes on, and its warning names the file and the reason.
    public init(directory: String) throws {
        self.directory = directory
        var readOnly = Self.whyNotWritable(directory)
        blobs = BlobStore(root: directory + "/blobs")
        let indexPath = directory + "/index.sqlite3"
        do {
            index = try CacheIndex(path: indexPath, readOnly: readOnly != nil)
        } catch let error as SQLiteError where readOnly == nil {
            guard let failure = WriteError(error, path: indexPath) else { throw error }
            readOnly = failure.description
            // An index left empty by the failed attempt has no tables: an empty one in memory instead.
            index = try CacheIndex(path: (AtomicFile.size(of: indexPath) ?? 0) > 0 ? indexPath : ":memory:", readOnly: true)
        }
        self.readOnly = readOnly
        io = WorkerPool(threads: Self.ioThreads, name: "cache-io")
        if let readOnly { overlay.withLock { $0.reason = readOnly } }
    }

    private static func whyNotWritable(_ directory: String) -> String? {
        do { try AtomicFile.makeDirectory(directory) } catch { return error.description }
        return access(directory, W_OK) == 0 ? nil : WriteError(path: directory, errno: errno).description
    }

    /// Why the cache at `directory` could not be opened: a write error as it is, else what SQLite said.
    static func whyNotOpened(_ error: any Error, directory: String) -> String {
        if let error = error as? WriteError { return error.description }
        if let error = error as? SQLiteError, let failure = WriteError(error, path: directory + "/index.sqlite3") { return failure.description }
        return "cannot open the cache at \(directory): \(error)"
    }

    /// Why a write to the cache failed, naming the file once: a blob's write error, or what an SQLite
    /// error means for the index file (a full disk, a read-only file).
    private func whyNotStored(_ error: any Error) -> String {
        let indexPath = directory + "/index.sqlite3"
        if let error = error as? WriteError { return error.description }
        if let error = error as? SQLiteError {
            return (WriteError(error, path: indexPath) ?? WriteError(path: indexPath, reason: error.message)).description
        }
        return "cannot store in \(directory): \(error)"
    }

    /// Stops the I/O threads once the work queued so far is done, and folds the index's write-ahead log
    /// into its file.
    public func shutdown() async {
        if readOnly == nil { try? await run { index, _ in index.checkpoint() } }
        await io.shutdown()
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (CacheIndex, BlobStore) throws -> T) async throws -> T {
        try await io.run { [index, blobs] in try body(index, blobs) }
    }

    /// When the cache could not store what this build made: why (`cannot write <file>: <reason>`), and
    /// how many images were kept in memory instead. One warning's worth, for the end of the build.
    public var unstored: (reason: String, images: Int)? {
        overlay.withLock { state in state.reason.map { ($0, state.imagesKept) } }
    }

    /// False once the cache is read-only or a write to it failed: what a build makes is kept in memory.
    var canStore: Bool { overlay.withLock { $0.reason == nil } }

    /// Writes to disk unless the cache is read-only or a write failed before; on failure, `keep` puts
    /// what could not be stored in the overlay.
    func store(_ write: @escaping @Sendable (CacheIndex, BlobStore) throws -> Void,
                       else keep: @Sendable (inout CacheOverlay) -> Void) async {
        if overlay.withLock({ $0.reason == nil }) {
            do { return try await run(write) } catch {
                let reason = whyNotStored(error)
                overlay.withLock { if $0.reason == nil { $0.reason = reason } }
            }
        }
        overlay.withLock { keep(&$0) }
    }

    // MARK: Originals

    /// No build has used this cache yet: every image this one asks for will be a miss. (A cache that
    /// holds pages but no image belongs to a site without images, or whose images all failed: not that.)
    public func isUnused() async -> Bool {
        guard overlay.withLock({ $0.originals.isEmpty }) else { return false }
        return (try? await run { index, _ in try index.isUnused() }) ?? false
    }

    public func original(_ key: OriginalKey) async throws -> OriginalRecord? {
        if let kept = overlay.withLock({ $0.originals[key] }) { return kept }
        return try await run { index, _ in try index.original(key) }
    }

    /// Several originals at once (for freshness checks of unchanged pages).
    public func originals(_ keys: some Sequence<OriginalKey> & Sendable) async throws -> [OriginalKey: OriginalRecord] {
        let keys = Array(keys)
        let kept = overlay.withLock { $0.originals }
        return try await run { index, _ in
            var found: [OriginalKey: OriginalRecord] = [:]
            for key in keys { found[key] = try kept[key] ?? index.original(key) }
            return found
        }
    }

    public func credits(of blob: BlobID) async -> Credits? {
        if let kept = overlay.withLock({ $0.credits[blob] }) { return kept }
        return (try? await run { index, _ in try index.credits(blob) }) ?? nil
    }

    /// A downloaded original: its blob, its row, its credits; a remembered failure of its key is
    /// forgotten.
    public func storeOriginal(_ bytes: [UInt8], as record: OriginalRecord, credits: Credits, now: Double) async {
        await store({ index, blobs in
            try blobs.write(bytes, as: record.blob)
            try index.putOriginal(record, now: now)
            if !credits.isEmpty { try index.putCredits(credits, for: record.blob) }
            try index.removeFailure(record.key)
        }, else: { kept in
            kept.blobs[record.blob] = bytes
            kept.originals[record.key] = record
            kept.credits[record.blob] = credits
            kept.failures[record.key] = nil
            kept.imagesKept += 1
        })
    }

    /// An original's row (and credits) from the remote cache, without its bytes: they are fetched
    /// when a transform needs them (`storeBlob`), and a build that finds every variant never does.
    public func storeRemoteOriginal(_ record: OriginalRecord, credits: Credits, now: Double) async {
        await store({ index, _ in
            try index.putRemoteBlob(record.blob)
            try index.putOriginal(record, now: now)
            if !credits.isEmpty { try index.putCredits(credits, for: record.blob) }
        }, else: { kept in
            kept.originals[record.key] = record
            kept.credits[record.blob] = credits
        })
    }

    /// Bytes fetched from the remote cache, already checked against their id.
    public func storeBlob(_ bytes: [UInt8], as id: BlobID) async {
        await store({ _, blobs in try blobs.write(bytes, as: id) }, else: { $0.blobs[id] = bytes })
    }

    /// An original confirmed by a 304: new validators and fetch time.
    public func revalidated(_ record: OriginalRecord, now: Double) async {
        await store({ index, _ in try index.putOriginal(record, now: now) }, else: { $0.originals[record.key] = record })
    }

    /// Forgets an original whose blob turned out to be damaged, so it is fetched again.
    public func forgetOriginal(_ key: OriginalKey) async {
        overlay.withLock { _ = $0.originals.removeValue(forKey: key) }
        await store({ index, _ in try index.removeOriginal(key) }, else: { _ in })
    }

    /// An original that turned out not to decode: its row goes, the failure is remembered, and its blob
    /// goes unless another row shares it.
    public func forgetUndecodable(_ record: OriginalRecord, failure: FailureRecord) async {
        overlay.withLock { kept in
            kept.originals[record.key] = nil
            kept.failures[record.key] = failure
        }
        await store({ index, blobs in
            try index.removeOriginal(record.key)
            try index.putFailure(failure)
            if try !index.entries().contains(where: { $0.blob == record.blob }) { blobs.remove(record.blob) }
        }, else: { _ in })
    }

    // MARK: Failures

    public func failure(_ key: OriginalKey) async -> FailureRecord? {
        if let kept = overlay.withLock({ $0.failures[key] }) { return kept }
        return (try? await run { index, _ in try index.failure(key) }) ?? nil
    }

    public func rememberFailure(_ record: FailureRecord) async {
        await store({ index, _ in try index.putFailure(record) }, else: { $0.failures[record.key] = record })
    }

    // MARK: Unresolvable hosts

    /// The hosts a build could not resolve since `since` (seconds since 1970), with why and when; none
    /// when the index cannot be read (they are asked again).
    public func unresolvableHosts(since: Double) async -> [String: (reason: String, failedAt: Double)] {
        (try? await run { index, _ in try index.unresolvableHosts(since: since) }) ?? [:]
    }

    /// Nothing is kept in memory when the cache cannot store it: a build finds its own unreachable hosts.
    public func rememberUnresolvable(_ host: String, reason: String, at: Double) async {
        await store({ index, _ in try index.putUnresolvableHost(host, reason: reason, at: at) }, else: { _ in })
    }

    public func forgetUnresolvable(_ host: String) async {
        await store({ index, _ in try index.removeUnresolvableHost(host) }, else: { _ in })
    }

    // MARK: Variants

    /// The stored variants among `keys` whose blob is there at its recorded size (a dropped variant has
    /// none), and the original's placeholder of `kind` if asked for.
    public func storedVariants(_ keys: [VariantKey], placeholder kind: String?, of original: BlobID) async throws
        -> (variants: [VariantKey: VariantRecord], placeholder: String?) {
        let kept = overlay.withLock { state in
            (state.variants.filter { keys.contains($0.key) }, kind.flatMap { state.placeholders[CacheOverlay.placeholderKey($0, original)] })
        }
        let stored = try await run { index, blobs in
            let rows = try index.variants(keys).filter { row in row.value.blob.map { blobs.size($0) == row.value.bytes } ?? true }
            return (rows, try kind.flatMap { try index.placeholder($0, for: original) })
        }
        return (stored.0.merging(kept.0) { $1 }, kept.1 ?? stored.1)
    }

    /// Stores encoded variants: the blob of each one that has bytes (its row then names it), and a
    /// row for each (a dropped one, without bytes, is remembered so it is not encoded again); and the
    /// placeholder. Returns the rows as stored.
    public func storeVariants(_ made: [(row: VariantRecord, bytes: [UInt8]?)], of original: BlobID,
                              placeholder: (kind: String, value: String)?, now: Double) async -> [VariantRecord] {
        let rows = made.map { made in
            var row = made.row
            row.blob = made.bytes.map { BlobID(of: $0) }
            return row
        }
        whole.withLock { $0.formUnion(rows.compactMap(\.blob)) }
        await store({ index, blobs in
            for (row, made) in zip(rows, made) { if let bytes = made.bytes, let id = row.blob { try blobs.write(bytes, as: id) } }
            try index.putVariants(rows, now: now)
            if let placeholder { try index.putPlaceholder(placeholder.value, kind: placeholder.kind, for: original) }
        }, else: { kept in
            for (row, made) in zip(rows, made) {
                kept.variants[row.key] = row
                if let blob = row.blob, let bytes = made.bytes { kept.blobs[blob] = bytes }
            }
            if let placeholder { kept.placeholders[CacheOverlay.placeholderKey(placeholder.kind, original)] = placeholder.value }
        })
        return rows
    }

    /// Variants and placeholders from the remote cache, their blobs already checked against the ids
    /// their rows name: stored without hashing them again, and without an fsync (the remote has them;
    /// a blob lost or damaged by a crash is a miss, or found when read).
    public func storeFetchedVariants(_ fetched: [(row: VariantRecord, bytes: [UInt8]?)], of original: BlobID,
                                     placeholders: [String: String], now: Double) async {
        whole.withLock { $0.formUnion(fetched.compactMap { $0.row.blob }) }
        await store({ index, blobs in
            for (row, bytes) in fetched { if let bytes, let id = row.blob { try blobs.write(bytes, as: id, durable: false) } }
            try index.putVariants(fetched.map(\.row), now: now)
            for (kind, value) in placeholders { try index.putPlaceholder(value, kind: kind, for: original) }
        }, else: { kept in
            for (row, bytes) in fetched {
                kept.variants[row.key] = row
                if let blob = row.blob, let bytes { kept.blobs[blob] = bytes }
            }
            for (kind, value) in placeholders { kept.placeholders[CacheOverlay.placeholderKey(kind, original)] = value }
        })
    }

    // MARK: Blobs

    /// Reads and verifies a blob on the cache's threads.
    public func readBlob(_ id: BlobID) async -> BlobStore.ReadResult {
        if let kept = overlay.withLock({ $0.blobs[id] }) { return .found(kept) }
        return (try? await run { _, blobs in blobs.read(id) }) ?? .missing
    }

    /// Whether a blob is there and whole: read and hashed once per process, unless this process stored
    /// it. One that is not is forgotten with every row that names it, so that what it held is made again.
    public func checkBlob(_ id: BlobID) async -> Bool {
        if whole.withLock({ $0.contains(id) }) || overlay.withLock({ $0.blobs[id] != nil }) { return true }
        let found = (try? await run { _, blobs in if case .found = blobs.read(id) { true } else { false } }) ?? false
        if found {
            whole.withLock { _ = $0.insert(id) }
        } else if readOnly == nil {
            await store({ index, _ in try index.removeAll(withBlob: id) }, else: { _ in })
        }
        return found
    }

    public func hasBlob(_ id: BlobID) async -> Bool {
        if overlay.withLock({ $0.blobs[id] != nil }) { return true }
        return (try? await run { _, blobs in blobs.exists(id) }) ?? false
    }

    /// Reads and verifies a blob on the calling thread: for work already on a blocking thread (a
    /// transform reads its original where it decodes it, so the bytes live only that long).
    public func readBlobHere(_ id: BlobID) -> BlobStore.ReadResult {
        if let kept = overlay.withLock({ $0.blobs[id] }) { return .found(kept) }
        return blobs.read(id)
    }

    public enum CopyOutcome: Sendable {
        case written
        case damaged(String)
        /// The whole message, naming the file once (`cannot write <path>: <reason>`): a build prints it
        /// as it is.
        case failed(String)
    }

    /// Writes a verified copy of a blob to `path` (temporary name, then rename). A blob that is missing
    /// or does not match its hash is removed from the index with every row that names it.
    public func copyBlob(_ id: BlobID, to path: String) async -> CopyOutcome {
        if let kept = overlay.withLock({ $0.blobs[id] }) {
            // A blob the cache could not store (a full or read-only cache disk), written from memory.
            let written = await io.run { () -> Result<Void, WriteError> in
                Result { () throws(WriteError) in try AtomicFile.write(kept, to: path, durable: false) }
            }
            if case .failure(let error) = written { return .failed(error.description) }
            return .written
        }
        let result = await io.run { [blobs] in blobs.copy(id, to: path) }
        switch result {
        case .copied:
            return .written
        case .failed(let message):
            return .failed(message)
        case .corrupt, .missing:
            // Forgetting the rows is the cache's business: if the index cannot be written now, the
            // blob is found missing again next time.
            if readOnly == nil { await store({ index, _ in try index.removeAll(withBlob: id) }, else: { _ in }) }
            return .damaged(result == .corrupt ? "blob \(id.hex.prefix(12)) did not match its hash" : "blob \(id.hex.prefix(12)) was missing")
        }
    }

    // MARK: Use

    /// Marks what a build used, so eviction is least recently used first.
    public func touch(originals: [OriginalKey], variants: [VariantKey], now: Double) async {
        await store({ index, _ in try index.touch(originals: originals, variants: variants, now: now) }, else: { _ in })
    }

    /// Removes temporary files a killed process left among the blobs.
    public func sweepTemporaries() async {
        guard readOnly == nil else { return }
        _ = try? await run { _, blobs in CacheMaintenance.sweepTemporaries(blobs) }
    }

    /// Evicts least recently used entries until the cache is under `maxBytes`, sparing what was used
    /// since `protectedSince`. The caller holds the cache exclusively.
    public func collectGarbage(maxBytes: Int, protectedSince: Double) async throws -> CacheMaintenance.GCReport {
        try await io.run { [self] in try CacheMaintenance.collect(self, maxBytes: maxBytes, protectedSince: protectedSince) }
    }
}
