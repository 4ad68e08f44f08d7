import Foundation

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
    private let io: BlockingPool

    /// Threads for disk and SQLite work. SQLite writes are serialised by its lock anyway; two threads
    /// let a blob copy proceed while another call waits on the index.
    static let ioThreads = 2

    public init(directory: String) throws {
        self.directory = directory
        try AtomicFile.makeDirectory(directory)
        blobs = try BlobStore(root: directory + "/blobs")
        index = try CacheIndex(path: directory + "/index.sqlite3")
        io = BlockingPool(threads: Self.ioThreads, name: "cache-io")
    }

    /// Stops the I/O threads once the work queued so far is done.
    public func shutdown() async { await io.shutdown() }

    private func run<T: Sendable>(_ body: @escaping @Sendable (CacheIndex, BlobStore) throws -> T) async throws -> T {
        try await io.run { [index, blobs] in try body(index, blobs) }
    }

    // MARK: Originals

    public func original(_ key: OriginalKey) async throws -> OriginalRecord? {
        try await run { index, _ in try index.original(key) }
    }

    /// Several originals at once (for freshness checks of unchanged pages).
    public func originals(_ keys: some Sequence<OriginalKey> & Sendable) async throws -> [OriginalKey: OriginalRecord] {
        try await run { index, _ in
            var found: [OriginalKey: OriginalRecord] = [:]
            for key in keys { found[key] = try index.original(key) }
            return found
        }
    }

    public func credits(of blob: BlobID) async -> Credits? {
        (try? await run { index, _ in try index.credits(blob) }) ?? nil
    }

    /// A downloaded original: its blob, its row, its credits; a remembered failure of its key is
    /// forgotten.
    public func storeOriginal(_ bytes: [UInt8], as record: OriginalRecord, credits: Credits, now: Double) async throws {
        try await run { index, blobs in
            try blobs.write(bytes)
            try index.putOriginal(record, now: now)
            if !credits.isEmpty { try index.putCredits(credits, for: record.blob) }
            try index.removeFailure(record.key)
        }
    }

    /// An original confirmed by a 304: new validators and fetch time.
    public func revalidated(_ record: OriginalRecord, now: Double) async {
        try? await run { index, _ in try index.putOriginal(record, now: now) }
    }

    /// Forgets an original whose blob turned out to be damaged, so it is fetched again.
    public func forgetOriginal(_ key: OriginalKey) async {
        try? await run { index, _ in try index.removeOriginal(key) }
    }

    // MARK: Failures

    public func failure(_ key: OriginalKey) async -> FailureRecord? {
        (try? await run { index, _ in try index.failure(key) }) ?? nil
    }

    public func rememberFailure(_ record: FailureRecord) async {
        try? await run { index, _ in try index.putFailure(record) }
    }

    // MARK: Variants

    /// The stored variants among `keys` whose blob is there at its recorded size (a dropped variant has
    /// none), and the original's placeholder of `kind` if asked for.
    public func storedVariants(_ keys: [VariantKey], placeholder kind: String?, of original: BlobID) async throws
        -> (variants: [VariantKey: VariantRecord], placeholder: String?) {
        try await run { index, blobs in
            let rows = try index.variants(keys).filter { row in row.value.blob.map { blobs.size($0) == row.value.bytes } ?? true }
            return (rows, try kind.flatMap { try index.placeholder($0, for: original) })
        }
    }

    /// Stores encoded variants: the blob of each one that has bytes (its row then names it), and a
    /// row for each (a dropped one, without bytes, is remembered so it is not encoded again); and the
    /// placeholder. Returns the rows as stored.
    public func storeVariants(_ made: [(row: VariantRecord, bytes: [UInt8]?)], of original: BlobID,
                              placeholder: (kind: String, value: String)?, now: Double) async throws -> [VariantRecord] {
        try await run { index, blobs in
            let rows = try made.map { made in
                var row = made.row
                row.blob = try made.bytes.map { try blobs.write($0) }
                return row
            }
            try index.putVariants(rows, now: now)
            if let placeholder { try index.putPlaceholder(placeholder.value, kind: placeholder.kind, for: original) }
            return rows
        }
    }

    // MARK: Blobs

    public func hasBlob(_ id: BlobID) async -> Bool {
        (try? await run { _, blobs in blobs.exists(id) }) ?? false
    }

    /// Reads and verifies a blob on the calling thread: for work already on a blocking thread (a
    /// transform reads its original where it decodes it, so the bytes live only that long).
    public func readBlobHere(_ id: BlobID) -> BlobStore.ReadResult { blobs.read(id) }

    public enum CopyOutcome: Sendable {
        case written
        case damaged(String)
        case failed(String)
    }

    /// Writes a verified copy of a blob to `path` (temporary name, then rename). A blob that is missing
    /// or does not match its hash is removed from the index with every row that names it.
    public func copyBlob(_ id: BlobID, to path: String) async -> CopyOutcome {
        (try? await run { index, blobs in
            switch blobs.read(id) {
            case .found(let bytes):
                do { try AtomicFile.write(bytes, to: path, durable: false) } catch { return .failed("\(error)") }
                return .written
            case .corrupt:
                try index.removeAll(withBlob: id)
                return .damaged("blob \(id.hex.prefix(12)) did not match its hash")
            case .missing:
                try index.removeAll(withBlob: id)
                return .damaged("blob \(id.hex.prefix(12)) was missing")
            }
        }) ?? .failed("cannot read the cache index")
    }

    // MARK: Use

    /// Marks what a build used, so eviction is least recently used first.
    public func touch(originals: [OriginalKey], variants: [VariantKey], now: Double) async throws {
        try await run { index, _ in try index.touch(originals: originals, variants: variants, now: now) }
    }

    /// Evicts least recently used entries until the cache is under `maxBytes`, sparing what was used
    /// since `protectedSince`. The caller holds the cache exclusively.
    public func collectGarbage(maxBytes: Int, protectedSince: Double) async throws -> CacheMaintenance.GCReport {
        try await io.run { [self] in try CacheMaintenance.collect(self, maxBytes: maxBytes, protectedSince: protectedSince) }
    }

    // MARK: Site state

    /// What the last build of `root` (a site and its output) knew about each page.
    func pageStates(root: String) async -> [String: PageState] {
        (try? await run { index, _ in try index.pageStates(root: root) }) ?? [:]
    }

    /// Files builds placed under the output of `root`: `image` (in the images folder) or `mirror`.
    func placedFiles(root: String) async throws -> [String: String] {
        try await run { index, _ in try index.placedFiles(root: root) }
    }

    /// Saves the page states of a build, the files it wrote into images folders, and the files it
    /// placed and removed.
    func recordBuild(root: String, pages: [PageState], removingPages gone: [String], outputs: [OutputRecord],
                     placed: [String: String], removed: [String]) async throws {
        try await run { index, _ in
            try index.putPageStates(pages, removing: gone, root: root)
            try index.recordOutputs(outputs)
            try index.recordPlaced(placed, removed: removed, root: root)
        }
    }

    /// What is known about files that builds wrote into images folders, by name.
    func outputRecords(named names: [String]) async -> [OutputRecord] {
        (try? await run { index, _ in try names.compactMap { try index.output(named: $0) } }) ?? []
    }
}
