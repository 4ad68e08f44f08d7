/// One build: what it works from (`plan`), what it works with (`services`), and its stages as methods.
/// Each stage takes what the stages before it produced, as one value per concept; every effect goes
/// through the journal (`BuildJournal`), which records what it did in the ledger.
///
///     inventory ─▶ triage ──┬─ unchanged ──────────────────────────────────────────────────┐
///     (walk the    (page    └─ to build (new, changed, --out output lost) ─▶ buildPages,   │
///      site)       states,       `window` pages at once:                                    │
///                  seal,         gather (read or kept copy, scan, images) ─▶ PagePlan.make  │
///                  sources)      ─▶ turns in path order ─▶ journal.apply ─▶ SiteLedger ◀────┘
///                      │              ▲         │                              │
///                      └─▶ ImagesFolder ◀───────┘ (is a file there; what a    ▼
///                 ImageDemand ◀── repair ─┘  missing one is written from;  journal.complete (states
///                 (each image once: ImageManager,  the folder's writes)    of every page; --out: the
///                  cache, download, transform)                             rest of the site copied)
///                                                                              │
///     conclude ◀── finish (cache use, uploads, size budget) ◀── journal.seal ◀── journal.cleanUp
///
/// A page is read once, parsed once and written at most once per build. Only what the clean-up needs
/// (page states: names, keys, stamps) is kept for the whole site; a page's bytes live while it is in
/// the stream.
struct BuildRun: Sendable {
    let plan: BuildPlan
    let services: BuildServices
    let progress: BuildProgress

    var store: any SiteStates { services.sites }

    func build() async throws(BuildError) -> BuildResult {
        let seal = plan.trustsSeal ? await store.seal() : nil
        // Without a seal to trust the page states are needed: read while the site is walked.
        async let states = seal == nil ? store.pageStates(withReferences: plan.reports) : [:]
        let inventory = await takeInventory()
        if await holds(seal, inventory) { return try await concludeUnchanged(inventory) }
        // What the site's stylesheets and scripts say of its pages' layout is part of each page's fingerprint.
        let run = BuildRun(plan: await plan.laidOut(inventory, on: services.pages), services: services, progress: progress)
        return try await run.rebuild(inventory, previous: seal == nil ? await states : await store.pageStates())
    }

    /// The stages after the seal did not hold: from the triage of the pages to the conclusion.
    func rebuild(_ inventory: SiteInventory, previous: [String: PageState]) async throws(BuildError) -> BuildResult {
        let demand = ImageDemand(manager: services.manager, limit: plan.configuration.fetch.concurrency + 2 * plan.configuration.jobs,
                                 shard: plan.configuration.shard, observe: { [progress] done, total in
                                     progress.update { $0.imagesResolved = done; $0.imagesTotal = total }
                                 })
        let folder = ImagesFolder(plan, store: store, cache: services.cache, repairs: demand, pool: services.journal)
        var journal = BuildJournal(plan: plan, store: store, folder: folder, pool: services.journal)
        await journal.begin()
        let triage = await self.triage(inventory, previous: previous, folder: folder)
        await services.anticipateRemoteMisses()
        try await buildPages(triage, inventory, demand: demand, journal: &journal)
        if plan.target.writesSite {
            try await journal.complete(triage, inventory)
            await journal.cleanUp(triage, inventory)
            if let seal = await sealIfSettled(journal.ledger, inventory) { await journal.seal(seal) }
        }
        let images = await demand.resolvedSet()
        let notes = await finish(images)
        return try await conclude(BuildOutcome(inventory: inventory, triage: triage, ledger: journal.ledger, images: images, notes: notes,
                                               counters: services.downloader.stats, remote: services.remote?.stats))
    }
}
