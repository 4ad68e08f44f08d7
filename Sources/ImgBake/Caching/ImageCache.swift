import Foundation

/// The persistent cache: blobs and index under one folder, with its own threads for disk and SQLite
/// work (so a busy lock held by another build never blocks Swift's cooperative threads).
///
///     <dir>/index.sqlite3   the index (WAL)
///     <dir>/blobs/ab/ab…    originals and variants by SHA-256
public final class ImageCache: Sendable {
    public let directory: String
    let blobs: BlobStore
    let index: CacheIndex
    private let io: BlockingPool

    public init(directory: String) throws {
        self.directory = directory
        try AtomicFile.makeDirectory(directory)
        blobs = try BlobStore(root: directory + "/blobs")
        index = try CacheIndex(path: directory + "/index.sqlite3")
        io = BlockingPool(threads: 2, name: "cache-io")
    }

    /// Runs `body` on the cache's I/O threads.
    func perform<T: Sendable>(_ body: @escaping @Sendable (CacheIndex, BlobStore) throws -> T) async throws -> T {
        try await io.run { [index, blobs] in try body(index, blobs) }
    }
}
