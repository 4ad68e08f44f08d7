import Foundation

extension BuildRun {
    /// Pages in flight at once (being prepared, or prepared and waiting for their turn to be written):
    /// what memory holds of pages (their bytes and scans) besides their states. Pages waiting for their
    /// images hold a place, so it is also how far page work runs ahead of image work.
    static let window = 256
    /// Page states recorded together (one transaction).
    static let recordBatch = 256
    /// Pages written together once ready in order: in place, the states of those about to be written
    /// over their sources are recorded in one transaction per turn.
    static let turn = 32

    /// Builds `triage.toBuild` as a stream. Each page is prepared on its own as soon as there is room
    /// — read, scanned, given its images as `demand` resolves them, rewritten — and pages are written
    /// in path order as they are ready: the first write a full or read-only disk refuses is the same
    /// one on the next build. Their states are recorded as they are written, a batch at a time.
    func buildPages(_ triage: PageTriage, _ inventory: SiteInventory, demand: ImageDemand) async throws(BuildError) -> SiteLedger {
        var ledger = SiteLedger(report: plan.reports ? ReportBuilder(configuration: plan.configuration, check: plan.check) : nil,
                                imagesDirectory: plan.configuration.output.imagesDirectory)
        // With `--out` and `output.originals = "referenced"`, which of the site's image files each page
        // mentions is kept with its state (the pages are not read again to find out).
        let siteImages = !plan.inPlace && plan.configuration.output.originals == .referenced
            ? Set(inventory.otherFiles.filter(ReferenceResolver.hasImageExtension).map(PathName.name)) : []
        let stream = PageStream(run: self, demand: demand, siteImageNames: siteImages, checked: triage.sources)
        let pages = triage.toBuild
        var failure: BuildError?
        var outputs: [OutputRecord] = []
        await withTaskGroup(of: (Int, PageStream.Prepared).self) { group in
            var next = 0, running = 0
            var turns = Turns()
            func admit() {
                while failure == nil && next < pages.count && running + turns.waiting < Self.window {
                    let index = next, page = pages[index]
                    group.addTask { (index, await stream.prepare(page)) }
                    next += 1
                    running += 1
                }
            }
            admit()
            while let (index, prepared) = await group.next() {
                running -= 1
                turns.add(index, prepared)
                // Early when the window is full or nothing more is coming.
                let turn = turns.next(force: running + turns.waiting >= Self.window || (next == pages.count && running == 0))
                if failure == nil && !turn.isEmpty { failure = await write(turn, stream, into: &ledger, &outputs) }
                admit()
            }
        }
        if plan.writesSite { await record(&ledger, &outputs) }
        if let failure { throw failure }
        return ledger
    }

    /// Pages whose turn came, written; their states recorded once a batch is full. The error that
    /// stops the build, if one does.
    private func write(_ turn: [PageStream.Prepared], _ stream: PageStream, into ledger: inout SiteLedger,
                       _ outputs: inout [OutputRecord]) async -> BuildError? {
        do throws(BuildError) {
            for page in try await stream.write(turn, known: &ledger.namedFiles) { outputs += ledger.add(page) }
        } catch {
            return error
        }
        if plan.writesSite, ledger.states.count - ledger.recorded >= Self.recordBatch { await record(&ledger, &outputs) }
        return nil
    }

    private func record(_ ledger: inout SiteLedger, _ outputs: inout [OutputRecord]) async {
        await store.recordOutputs(outputs)
        outputs = []
        let (pages, placed) = ledger.takeUnrecorded()
        await store.record(pages: pages, placed: placed)
    }
}

/// Pages prepared in any order, handed out to be written in path order, a turn of at least
/// `BuildRun.turn` pages at a time (their records go together).
struct Turns {
    private var ready: [Int: PageStream.Prepared] = [:]
    private var written = 0

    /// Prepared and not yet handed out.
    var waiting: Int { ready.count }

    mutating func add(_ index: Int, _ prepared: PageStream.Prepared) { ready[index] = prepared }

