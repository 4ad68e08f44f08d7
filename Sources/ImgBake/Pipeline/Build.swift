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

/// One build: find the pages that changed, scan them, resolve every unique image through the manager,
/// write the image files, splice the pages, mirror the rest of the site with `--out`, remove outputs no
/// page uses any more, and record what was done for the next build. Per-page and per-image problems
/// become diagnostics and the build goes on.
public struct Build: Sendable {
    public var configuration: Configuration
    /// Unix seconds; tests inject a clock to move freshness and failure memory through time.
    public var now: @Sendable () -> Double
    /// Read it while the build runs for a progress display.
    public let progress = BuildProgress()
    /// Tests turn it off to check that a build the seal let off would indeed have had nothing to do.
    var usesSeal = true

    public init(_ configuration: Configuration, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.configuration = configuration
        self.now = now
    }

    /// The stages, in order; each is a function of what the ones before produced.
    public func run() async throws(BuildError) -> BuildResult {
        defer { progress.update { $0.finished = true } }
        let plan = try BuildPlan(configuration, now: now())
        return try await BuildServices.using(plan, now: now) { services throws(BuildError) in
            progress.watch(services.downloader)
            let sealed = trustsSeal(plan) ? await services.cache.seal(root: plan.stateRoot) : nil
            // Without a seal to trust the page states are needed: read while the site is walked.
            async let unsealed = sealed == nil ? services.cache.pageStates(root: plan.stateRoot, withReferences: plan.reports) : [:]
            let inventory = takeInventory(plan)
            if await holds(sealed, inventory, plan, services.cache) { return try await concludeUnchanged(inventory, plan, services) }
            // Before anything changes; also a seal this imgbake cannot read.
            if plan.writesSite { await services.cache.putSeal(nil, root: plan.stateRoot) }
            let previous = sealed == nil ? await unsealed : await services.cache.pageStates(root: plan.stateRoot)
            let pages = try await restore(await partition(inventory, previous, plan, services.cache), plan, services.cache)
            await services.anticipateRemoteMisses()
            var survey = await survey(pages.toRead, plan)
            var images = await resolve(survey, services)
            var (site, findings) = try await settle(&survey, &images, plan, services)
            if plan.writesSite {
                try completeSite(&site, pages, inventory, plan)
                site.merge(try await heal(site, plan, services))
                site.diagnostics += await record(site, pages, inventory, plan, services.cache)
                await sealIfSettled(site, survey, findings, images, inventory, plan, services.cache)
            }
            let used = await finish(images, plan, services)
            return try await conclude(Outcome(plan, inventory, pages, survey: survey, images: images, findings: findings, site: site,
                                              diagnostics: used, services), services.transformer)
        }
    }
}
