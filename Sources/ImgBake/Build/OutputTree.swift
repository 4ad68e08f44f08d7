import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// With `--out`: everything of the site that imgbake does not rewrite is placed in the output as it is
/// — a hard link when the two folders share a file system, else a copy with the source's time — so
/// the output is a complete site. Only files imgbake placed are ever removed from it.
struct OutputTree: Sendable {
    let site: String
    let output: String

    enum Placement { case alreadyThere, linked, copied }

    /// Makes `output/path` the same file as `site/path`.
    func mirror(_ path: String) throws(BuildError) -> Placement {
        let source = site + "/" + path, target = output + "/" + path
        var from = stat(), to = stat()
        guard stat(source, &from) == 0 else { throw BuildError(.failed, "cannot read \(source)") }
        if stat(target, &to) == 0 {
            let sameFile = from.st_dev == to.st_dev && from.st_ino == to.st_ino
            let sameStamp = from.st_size == to.st_size && from.st_mtim.tv_sec == to.st_mtim.tv_sec && from.st_mtim.tv_nsec == to.st_mtim.tv_nsec
            if sameFile || sameStamp { return .alreadyThere }
        }
        do { try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent) } catch { throw BuildError(.failed, error.description) }
        // Link to a temporary name and rename over the target: readers see the old file or the new.
        let temporary = (target as NSString).deletingLastPathComponent + "/.\((target as NSString).lastPathComponent).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        if link(source, temporary) == 0 {
            guard rename(temporary, target) == 0 else {
                unlink(temporary)
                throw BuildError(.failed, "cannot write \(target): \(String(cString: strerror(errno)))")
            }
            return .linked
        }
        guard let bytes = AtomicFile.read(source) else { throw BuildError(.failed, "cannot read \(source)") }
        do { try AtomicFile.write(bytes, to: target, durable: false, mode: from.st_mode & 0o7777) } catch {
            throw BuildError(.failed, error.description)
        }
        // The same time as the source, so the next build sees the copy is current.
        var times = [from.st_atim, from.st_mtim]
        _ = utimensat(AT_FDCWD, target, &times, 0)
        return .copied
    }

    func remove(_ path: String) {
        unlink(output + "/" + path)
    }
}
