import Locking

extension BuildRun {
    /// Pages in flight at once (being gathered and planned, or planned and waiting for their turn):
    /// what memory holds of pages (their bytes and scans) besides their states. Pages waiting for their
    /// images hold a place, so it is also how far page work runs ahead of image work.
    static let window = 256
    /// Pages carried out together once planned in order: their intents are one record.
    static let turn = 32

    /// The page stage: plan pages in parallel, apply each turn through the journal.
    ///
    ///     gather (read, scan, images resolved and checked) ─▶ PagePlan.make ─▶ turns in path order ─▶ journal
    ///
    /// Each page of `triage.toBuild` is gathered and planned on its own task, `window` at a time, on the
    /// page stage's threads (`BuildServices.pages`); plans are handed to the journal in path order as
    /// they are ready, a turn at a time, while later pages are still being planned.
    func buildPages(_ triage: PageTriage, _ inventory: SiteInventory, demand: ImageDemand, journal: inout BuildJournal) async throws(BuildError) {
        let gatherer = await PageGatherer(self, demand: demand, folder: journal.folder, checked: triage.sources)
        let settings = planSettings(inventory)
        let pages = triage.toBuild, pool = services.pages
        var failure: BuildError?
        await withTaskGroup(of: (Int, PagePlan).self) { group in
            var next = 0, running = 0
            var turns = Turns()
            func admit() {
                while failure == nil && next < pages.count && running + turns.waiting < Self.window {
                    let index = next, page = pages[index]
                    group.addTask(executorPreference: pool) { (index, PagePlan.make(await gatherer.gather(page), settings)) }
                    next += 1
                    running += 1
                }
            }
            admit()
            while let (index, plan) = await group.next() {
                running -= 1
                if failure == nil { journal.prepare(plan) }
                turns.add(index, plan)
                // A short turn only when no page is being planned: the window is full of plans waiting (none
                // can be admitted until some are carried out), or nothing more is coming. Forcing one whenever
                // the window is full would shrink turns to a page each once it filled: a record and a hop per page.
                let turn = turns.next(force: running == 0)
                if failure == nil && !turn.isEmpty {
                    do throws(BuildError) { try await journal.apply(turn) } catch { failure = error }
                }
                admit()
            }
        }
        await journal.flush()
        if let failure { throw failure }
    }

    /// What planning needs of the build, the same for every page.
    private func planSettings(_ inventory: SiteInventory) -> PlanSettings {
        // With `--out` and `output.originals = "referenced"`, which of the site's image files each page
        // mentions is kept with its state (the pages are not read again to find out).
        let siteImages = plan.target.mirrorsSite && plan.configuration.output.originals == .referenced
            ? Set(inventory.otherFiles.filter(ReferenceResolver.hasImageExtension).map(PathName.name)) : []
        return plan.planSettings(siteImageNames: siteImages)
    }
}

/// Plans in any order, handed out in path order, a turn of at least `BuildRun.turn` pages at a time.
struct Turns {
    private var ready: [Int: PagePlan] = [:]
    private var handed = 0

    /// Planned and not yet handed out.
    var waiting: Int { ready.count }

    mutating func add(_ index: Int, _ plan: PagePlan) { ready[index] = plan }

    /// The plans ready in order from the next one, when there are enough of them, or any there are when
    /// `force`.
    mutating func next(force: Bool) -> [PagePlan] {
        var count = 0
        while ready[handed + count] != nil { count += 1 }
        guard count >= BuildRun.turn || (force && count > 0) else { return [] }
        defer { handed += count }
        return (handed..<handed + count).compactMap { ready.removeValue(forKey: $0) }
    }
}

/// Everything a page's plan is made from, gathered for one page at a time: its source read once (the
/// site file, or in place the source the cache kept), its one scan, its images resolved — and their
/// cached files checked by the images folder, so that a damaged blob is repaired here, before
/// planning, not found while writing — the files it names that are missing, and a copy the cache kept
/// of it (as this output's last build wrote it when that output is lost, or as a build for another
/// output wrote it).
/// Blocking work (reads, parses, blob checks) runs on the thread of the page's task: the page stage's
/// own (`BuildServices.pages`).
struct PageGatherer: Sendable {
    let plan: BuildPlan
    let store: any SiteStates
    let cache: any BlobFiles
    let demand: ImageDemand
    /// Whether each file a page names is there, and what a missing one is written from.
    let folder: ImagesFolder
    /// The images' originals, checked as pages built elsewhere need them.
    let sources: SourceChecks
    /// Whether a page may be written as a build for another output made it: the plan allows it and
    /// such a build kept pages.
    let reusesPages: Bool
    /// Pages are counted as they are scanned (or found unchanged), not when their images are in.
    let progress: BuildProgress
    /// The bytes of files small enough to be written into a page, each read (and its hash checked) once
    /// per build however many pages use it; nil where the blob could not be read.
    private let inlinable = Locked([BlobID: [UInt8]?]())

