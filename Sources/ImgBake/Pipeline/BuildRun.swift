/// One build: what it works from (`plan`), what it works with (`services`), and its stages as methods.
/// Each stage takes what the stages before it produced, as one value per concept.
///
///     inventory ─▶ triage ──┬─ unchanged ───────────────────────────────────────────┐
///     (walk the    (page    ├─ outputs lost (--out) ─▶ restoreLost (from the cache) ──┤
///      site)       states,  └─ to build ─▶ buildPages: a stream, `window` pages at once │
///                  seal,         read ─▶ scan ─▶ PageModel ─▶ its images ─▶ rewrite   │
///                  sources)      ─▶ image files ─▶ page ─▶ PageState ─▶ SiteLedger ◀──┘
///                                              ▲                          │
///                          ImageDemand ────────┘                          ▼
///                          (each image once: ImageManager,     completeSite (states of every page;
///                           cache, download, transform)        --out: the rest of the site copied)
///                                                                         │
///     conclude ◀── finish (cache use, uploads, size budget) ◀── seal ◀── cleanUp (outputs no page uses)
///
/// A page is read once, parsed once and written at most once per build. Only what the clean-up needs
/// (page states: names, keys, stamps) is kept for the whole site; a page's bytes live while it is in
/// the stream.
struct BuildRun: Sendable {
    let plan: BuildPlan
    let services: BuildServices
    let progress: BuildProgress

    var store: SiteStateStore { services.sites }

    func build() async throws(BuildError) -> BuildResult {
        let seal = plan.trustsSeal ? await store.seal() : nil
        // Without a seal to trust the page states are needed: read while the site is walked.
        async let states = seal == nil ? store.pageStates(withReferences: plan.reports) : [:]
        let inventory = takeInventory()
        if await holds(seal, inventory) { return try await concludeUnchanged(inventory) }
        // Before anything changes; also a seal this imgbake cannot read.
        if plan.writesSite { await store.putSeal(nil) }
        let previous = seal == nil ? await states : await store.pageStates()
        let triage = try await restoreLost(await self.triage(inventory, previous: previous))
        await services.anticipateRemoteMisses()
        let demand = ImageDemand(manager: services.manager, limit: plan.configuration.fetch.concurrency + 2 * plan.configuration.jobs,
                                 shard: plan.configuration.shard, observe: { [progress] done, total in
                                     progress.update { $0.imagesResolved = done; $0.imagesTotal = total }
                                 })
        var ledger = try await buildPages(triage, inventory, demand: demand)
        if plan.writesSite {
            try completeSite(&ledger, triage, inventory)
            ledger.diagnostics += await cleanUp(ledger, triage, inventory)
            await sealIfSettled(ledger, inventory)
        }
        let images = await demand.resolvedSet()
        let notes = await finish(images)
        return try await conclude(BuildOutcome(inventory: inventory, triage: triage, ledger: ledger, images: images, notes: notes,
                                               counters: services.downloader.stats, remote: services.remote?.stats))
    }
}
