import Foundation

/// What a build produced: diagnostics (sorted by place), counts, and the exit status it implies.
public struct BuildResult: Sendable {
    public var diagnostics: [Diagnostic]
    public var summary: BuildSummary
    /// 0 success (warnings allowed), 1 failed (`--strict` with image failures, `--frozen` with misses,
    /// `--check` with references that would stay remote).
    public var exitCode: Int32
    /// Unique URLs that `--frozen` or `--check` needed from the network.
    public var missing: [String] = []
    /// With `--check`: the references that would stay remote, with why.
    public var remaining: [Diagnostic] = []
    public var report: BuildReport?
}

/// One build of a site: the pages that changed (or whose images did) are read once, rewritten to
/// local, content-hashed image files and written; the rest of the site is left alone, or with `--out`
/// copied; outputs no page uses any more are removed; what was done is recorded for the next build.
/// Per-page and per-image problems become diagnostics and the build goes on. `BuildRun` holds the
/// stages.
public struct Build: Sendable {
    public var configuration: Configuration
    /// What freshness and failure memory are judged by.
    public var clock: any WallClock
    /// Read it while the build runs for a progress display.
    public let progress = BuildProgress()

    public init(_ configuration: Configuration, clock: any WallClock = SystemClock()) {
        self.configuration = configuration
        self.clock = clock
    }

    public func run() async throws(BuildError) -> BuildResult {
        defer { progress.update { $0.finished = true } }
        let plan = try BuildPlan(configuration, now: clock.now())
        return try await BuildServices.using(plan, clock: clock) { services throws(BuildError) in
            progress.watch(services.downloader)
            return try await BuildRun(plan: plan, services: services, progress: progress).build()
        }
    }
}
