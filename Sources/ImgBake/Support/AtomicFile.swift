import CShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes files so that readers see the old content or the new, never a part: a temporary file in the
/// same folder (unique per process and call), optionally fsync'd, then renamed over the target.
///
/// A failure throws `WriteError` with the target's path and the system's reason, and leaves nothing:
/// no temporary file, and the target as it was (a page keeps its old content).
enum AtomicFile {
    /// - Parameters:
    ///   - durable: fsync before the rename (cache entries); outputs skip it for speed.
    ///   - mode: permissions of the new file.
    static func write(_ bytes: some Collection<UInt8>, to path: String, durable: Bool, mode: mode_t = 0o644) throws(WriteError) {
        let contiguous = Array(bytes)
        try write(to: path, durable: durable, mode: mode) { fd in
            contiguous.withUnsafeBytes { writeAll(fd, $0) }
        }
    }

    /// The same, with the content written by `body` into the temporary file's descriptor; `body`
    /// returns why it failed, or nil.
    ///
    /// The temporary file has no name (O_TMPFILE) where the filesystem allows, and is linked into place
    /// once complete: as atomic as a rename, one directory operation fewer per file (a sixth of writing
    /// a wiped output's 858 files again), and nothing left behind by a killed build. A target that
    /// exists already is replaced through a named temporary and a rename.
    static func write(to path: String, durable: Bool, mode: mode_t = 0o644, _ body: (Int32) -> String?) throws(WriteError) {
        let directory = folder(of: path)
        let name = PathName.name(path)
        let temp = "\(directory)/.\(name).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let unnamed = canLinkUnnamed ? imgbake_open_tmpfile(directory, UInt32(mode)) : -1
        let fd = unnamed >= 0 ? unnamed : open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw WriteError(path: path, errno: errno) }
        var failure = body(fd)
        if failure == nil, durable, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        // An explicit fchmod: the umask must not decide the mode of a rewritten page.
        if failure == nil { fchmod(fd, mode) }
        // Whether `temp` holds the file, to be renamed into place: always unless the unnamed file was
        // linked there. A taken target is replaced by a rename, as with a named temporary; where the
        // link is refused (a security module, say) the bytes are copied to a named temporary.
        var named = unnamed < 0
        var linked = false
        if failure == nil, !named {
            linked = imgbake_link_fd(fd, path) == 0
            if !linked {
                named = errno == EEXIST ? imgbake_link_fd(fd, temp) == 0 : copyWritten(fd, to: temp, mode: mode, durable: durable)
                if !named { failure = String(cString: strerror(errno)) }
            }
        }
        if close(fd) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        if failure == nil, named, rename(temp, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            // Nothing of a failed write stays: the temporary, or a new file whose bytes close() could
            // not vouch for (a target that existed was never touched: it is replaced only by rename).
            unlink(temp)
            if linked { unlink(path) }
            throw WriteError(path: path, reason: failure)
        }
    }

    /// Unnamed files are linked through /proc/self/fd, which some containers do not mount.
    private static let canLinkUnnamed = access("/proc/self/fd", X_OK) == 0

    /// Copies what was written to `fd` into a new file at `temp`; false (errno set) on failure.
    private static func copyWritten(_ fd: Int32, to temp: String, mode: mode_t, durable: Bool) -> Bool {
        let target = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard target >= 0 else { return false }
        defer { close(target) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset: off_t = 0
        while true {
            let count = pread(fd, buffer.baseAddress, buffer.count, offset)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return false }
            if count == 0 { return fchmod(target, mode) == 0 && (!durable || fsync(target) == 0) }
            guard writeAll(target, UnsafeRawBufferPointer(rebasing: buffer[0 ..< count])) == nil else { return false }
            offset += off_t(count)
        }
    }

    /// Writes all of `buffer`, through short writes and interruptions; the reason on failure.
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> String? {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += written
        }
        return nil
    }

    /// The folder a path is in (`.` for a bare name).
    static func folder(of path: String) -> String {
        let folder = PathName.parent(path)
        return folder.isEmpty ? "." : folder
    }

    /// Creates `path` and its parents (like `mkdir -p`), with the system's reason when it cannot.
    static func makeDirectory(_ path: String) throws(WriteError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw WriteError(path: path, errno: ENOTDIR, operation: .createFolder) }
            return
        }
        let parent = PathName.parent(path)
        if !parent.isEmpty && parent != path { try makeDirectory(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw WriteError(path: path, errno: errno, operation: .createFolder)
        }
    }

    /// The file's permission bits, or nil when it does not exist.
    static func mode(of path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    /// The file's size, or nil when it does not exist.
    static func size(of path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    struct ReadError: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "cannot read \(path): \(reason)" }
    }

    /// A regular file's bytes and the size and time they were read at (from the open descriptor, so
    /// the two agree). A FIFO, socket or device is refused without blocking on it.
    static func readWithStamp(_ path: String) throws(ReadError) -> ([UInt8], FileStamp) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw ReadError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReadError(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ReadError(path: path, reason: "not a regular file") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        func readSome(into buffer: UnsafeMutableRawBufferPointer) throws(ReadError) -> Int {
            while true {
                let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
                if count >= 0 { return count }
                if errno != EINTR && errno != EAGAIN { throw ReadError(path: path, reason: String(cString: strerror(errno))) }
            }
        }
        while true {
            if filled == bytes.count {
                // At the size fstat gave, a one-byte read tells the end from a file that grew meanwhile,
                // without growing the buffer first (appending half the file's size in zeros, element by
                // element, cost a twelfth of the test suite's CPU in debug builds).
                var probe: UInt8 = 0
                let got = withUnsafeMutableBytes(of: &probe) { byte in Result { () throws(ReadError) in try readSome(into: byte) } }
                guard try got.get() == 1 else { break }
                bytes.append(probe)
                bytes += [UInt8](repeating: 0, count: max(4096, bytes.count / 2))
                filled += 1
                continue
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(ReadError) in try readSome(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])) }
            }
            if try count.get() == 0 { break }
            filled += try count.get()
        }
        bytes.removeSubrange(filled...)
        var stamp = FileStamp(info)
        stamp.size = filled
        return (bytes, stamp)
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt8](data)
    }
}