    init(_ run: BuildRun, demand: ImageDemand, folder: ImagesFolder, checked sources: SourceCheck) async {
        plan = run.plan
        store = run.store
        cache = run.services.cache
        self.demand = demand
        self.folder = folder
        self.sources = SourceChecks(run: run, checked: sources)
        reusesPages = run.plan.reusesPagesBuiltElsewhere ? await run.store.anyBuiltElsewhere() : false
        progress = run.progress
    }

    func gather(_ page: PageToBuild) async -> PageInput {
        var page = page
        if case .lostOutput(let copy) = page.source {
            if let input = await lost(page, copy) {
                progress.update { $0.pagesUnchanged += 1 }
                return input
            }
            page.source = .siteFile
        }
        var input = PageInput(page: page, source: load(page))
        guard case .success(let loaded) = input.source else { return input }
        if PagePlan.isUnchanged(page, loaded) {
            progress.update { $0.pagesUnchanged += 1 }
            return input
        }
        if let (copy, missing) = await elsewhere(page, loaded) {
            progress.update { $0.pagesUnchanged += 1 }
            input.gathered = .builtElsewhere(copy)
            input.missing = missing
            return input
        }
        progress.update { $0.pagesScanned += 1 }
        guard let model = PageFile.scan(page.path, loaded.bytes, settings: plan.scanSettings)
            .map({ PageModel($0, settings: plan.pageSettings, styles: plan.styles) })
        else {
            input.gathered = .tooDeep
            return input
        }
        input.gathered = .scanned(model)
        let writes = plan.target.writesSite && page.writable
        input.images = await images(of: model, writes: writes)
        input.missing = await missing(model, writes: writes)
        return input
    }

    /// The page's source: the site file, or in place, when the site file is imgbake's rewrite of it,
    /// the source the cache kept.
    private func load(_ page: PageToBuild) -> Result<LoadedPage, PageFile.ReadError> {
        if case .kept(let blob) = page.source, let stamp = page.stamp, let bytes = store.keptPage(blob) {
            return .success(LoadedPage(path: page.path, bytes: bytes, hash: blob, kept: blob, siteStamp: stamp, siteHash: page.previous?.written.last))
        }
        let bytes: [UInt8], stamp: FileStamp
        // A stylesheet the layout read is not read again.
        let taken = plan.styles?.take(page.path).flatMap { $0.0.count <= plan.configuration.maxPageBytes ? $0 : nil }
        switch taken.map(Result.success) ?? PageFile.read(page.path, site: plan.configuration.site, maxBytes: plan.configuration.maxPageBytes) {
        case .success(let read): (bytes, stamp) = read
        case .failure(let problem): return .failure(problem)
        }
        let hash = BlobID(of: bytes)
        var loaded = LoadedPage(path: page.path, bytes: bytes, hash: hash, siteStamp: stamp, siteHash: hash)
        // In place, the site file may be imgbake's own rewrite (touched since, or written by a build
        // stopped before it recorded it): its source is the one the cache kept.
        if plan.target.readsKeptSources, let previous = page.previous, previous.written.contains(hash) {
            if let blob = previous.kept, let source = store.keptPage(blob) {
                loaded.bytes = source
                loaded.hash = blob
                loaded.kept = blob
            } else {
                loaded.notes.append(Diagnostic(.warning, "the source imgbake kept of this page (as its generator wrote it) is gone from the cache: built from the page as it is, whose images are not refreshed until its generator writes it again",
                                               at: SourceLocation(file: page.path, line: 1, column: 1)))
            }
        }
        return .success(loaded)
    }

    /// A copy a build for another output kept of this page, made from the same source with the same
    /// settings and originals (fresh), whose every image file is there or can be written from the cache:
    /// the page may be written from it, not scanned or rewritten. (`--check` and reports read every page.)
    private func elsewhere(_ page: PageToBuild, _ loaded: LoadedPage) async -> (PageElsewhere, [String: MissingFile])? {
        guard reusesPages, page.writable else { return nil }
        candidates: for other in store.builtElsewhere(path: page.path)
        where PageElsewhere.matches(other, fingerprint: plan.fingerprint, sourceHash: loaded.hash) {
            guard let copy = other.kept, await sources.holds(other.keys, other.sources), let bytes = store.keptPage(copy) else { continue }
            let missing = await folder.absent(among: other.images)
            guard missing.values.allSatisfy(\.isWritable) else { continue candidates }
            return (PageElsewhere(state: other, bytes: bytes, hash: copy), missing)
        }
        return nil
    }

