import BuildStamp
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

    /// `$IMGBAKE_CACHE_DIR`, when set and not empty: the cache folder, over the configuration file's
    /// `cache.dir` and under `--cache-dir`. A build host that keeps only some folders between builds
    /// (`node_modules/.cache` on some) is pointed at one in its settings, without a flag in every
    /// script or a change to the committed `imgbake.toml`. Relative to the current folder, as the flag.
    public static var environmentCacheDirectory: String? {
        guard let value = environment("IMGBAKE_CACHE_DIR"), !value.isEmpty else { return nil }
        return value
    }

    /// glibc gives each thread an arena of its own and keeps freed memory there: with a pool of image
    /// threads that raises a build's peak memory by about a third (`make bench` shows the peak) at no
    /// gain in time.
    /// Call first thing, before threads start. (The mmap threshold is set when libvips starts, see
    /// `imgbake_vips_start`.)
    public static func tuneMemoryAllocator() {
        imgbake_limit_malloc_arenas(2)
    }

    /// imgbake's version, and the one place it is written: the User-Agent, the build fingerprint, the
    /// report, `imgbake --version`, and through that the packages (`make dist` asks the binary). The
    /// CHANGELOG's latest released heading says the same (`VersionTests`).
    public static let version = "0.2.0"

    /// The version as shown (`imgbake --version`, the report): `+dirty` after it when the binary was
    /// built from a tree with uncommitted changes. Never in a key or a fingerprint: those use `version`.
    public static var displayVersion: String { version + (BuildStamp.dirty ? "+dirty" : "") }
}