    /// The pages ready in order from the next one to write, when there are enough of them, or any
    /// there are when `force`.
    mutating func next(force: Bool) -> [PageStream.Prepared] {
        var count = 0
        while ready[written + count] != nil { count += 1 }
        guard count >= BuildRun.turn || (force && count > 0) else { return [] }
        defer { written += count }
        return (written..<written + count).compactMap { ready.removeValue(forKey: $0) }
    }
}

/// What every page of the stream shares: the run, the images being resolved, the image files being
/// written, the rewriter.
struct PageStream: Sendable {
    let run: BuildRun
    let demand: ImageDemand
    let files: ImageFiles
    let missing: MissingImageFiles
    /// The images' originals, checked as pages need them (pages built for another output).
    let sources: SourceChecks
    /// Whether a page may be written as a build for another output made it: the plan allows it and
    /// such a build kept pages.
    let reusesPages: Bool
    let rewriter: PageRewriter
    /// With `--out` and `output.originals = "referenced"`: the names of the site's image files, to see
    /// which a page mentions.
    let siteImageNames: Set<String>

    var plan: BuildPlan { run.plan }

    init(run: BuildRun, demand: ImageDemand, siteImageNames: Set<String>, checked: SourceCheck) {
        self.run = run
        self.demand = demand
        self.siteImageNames = siteImageNames
        let config = run.plan.configuration
        files = ImageFiles(cache: run.services.cache, directory: run.plan.imagesFolder)
        missing = MissingImageFiles(run: run, files: files)
        sources = SourceChecks(run: run, checked: checked)
        reusesPages = run.plan.reusesPagesBuiltElsewhere && run.store.anyBuiltElsewhere()
        let cache = run.services.cache
        // Small files in a page's first screen are written into it (`output.inline_images`).
        rewriter = PageRewriter(output: config.output, images: config.images, renderer: run.plan.renderer) { variant in
            guard case .found(let bytes) = cache.readBlobHere(variant.blob) else { return nil }
            return bytes
        }
    }

    /// A page prepared: done (nothing to write), or rewritten in memory and waiting for its turn.
    enum Prepared: Sendable {
        case done(BuiltPage)
        case write(PageDraft)
    }

    /// A page read, scanned, given its images and rewritten, not yet written.
    struct PageDraft: Sendable {
        var page: PageToBuild
        var loaded: LoadedPage
        var built: BuiltPage
        /// Nil for a page nested too deep to parse: it is copied as it is.
        var model: PageModel?
        var images = PageImages()
        var priority: LoadingPriority?
        var rewrite: PageRewrite?
        /// What the site file (in place) or the output file becomes, and its SHA-256 (`shape`).
        var target: [UInt8] = []
        var targetHash: BlobID?
        /// The files of the images folder the page uses once written.
        var uses: [OutputUse] = []
        /// Written as a build for another output made it (`target` is that copy).
        var reused = false

        /// In place, the page imgbake writes over its source.
        var rewritesSource: Bool { targetHash != loaded.hash }
    }

    /// One page, from its source to its rewrite in memory.
    func prepare(_ page: PageToBuild) async -> Prepared {
        let loaded: LoadedPage
        switch load(page) {
        case .success(let page): loaded = page
        case .failure(let problem): return .done(unsettled(page, problem.diagnostic))
        }
        if let unchanged = unchanged(page, loaded) { return .done(unchanged) }
        if let reused = await reuse(page, loaded) { return .write(reused) }
        run.progress.update { $0.pagesScanned += 1 }
        guard let model = model(of: loaded) else { return unparsed(page, loaded) }
        let images = await resolve(model)
        var built = BuiltPage(state: loaded.unsettledState(plan), scanned: true)
        built.references = model.scan.references.count
        built.diagnostics = loaded.notes + model.diagnostics + images.failureWarnings(model)
        let priority = model.priority(output: plan.configuration.output, plan: rewriter.plan, images: images)
        if plan.reports { built.report = report(model, images, priority) }
        guard plan.writesSite else {
            if plan.check { built.remaining = remaining(model, images) }
            return .done(built)
        }
        guard page.writable else {
            // Read for what it uses, never written.
            built.state.images = model.uses(nil, publicPaths: plan.scanSettings.ownPrefixes).map(\.name)
            built.state.imagesKnown = true
            return .done(built)
        }
        var draft = PageDraft(page: page, loaded: loaded, built: built, model: model, images: images, priority: priority)
        if let requests = model.requests {
            draft.rewrite = rewriter.rewrite(model.scan, requests: requests, images: images.image(for:), priority: priority)
        }
        shape(&draft)
        return .write(draft)
    }

