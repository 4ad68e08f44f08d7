import Digest
import Foundation

/// Content-addressed files under `<cache>/blobs/ab/abcdef…`. A blob is written once (temp file, fsync,
/// rename) and checked against its name whenever it is read: a mismatch is a miss, and the bad file
/// is removed so it gets made again.
public final class BlobStore: Sendable {
    public let root: String

    /// The folder is made when the first blob is written (a read-only cache has nothing to make).
    public init(root: String) {
        self.root = root
    }

    public func path(of id: BlobID) -> String {
        "\(root)/\(id.hex.prefix(2))/\(id.hex)"
    }

    /// Stores `bytes` and returns their id. Writing a blob that is already there is a no-op, which is
    /// what makes concurrent builds storing the same bytes safe.
    @discardableResult
    public func write(_ bytes: [UInt8]) throws -> BlobID {
        let id = BlobID(of: bytes)
        try write(bytes, as: id)
        return id
    }

    /// Stores `bytes` whose id the caller already computed or checked (a record names it): hashing
    /// them again here was a second SHA-256 of every original and variant stored.
    /// `durable: false` for a blob another copy of which is elsewhere (the remote cache): a file lost
    /// or left short by a crash is a miss (its size is checked), a damaged one is found when read.
    public func write(_ bytes: [UInt8], as id: BlobID, durable: Bool = true) throws {
        let path = path(of: id)
        if AtomicFile.size(of: path) == bytes.count { return }
        try AtomicFile.makeDirectory(PathName.parent(path))
        try AtomicFile.write(bytes, to: path, durable: durable)
    }

    /// Stores a small blob a build can do without (a page as written: a lost one only means the page
    /// is rewritten from its source), so not fsync'd; a file already there is compared byte for byte,
    /// not by size, since nothing else reads it before it is needed.
    public func writeSmall(_ bytes: [UInt8], as id: BlobID) throws {
        let path = path(of: id)
        // There with these bytes: kept. (Its size alone would keep a damaged copy of the same size.)
        if AtomicFile.size(of: path) == bytes.count, AtomicFile.read(path) == bytes { return }
        try AtomicFile.makeDirectory(PathName.parent(path))
        try AtomicFile.write(bytes, to: path, durable: false)
    }

    public enum ReadResult: Sendable {
        case found([UInt8])
        case missing
        /// The file's bytes did not hash to its name; it has been removed.
        case corrupt
    }

    /// Reads and verifies a blob.
    public func read(_ id: BlobID) -> ReadResult {
        guard let bytes = AtomicFile.read(path(of: id)) else { return .missing }
        guard BlobID(of: bytes) == id else {
            remove(id)
            return .corrupt
        }
        return .found(bytes)
    }

    public enum CopyResult: Sendable, Equatable {
        case copied
        case missing
        /// The file's bytes did not hash to its name; it has been removed and nothing was written.
        case corrupt
        /// The whole message, naming the file once: `cannot write <path>: No space left on device`, or
        /// `cannot read <blob>: …`.
        case failed(String)
    }

    /// Copies a blob to `path` (atomically, not fsync'd: an output), verifying its hash in the same
    /// pass: one read of each byte, in 1 MiB pieces, instead of reading the whole blob into memory,
    /// hashing it, then writing it. A blob that does not match its name never reaches `path`.
    public func copy(_ id: BlobID, to path: String) -> CopyResult {
        let source = open(self.path(of: id), O_RDONLY | O_CLOEXEC)
        guard source >= 0 else {
            return errno == ENOENT ? .missing : .failed("cannot read \(self.path(of: id)): \(String(cString: strerror(errno)))")
        }
        defer { close(source) }
        let hasher = SHA256()
        var corrupt = false
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        do {
            try AtomicFile.write(to: path, durable: false) { fd in
                while true {
                    let count = Glibc.read(source, buffer.baseAddress, buffer.count)
                    if count < 0 {
                        if errno == EINTR { continue }
                        return String(cString: strerror(errno))
                    }
                    if count == 0 { break }
                    let piece = UnsafeRawBufferPointer(rebasing: buffer[0 ..< count])
                    hasher.update(piece)
                    if let failure = AtomicFile.writeAll(fd, piece) { return failure }
                }
                guard Hex.lowercase(hasher.finalize()) == id.hex else {
                    corrupt = true
                    return "blob \(id.hex.prefix(12)) did not match its hash"
                }
                return nil
            }
        } catch {
            if corrupt {
                remove(id)
                return .corrupt
            }
            return .failed(error.description)
        }
        return .copied
    }

    public func exists(_ id: BlobID) -> Bool { AtomicFile.size(of: path(of: id)) != nil }

    public func size(_ id: BlobID) -> Int? { AtomicFile.size(of: path(of: id)) }

    public func remove(_ id: BlobID) { unlink(path(of: id)) }
}
