import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One build at a time writes an output root (the site, in place, or the `--out` folder): an
/// exclusive `flock` on the folder itself, so nothing is added to the site and the lock goes away
/// with the process however it ends. Two builds of one site at once would otherwise each see the
/// other's rewrites as edits made while they ran, and remove image files the other just wrote.
final class OutputLock: Sendable {
    private let descriptor: Int32
    /// Seconds spent waiting for another build to finish.
    let waited: Double

    /// Waits (without holding a thread: builds run on Swift's cooperative pool) until no other build
    /// holds the folder.
    init(folder: String) async throws(BuildError) {
        do { try AtomicFile.makeDirectory(folder) } catch { throw BuildError(error) }
        // Before any download: a site that cannot be written (read-only file system) fails at once.
        guard access(folder, W_OK) == 0 else { throw BuildError(WriteError(path: folder, errno: errno)) }
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw BuildError(.failed, "cannot open \(folder): \(String(cString: strerror(errno)))") }
        let started = ContinuousClock.now
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK {
                // A cancelled build stops waiting: its sleep would return at once, and the loop would spin.
                do { try await Task.sleep(for: .milliseconds(50)) } catch {
                    close(fd)
                    throw BuildError(.failed, "the build was cancelled while waiting for another build of \(folder)")
                }
                continue
            }
            let reason = String(cString: strerror(errno))
            close(fd)
            throw BuildError(.failed, "cannot lock \(folder) for this build: \(reason)")
        }
        descriptor = fd
        waited = (ContinuousClock.now - started).seconds
    }

    deinit { close(descriptor) }
}
