import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// With `--out`: everything of the site that imgbake does not rewrite is copied into the output as it
/// is, with the source's modification time (so the next build sees the copy is current), making the
/// output a complete site. Copies, not hard links: a later step that edits the output in place (a
/// minifier, say) must not edit the sources through a shared inode. Only files imgbake placed are
/// ever removed from it.
struct OutputTree: Sendable {
    let site: String
    let output: String

    enum Placement {
        case alreadyThere, copied
        /// The source could not be read (gone since the walk, or no permission): left out, with a warning.
        case unreadable(String)
    }

    /// Makes `output/path` the same file as `site/path`.
    func mirror(_ path: String) throws(BuildError) -> Placement {
        let source = site + "/" + path, target = output + "/" + path
        var from = stat(), to = stat()
        guard stat(source, &from) == 0 else { return .unreadable(String(cString: strerror(errno))) }
        if stat(target, &to) == 0, from.st_size == to.st_size,
           from.st_mtim.tv_sec == to.st_mtim.tv_sec, from.st_mtim.tv_nsec == to.st_mtim.tv_nsec {
            return .alreadyThere
        }
        do { try AtomicFile.makeDirectory(PathName.parent(target)) } catch { throw BuildError(error) }
        let bytes: [UInt8]
        do { (bytes, _) = try AtomicFile.readWithStamp(source) } catch { return .unreadable(error.reason) }
        do { try AtomicFile.write(bytes, to: target, durable: false, mode: from.st_mode & 0o7777) } catch { throw BuildError(error) }
        // The same time as the source, so the next build sees the copy is current.
        var times = [from.st_atim, from.st_mtim]
        _ = utimensat(AT_FDCWD, target, &times, 0)
        return .copied
    }

    /// Makes `output/path` hold `bytes`, the site file's contents as read, with its modification time
    /// (a page read this build that needed no change: copied from memory, not read again).
    func place(_ path: String, _ bytes: [UInt8], like source: FileStamp) throws(BuildError) {
        let target = output + "/" + path
        if FileStamp.of(target) == source { return }
        do {
            try AtomicFile.makeDirectory(PathName.parent(target))
            try AtomicFile.write(bytes, to: target, durable: false, mode: AtomicFile.mode(of: site + "/" + path) ?? 0o644)
        } catch {
            throw BuildError(error)
        }
        let seconds = source.modified / 1_000_000_000, nanoseconds = source.modified % 1_000_000_000
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds)), timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))]
        _ = utimensat(AT_FDCWD, target, &times, 0)
    }

    func remove(_ path: String) {
        unlink(output + "/" + path)
    }
}