    /// A page only touched since its last build (its stamp changed, its bytes did not): left as it is,
    /// with its new stamp.
    private func unchanged(_ page: PageToBuild, _ loaded: LoadedPage) -> BuiltPage? {
        guard page.touched, let previous = page.previous, loaded.isAsBuilt(previous) else { return nil }
        var state = previous
        state.size = loaded.siteStamp.size
        state.modified = loaded.siteStamp.modified
        if !state.written.isEmpty, let hash = loaded.siteHash { state.written = [hash] }
        run.progress.update { $0.pagesUnchanged += 1 }
        var built = BuiltPage(state: state, unchanged: true)
        // With `--out`, its output is the rewrite, which the copying of the rest of the site leaves.
        if !plan.inPlace && state.output != nil { built.placed[page.path] = .mirror }
        return built
    }

    /// A page a build for another output made from the same source, with the same settings and the
    /// same originals (fresh): written from the copy it kept, not scanned or rewritten; its image files
    /// come from the cache by name. (`--check` and reports read every page.)
    private func reuse(_ page: PageToBuild, _ loaded: LoadedPage) async -> PageDraft? {
        guard reusesPages, page.writable else { return nil }
        for other in run.store.builtElsewhere(path: page.path)
        where other.fingerprint == plan.fingerprint && other.sourceHash == loaded.hash && other.complete && other.imagesKnown {
            guard let copy = other.kept, await sources.holds(other.keys, other.sources), await missing.canWrite(other.images),
                  let bytes = run.store.keptPage(copy) else { continue }
            var draft = PageDraft(page: page, loaded: loaded, built: BuiltPage(state: other, reused: true), model: nil)
            draft.reused = true
            draft.target = bytes
            draft.targetHash = copy
            let start = SourceLocation(file: page.path, line: 1, column: 1)
            draft.uses = other.images.map { OutputUse(name: $0, location: start) }
            var state = PageState(path: page.path, fingerprint: plan.fingerprint, sourceHash: loaded.hash, size: loaded.siteStamp.size,
                                  modified: loaded.siteStamp.modified, output: nil, complete: true, keys: other.keys,
                                  sources: other.sources, images: other.images, mentions: mentions(bytes),
                                  references: other.references)
            if plan.inPlace {
                state.kept = loaded.kept ?? run.store.keepPage(loaded.bytes, as: loaded.hash)
                state.written = state.kept == nil ? [] : [copy]
            } else {
                state.kept = copy
            }
            draft.built.state = state
            run.progress.update { $0.pagesUnchanged += 1 }
            return draft
        }
        return nil
    }

    /// The page's images, all asked of the demand at once (the page waits for its own only).
    private func resolve(_ model: PageModel) async -> PageImages {
        let wanted = model.demand
        guard !wanted.isEmpty else { return PageImages() }
        let demand = self.demand
        var (keys, resolved, waiting) = await demand.ask(wanted)
        if !waiting.isEmpty {
            await withTaskGroup(of: (OriginalKey, Resolution?).self) { group in
                for image in waiting { group.addTask { (image.key, await demand.resolution(of: image)) } }
                for await (key, resolution) in group { resolved[key] = resolution }
            }
        }
        var images = PageImages()
        images.keys = keys
        for (source, key) in keys { images.resolutions[source] = resolved[key] }
        return images
    }
}
