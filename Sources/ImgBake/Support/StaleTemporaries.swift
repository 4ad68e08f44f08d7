import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Temporary files (`.<name>.tmp-<pid>-<random>`) left behind by a process that was killed mid-write.
/// They are hidden and never read; this removes those whose process is gone.
enum StaleTemporaries {
    @discardableResult
    static func remove(in directory: String) -> Int {
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix(".") {
            guard let match = name.firstMatch(of: /\.tmp-(\d+)-\d+$/), let pid = Int32(match.output.1),
                  pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }
}
