import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A lock on a cache folder shared between processes (`flock` on `<cache>/lock`). Builds hold it
/// shared for their whole run, so several builds use one cache at once; `cache gc`, `verify` and
/// `clean` hold it exclusively, so they never remove what a running build uses. Released when the
/// value goes away (or the process dies).
public final class CacheLock: Sendable {
    public enum Mode: Sendable { case shared, exclusive }

    private let descriptor: Int32

    /// Takes the lock; with `wait == false`, returns nil instead of waiting for other holders.
    public init?(directory: String, mode: Mode, wait: Bool) throws {
        try AtomicFile.makeDirectory(directory)
        var fd = open(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        // A read-only cache: its lock file can still be locked through a read-only descriptor.
        if fd < 0 && (errno == EROFS || errno == EACCES) { fd = open(directory + "/lock", O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw WriteError(path: directory + "/lock", errno: errno)
        }
        let operation = (mode == .shared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB)
        while flock(fd, operation) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw WriteError(path: directory + "/lock", errno: code)
        }
        descriptor = fd
    }

    deinit { close(descriptor) }
}
