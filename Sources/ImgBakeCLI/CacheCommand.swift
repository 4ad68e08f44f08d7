import ArgumentParser
import Foundation
import ImgBake

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain the cache.",
        subcommands: [Stats.self, Verify.self, GC.self, Clean.self])

    struct Location: ParsableArguments {
        @Option(name: .customLong("cache-dir"), help: "The cache folder (default: $XDG_CACHE_HOME/imgbake).")
        var cacheDir: String?

        var directory: String { cacheDir ?? SystemInfo.defaultCacheDirectory }

        func open() throws -> ImageCache {
            do { return try ImageCache(directory: directory) } catch {
                Terminal.error("imgbake: error: cannot open the cache at \(directory): \(error)")
                throw ExitCode(1)
            }
        }

        /// Waits for running builds to finish: maintenance must not remove what they use.
        func lockExclusively() throws -> CacheLock {
            if let lock = try CacheLock(directory: directory, mode: .exclusive, wait: false) { return lock }
            Terminal.error("imgbake: waiting for the builds using \(directory) to finish…")
            return try CacheLock(directory: directory, mode: .exclusive, wait: true)!
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes, originals and variants, oldest and newest.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = try location.open()
            let stats = try CacheMaintenance.stats(cache)
            print("cache: \(location.directory)")
            print("originals: \(stats.originals) (\(ByteCount.describe(stats.originalBytes)))")
            print("variants: \(stats.variants) (\(ByteCount.describe(stats.variantBytes)))")
            print("remembered failures: \(stats.failures)")
            print("blob files: \(stats.blobFiles) (\(ByteCount.describe(stats.blobBytes)) on disk)")
            if let oldest = stats.oldest, let newest = stats.newest {
                print("least recently used: \(Self.date(oldest)); most recently used: \(Self.date(newest))")
            }
        }

        static func date(_ seconds: Double) -> String {
            let formatter = ISO8601DateFormatter()
            return formatter.string(from: Date(timeIntervalSince1970: seconds))
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Re-hash every blob; drop bad entries (exit 1 if any were bad).")
        @OptionGroup var location: Location

        func run() async throws {
            let lock = try location.lockExclusively()
            defer { _ = lock }
            let report = try CacheMaintenance.verify(try location.open())
            for blob in report.corrupt { Terminal.error("corrupt: \(blob) (removed)") }
            for blob in report.missing { Terminal.error("missing: \(blob) (entries removed)") }
            let swept = report.temporariesRemoved > 0 ? ", \(report.temporariesRemoved) temporary file(s) of killed builds removed" : ""
            print("\(report.checked) blobs checked, \(report.corrupt.count) corrupt, \(report.missing.count) missing\(swept)")
            if !report.isClean { throw ExitCode(1) }
        }
    }

    struct GC: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "gc", abstract: "Evict least recently used entries until the cache fits a size.")
        @OptionGroup var location: Location
        @Option(name: .customLong("max-size"), help: "The budget, e.g. 500MB or 5GB.")
        var maxSize: String

        func validate() throws {
            guard ByteSize.parse(maxSize) != nil else { throw ValidationError("--max-size \(maxSize): expected a size such as 500MB or 5GB") }
        }

        func run() async throws {
            let lock = try location.lockExclusively()
            defer { _ = lock }
            let budget = ByteSize.parse(maxSize)!
            let report = try CacheMaintenance.collect(try location.open(), maxBytes: budget)
            print("evicted \(report.removedEntries) entries, removed \(report.removedFiles) files (\(ByteCount.describe(report.freedBytes))); \(ByteCount.describe(report.remainingBytes)) left")
        }
    }

    struct Clean: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove everything from the cache.")
        @OptionGroup var location: Location

        func run() async throws {
            let lock = try location.lockExclusively()
            defer { _ = lock }
            try CacheMaintenance.clean(try location.open())
            print("cache emptied: \(location.directory)")
        }
    }
}
