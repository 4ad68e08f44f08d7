import ArgumentParser
import Foundation
import ImgBake

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain the cache.",
        subcommands: [Stats.self, Verify.self, GC.self, Clean.self])

    struct Location: ParsableArguments {
        @Option(name: .customLong("cache-dir"), help: "The cache folder (default: $IMGBAKE_CACHE_DIR, else $XDG_CACHE_HOME/imgbake).")
        var cacheDir: String?

        var directory: String { cacheDir ?? SystemInfo.environmentCacheDirectory ?? SystemInfo.defaultCacheDirectory }

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
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Evict least recently used entries until the cache fits a size, forget sites whose folder is gone; with --remote, bound the remote cache.",
            discussion: """
                With --remote: the remote cache named by cache.remote in the configuration file (credentials from the \
                environment, as for a build) loses its objects written longer ago than --max-age, then the oldest ones \
                until the rest fits --max-size. Age is the time since an object was last written; builds write an \
                image's pack again when they use it and it is older than 7 days, so a --max-age above that plus the \
                time between builds keeps what they use.
                """)
        @OptionGroup var location: Location
        @Option(name: .customLong("max-size"), help: "The budget, e.g. 500MB or 5GB.")
        var maxSize: String?
        @Flag(help: "Bound the remote cache (cache.remote) instead of the local one.")
        var remote = false
        @Option(name: .customLong("max-age"), help: "With --remote: remove objects last written longer ago than this, e.g. 30d.")
        var maxAge: String?
        @Option(help: "With --remote: the configuration file naming it (default: imgbake.toml in the current folder).")
        var config: String?
        @Flag(name: .customLong("dry-run"), help: "With --remote: say what would be removed, remove nothing.")
        var dryRun = false

        func validate() throws {
            if let maxSize, ByteSize.parse(maxSize) == nil { throw ValidationError("--max-size \(maxSize): expected a size such as 500MB or 5GB") }
            if let maxAge, DurationText.parse(maxAge) == nil { throw ValidationError("--max-age \(maxAge): expected a duration such as 30d or 12h") }
            if remote {
                guard maxSize != nil || maxAge != nil else { throw ValidationError("--remote needs --max-age, --max-size or both") }
            } else {
                guard maxSize != nil else { throw ValidationError("missing --max-size (or --remote with --max-age)") }
                guard maxAge == nil, config == nil, !dryRun else { throw ValidationError("--max-age, --config and --dry-run are for --remote") }
            }
        }

        func run() async throws {
            if remote { return try await collectRemote() }
            let lock = try location.lockExclusively()
            defer { _ = lock }
            let budget = ByteSize.parse(maxSize!)!
            let cache = try location.open()
            let forgotten = try CacheMaintenance.forgetSitesGone(cache)
            let report = try CacheMaintenance.collect(cache, maxBytes: budget)
            if forgotten > 0 { print("forgot the page states of \(forgotten) site\(forgotten == 1 ? "" : "s") whose folder is gone") }
            print("evicted \(report.removedEntries) entries, removed \(report.removedFiles) files (\(ByteCount.describe(report.freedBytes))); \(ByteCount.describe(report.remainingBytes)) left")
        }

        private func collectRemote() async throws {
            let file = config ?? ConfigurationFile.defaultName
            let configuration = try ConfigurationLoader.load(site: ".", file: file, cacheDir: location.cacheDir)
            guard let settings = configuration.cache.remote else {
                Terminal.error("imgbake: error: \(file) names no remote cache (cache.remote)")
                throw ExitCode(2)
            }
            let report: RemoteRetention.Report
            do throws(RemoteRetention.Failure) {
                report = try await RemoteRetention.collect(settings, maxAge: maxAge.flatMap(DurationText.parse),
                                                           maxBytes: maxSize.flatMap(ByteSize.parse), dryRun: dryRun,
                                                           now: Date().timeIntervalSince1970)
            } catch {
                Terminal.error("imgbake: error: remote cache \(settings.location): \(error)")
                throw ExitCode(1)
            }
            let listed = report.listed.map(\.bytes).reduce(0, +)
            let verb = dryRun ? "would remove" : "removed"
            func describe(_ objects: [RemoteRetention.Object]) -> String {
                "\(objects.count) (\(ByteCount.describe(objects.map(\.bytes).reduce(0, +))))"
            }
            print("remote cache \(settings.location): \(report.listed.count) objects (\(ByteCount.describe(listed)))")
            print("\(verb) \(describe(report.removedForAge)) older than --max-age, \(describe(report.removedForSize)) over --max-size; "
                  + "\(report.remaining) objects (\(ByteCount.describe(report.remainingBytes))) left; \(report.requests) requests")
            if report.failed > 0 {
                Terminal.error("imgbake: error: \(report.failed) object(s) could not be removed")
                throw ExitCode(1)
            }
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
