import CShims.System
import Foundation

/// Facts about the machine and the environment.
public enum SystemInfo {
    public static var processorCount: Int { ProcessInfo.processInfo.activeProcessorCount }

    public static func environment(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }

    /// `$XDG_CACHE_HOME/imgbake`, else `~/.cache/imgbake`.
    public static var defaultCacheDirectory: String {
        if let xdg = environment("XDG_CACHE_HOME"), !xdg.isEmpty { return xdg + "/imgbake" }
        return (environment("HOME") ?? NSHomeDirectory()) + "/.cache/imgbake"
    }

    /// glibc gives each thread an arena of its own and keeps freed memory there: with a pool of image
    /// threads that made a build's peak a third higher (bench: 831 → 636 MiB) at no gain in time.
    /// And it raises the size from which an allocation gets pages of its own (given back when freed)
    /// each time such a block is freed, up to 32 MiB, so an image's buffers soon stay in the heap after
    /// it is done: fixed at 1 MiB, the bench's cold peak was 239–249 MiB instead of 249–267 (three runs
    /// each, 2026-11-24; no change in time beyond the noise). Call first thing, before threads start.
    public static func tuneMemoryAllocator() {
        imgbake_limit_malloc_arenas(2)
        imgbake_malloc_mmap_threshold(1 << 20)
    }

    /// imgbake's version, in the User-Agent and the variant keys.
    public static let version = "0.1.0"
}
