import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes files so that readers see the old content or the new, never a part: a temporary file in the
/// same folder (unique per process and call), optionally fsync'd, then renamed over the target.
enum AtomicFile {
    struct WriteError: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "cannot write \(path): \(reason)" }
    }

    /// - Parameters:
    ///   - durable: fsync before the rename (cache entries); outputs skip it for speed.
    ///   - mode: permissions of the new file.
    static func write(_ bytes: some Collection<UInt8>, to path: String, durable: Bool, mode: mode_t = 0o644) throws(WriteError) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temp = "\(directory)/.\(name).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw WriteError(path: path, reason: String(cString: strerror(errno))) }
        var failure: String?
        let contiguous = Array(bytes)
        contiguous.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                offset += written
            }
        }
        if failure == nil, durable, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        // An explicit fchmod: the umask must not decide the mode of a rewritten page.
        if failure == nil { fchmod(fd, mode) }
        if close(fd) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        if failure == nil, rename(temp, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temp)
            throw WriteError(path: path, reason: failure)
        }
    }

    /// Creates `path` and its parents.
    static func makeDirectory(_ path: String) throws(WriteError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw WriteError(path: path, reason: "cannot create folder (\(error.localizedDescription))")
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

    static func read(_ path: String) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt8](data)
    }
}