    /// With `--out`, a page whose last build holds and whose output is gone: the copy the cache kept of
    /// it as written, when every file it names is there or can be written from the cache. Its site file
    /// is not read (the triage found it with the stamp recorded); nil when the page is to be read and
    /// built instead (the copy is gone or damaged, a file cannot be had).
    private func lost(_ page: PageToBuild, _ copy: BlobID) async -> PageInput? {
        guard let previous = page.previous, let stamp = page.stamp, let sourceHash = previous.sourceHash,
              let bytes = store.keptPage(copy) else { return nil }
        let missing = await folder.absent(among: previous.images)
        guard missing.values.allSatisfy(\.isWritable) else { return nil }
        // The source is known by its hash only: it is not read.
        let source = LoadedPage(path: page.path, bytes: [], hash: sourceHash, siteStamp: stamp)
        var input = PageInput(page: page, source: .success(source))
        input.gathered = .lostOutput(PageElsewhere(state: previous, bytes: bytes, hash: copy))
        input.missing = missing
        return input
    }

    /// The page's images, all asked of the demand at once (`PageImages.ask`; the page waits for its own
    /// only). For a page that is written, the files of each image are checked by the images folder: one
    /// whose blob is missing or damaged has its image resolved again (once per build), which makes it again.
    private func images(of model: PageModel, writes: Bool) async -> PageImages {
        let wanted = model.demand, demand = self.demand
        var images = await PageImages.ask(wanted, of: demand) { waiting in
            await withTaskGroup(of: (OriginalKey, Resolution?).self) { group in
                for image in waiting { group.addTask { (image.key, await demand.resolution(of: image)) } }
                var resolved: [OriginalKey: PageImages.Waited] = [:]
                for await (key, resolution) in group { resolved[key] = resolution.map(PageImages.Waited.resolution) }
                return resolved
            }
        }
        if writes {
            // What the page asks of each image, by key (URLs that name one image ask together).
            var asked: [OriginalKey: ImageDemand.Wanted] = [:]
            for (source, request) in wanted {
                guard let key = images.keys[source] else { continue }
                asked[key] = asked[key].map { ImageDemand.Wanted(key: key, source: $0.source, request: $0.request.union(request)) }
                    ?? ImageDemand.Wanted(key: key, source: source, request: request)
            }
            var whole: [OriginalKey: Resolution] = [:]
            for (key, page) in asked {
                guard let resolution = images.resolutions[page.source] else { continue }
                whole[key] = await folder.whole(resolution, as: page)
            }
            for (source, key) in images.keys { if let resolution = whole[key] { images.resolutions[source] = resolution } }
        }
        if writes && plan.configuration.output.inlineBytes > 0 { images.inline = inlineBytes(images) }
        return images
    }

    /// The bytes of the files small enough to be written into a page (`output.inline_images`), each read
    /// once per build.
    private func inlineBytes(_ images: PageImages) -> [BlobID: [UInt8]] {
        images.smallFiles(limit: plan.configuration.output.inlineBytes) { blob in
            if let known = inlinable.withLock({ $0[blob] }) { return known }
            let bytes: [UInt8]? = if case .found(let bytes) = cache.readBlobHere(blob) { bytes } else { nil }
            inlinable.withLock { $0[blob] = .some(bytes) }
            return bytes
        }
    }

    /// The files the page names that are not in the images folder (`PageModel.uses`, as the clean-up
    /// counts them). `--check` fails on every one; a page that is written has those with an output's
    /// name written again (from the cache, or made again) when its turn comes.
    private func missing(_ model: PageModel, writes: Bool) async -> [String: MissingFile] {
        let lists = plan.target.listsRemaining
        guard lists || writes else { return [:] }
        var missing: [String: MissingFile] = [:]
        for use in model.uses(nil, publicPaths: plan.scanSettings.ownPrefixes)
        where missing[use.name] == nil && (lists || OwnImageReferences.isOutputName(use.name)) && !folder.isThere(use.name) {
            missing[use.name] = lists ? .unavailable("does not exist") : await folder.missingFile(use.name)
        }
        return missing
    }
}
