/// The one place a build changes anything: every effect on the site, the output and the cache's record
/// of them is performed and recorded here, in an order that leaves a build killed at any point with a
/// site the next build completes. The stages before it decide (`PagePlan`); the journal carries out.
///
/// Per turn of pages (`apply`), in this order:
///
/// 1. **Placed files, before they are written.** The image files the turn is about to add to the
///    images folder are recorded as placed by imgbake. Stopped after a write and before its record, a
///    build would leave a file no build knows it may remove; recorded first, the worst is a record of a
///    file that is not there, which the clean-up forgets.
/// 2. **Image files, before the pages that use them.** A page never names a file that is not there
///    yet. Each file is written under a temporary name and renamed, from a blob the cache verified
///    before the page was planned; its name holds its hash, so a file there is the right one.
/// 3. **Kept copies.** In place, the source of each page about to be written over; with `--out`, the
///    page as written. A copy the cache cannot keep is taken out of the page's state before any state
///    names it.
/// 4. **Intents.** In place, the states of the pages about to be written over their sources, in one
///    transaction: each names its kept source and both the rewrite standing in the site now and the one
///    about to. Stopped between the write and the next record, the site file is one of those, so the
///    next build reads the kept source rather than taking imgbake's rewrite for a new source; intents
///    are marked incomplete and unstamped, so that page is built again. With `--out`, the pages about to
///    be written into the output are recorded as placed, as image files are in step 1.
/// 5. **Pages**, in path order: the first write a full or read-only disk refuses is the same one on the
///    next build. In place, a page whose file changed since it was read is left for the next build.
///    Each write is atomic (temporary name, rename).
/// 6. **States**, a batch at a time (`recordBatch`), with the origin of each new image file: a state is
///    recorded only after what it describes is on disk.
///
/// Once the pages are done: the states of the other pages and, with `--out`, the rest of the site copied
/// (`complete`); then the removal of what imgbake placed that nothing uses, recorded in the same
/// transaction as the states not recorded yet (`cleanUp`); then the seal (`seal`), last, and only over a
/// site whose every state is recorded. The seal is removed before anything else is touched (`begin`), so
/// a build stopped anywhere leaves no seal that would let the next build off.
struct BuildJournal: Sendable {
    let plan: BuildPlan
    let store: any SiteStates
    /// The images folder: whether a file is there, and its files written from the cache's blobs, each
    /// once per build.
    let folder: ImagesFolder
    /// Where the journal's blocking writes run (pages, kept copies, copies of site files).
    let pool: WorkerPool
    /// What the journal did; only the journal writes it.
    var ledger: SiteLedger

    // The journal's own bookkeeping (its extension in BuildJournal+Site.swift shares it).
    /// How many of `ledger.states`, from the first, are recorded.
    var recorded = 0
    /// Placed files and image file origins not recorded yet.
    var unrecordedPlaced: [OutputPath: PlacedFile] = [:]
    var unrecordedOutputs: [OutputRecord] = []
    /// Image files whose origin is recorded this build (once each).
    var recordedOutputs: Set<String> = []
    /// What the store says imgbake placed in the output, once the mirror has read it (the clean-up
    /// reads it then, or itself).
    var knownPlaced: [OutputPath: PlacedFile]?
    /// Pages left for the next build (a file changed while the build ran, one damaged since planning):
    /// with `--out`, the output they have stays as it is rather than being replaced by a copy.
    var left: Set<String> = []
    /// Copies being kept for plans whose turn has not come yet, by page (`prepare`).
    let keeping = TaskPool<String, Bool>()
    /// The image names and keys of the pages' states share their storage: a site's pages use a few
    /// hundred images between them, and the states of every page are kept until the clean-up.
    private var strings = Interner()

    /// Page states recorded together (one transaction).
    static let recordBatch = 256

    init(plan: BuildPlan, store: any SiteStates, folder: ImagesFolder, pool: WorkerPool) {
        self.plan = plan
        self.store = store
        self.pool = pool
        self.folder = folder
        ledger = SiteLedger(report: plan.reports ? ReportBuilder(configuration: plan.configuration, check: plan.target.listsRemaining) : nil)
    }

    var target: OutputTarget { plan.target }

    /// Before anything changes: the seal goes (also a seal this imgbake cannot read).
    func begin() async {
        if target.writesSite { await store.putSeal(nil) }
    }

    /// A plan handed in before its turn: the copy it keeps is written now, in the background (a blob
    /// named by its hash, which nothing names until the page's state does at its turn), so that its
    /// turn does not wait for it.
    mutating func prepare(_ plan: PagePlan) {
        guard target.writesSite, let keep = plan.keep else { return }
        keeping.replace(plan.path, with: startKeeping(keep))
    }

    /// Keeps a copy in the cache on the journal's threads; true once it is kept.
    private func startKeeping(_ keep: PagePlan.Write) -> Task<Bool, Never> {
        let store = self.store
        return Task(executorPreference: pool) { store.keepPage(keep.bytes, as: keep.hash) != nil }
    }

    /// Carries out a turn of page plans, in path order (steps 1–6 above). Returns once every page of the
    /// turn is written; the error that stops the build, if one does (a write the disk refused).
    mutating func apply(_ turn: [PagePlan]) async throws(BuildError) {
        guard target.writesSite else {
            for plan in turn { settle(Carried(plan)) }
            return
        }
        await recordPlacedAhead(turn)
        var carried: [Carried] = []
        for plan in turn { carried.append(try await writeImageFiles(plan)) }
        await keepCopies(&carried)
        await recordIntents(carried)
        try await writePages(&carried)
        for page in carried { settle(page) }
        if ledger.states.count - recorded >= Self.recordBatch { await flush() }
    }

    /// A page as the journal carries it out: its plan, and what carrying it out changed.
    private struct Carried {
        let plan: PagePlan
        var state: PageState
        var diagnostics: [Diagnostic]
        var files = ImageFilesWritten()
        /// False once something it needs failed: the page is left for the next build.
        var proceeds = true
        var written = false
        /// With `--out`: the page's output is imgbake's (written or copied).
        var placed = false

        init(_ plan: PagePlan) { (self.plan, state, diagnostics) = (plan, plan.state, plan.diagnostics) }

        /// Left as it was, to be built again next time.
        mutating func leave(_ why: String) {
            proceeds = false
            state = plan.unsettled
            diagnostics.append(Diagnostic(.warning, why, at: SourceLocation(file: plan.path, line: 1, column: 1)))
        }
    }

    /// Step 1: the image files the turn is about to add, recorded as placed before they are written.
    private mutating func recordPlacedAhead(_ turn: [PagePlan]) async {
        var placed: [OutputPath: PlacedFile] = [:]
        for page in turn {
            let missing = page.missing.compactMap { use -> String? in use.file.isWritable ? use.use.name : nil }
            // A file there was recorded when it was placed (or is the user's); one recorded now and
            // written at this turn is there for the next.
            for name in page.imageFiles.map(\.fileName) + missing where !folder.isThere(name) {
                placed[plan.placedImage(name)] = .image
            }
        }
        await store.record(placed: placed)
    }

    /// Step 2: the page's image files (those its rewrite put in, then those it already named that are
    /// missing — removed by hand, by another tool — written again from the cache). A file the cache
    /// cannot give back after all leaves the page for the next build.
    private func writeImageFiles(_ plan: PagePlan) async throws(BuildError) -> Carried {
        var page = Carried(plan)
        guard plan.writes else { return page }
        page.files = try await folder.write(plan.imageFiles)
        if !page.files.damaged.isEmpty {
            page.leave("cache: a file of this page's images was damaged while the build ran; left for the next build")
            return page
        }
        for missing in plan.missing where !folder.isThere(missing.use.name) {
            let why: String
            switch missing.file {
            case .writable(let image):
                var written = try await folder.write([image])
                guard written.damaged.isEmpty else {
                    folder.damaged(missing.use.name)
                    // A page written from a kept copy is that copy only with every file it names.
                    if plan.outcome == .restored || plan.outcome == .reused {
                        page.leave("cache: a file this page names was damaged while the build ran; left for the next build")
                        return page
                    }
                    why = "the cache's copy of it was damaged while the build ran; build again"
                    break
                }
                // Counted, and said, as written again: it was there before (not for a page written as a
                // build for another output made it, whose files this output never had, nor for a page
                // whose whole output was lost, which is said as restored).
                if plan.outcome != .reused && plan.outcome != .restored { written.again = written.placed.count }
                page.files.add(written)
                continue
            case .unavailable(let reason): why = reason
            }
            page.diagnostics.append(Diagnostic(.warning, "refers to \(self.plan.ownPublicPath)\(missing.use.name), which is missing: \(why)",
                                               at: missing.use.location))
        }
        return page
    }

    /// Step 3: the copies the cache keeps (started when the plans came, `prepare`). One it cannot keep
    /// leaves the page's state without it (in place the page then stands as its own source).
    private mutating func keepCopies(_ pages: inout [Carried]) async {
        for index in pages.indices {
            guard let keep = pages[index].plan.keep else { continue }
            // A page left keeps no copy (one started ahead finishes unnamed, as a stray blob would).
            let prepared = keeping.take(pages[index].plan.path)
            guard pages[index].proceeds, !(await (prepared ?? startKeeping(keep)).value) else { continue }
            switch pages[index].state.copy {
            case .rewritten: pages[index].state.copy = .none
            case .written(_, let output): pages[index].state.copy = .written(kept: nil, output: output)
            case .none: break
            }
        }
    }

    /// Step 4: in place, the states of the pages about to be written over their sources; with `--out`,
    /// the pages about to be written into the output, as placed by imgbake. One record.
    private func recordIntents(_ pages: [Carried]) async {
        if target.separateOutput {
            var placed: [OutputPath: PlacedFile] = [:]
            for page in pages where page.proceeds && page.plan.write != nil { placed[page.plan.path] = .mirror }
            await store.record(placed: placed)
            return
        }
        guard target.rewritesSources else { return }
        let intents = pages.compactMap { page -> PageState? in
            guard page.proceeds, let write = page.plan.write, let read = page.plan.read, read.hash != write.hash,
                  case .rewritten(let source, let rewrites) = page.state.copy else { return nil }
            var intent = page.state
            // What is there now still stands for the kept source if the build stops before the write.
            intent.copy = .rewritten(source: source, rewrites: read.standing + rewrites)
            intent.stamp = .unknown
            intent.complete = false
            // The references come with the state once the page is written (until then the stored ones stay).
            intent.references = nil
            return intent
        }
        await store.record(pages: intents)
    }

    /// Step 5: the turn's pages written in path order, on one of the journal's threads (each in place
    /// over its source, or into the output), unless a page already holds those bytes.
    private func writePages(_ pages: inout [Carried]) async throws(BuildError) {
        let writer = PageWrite(target: target, site: plan.configuration.site, outputRoot: plan.configuration.outputRoot)
        let plans = pages.map { $0.proceeds ? $0.plan : nil }
        let done = try await pool.run { () throws(BuildError) in try plans.map { plan throws(BuildError) in try plan.map(writer.perform) } }
        for (index, result) in done.enumerated() {
            switch result {
            case nil, .nothing?: break
            case .changedMeanwhile?: pages[index].leave("changed while imgbake was running; left for the next build")
            case .written(let stamp)?:
                pages[index].state.stamp = stamp
                pages[index].written = true
            case .output(let stamp, let written)?:
                pages[index].placed = true
                pages[index].written = written
                if let stamp { pages[index].state.copy = .written(kept: pages[index].state.kept, output: stamp) }
            }
        }
    }

    /// A page done: its state, what it says, what it placed and counts, into the ledger.
    private mutating func settle(_ carried: Carried) {
        let page = carried.plan, files = carried.files
        if !carried.proceeds { left.insert(page.path) }
        var state = carried.state
        state.images = state.images.map { strings.intern($0) }
        state.keys = state.keys.map { OriginalKey(strings.intern($0.string)) }
        state.mentions = state.mentions.map { strings.intern($0) }
        state.fingerprint = strings.intern(state.fingerprint)
        ledger.states.append(state)
        ledger.diagnostics += carried.diagnostics + files.notes.map { Diagnostic(.note, $0) }
        ledger.remaining += page.remaining
        ledger.pages.count(page, written: carried.written)
        ledger.files.add(files)
        if let entries = page.report { ledger.report?.add(entries) }
        if page.outcome == .unchanged || page.outcome == .restored { ledger.report?.add(unchanged: state) }
        // With `--out`, a page's output is imgbake's: written, copied, or (unchanged) its rewrite as the
        // last build wrote it, which the copying of the rest of the site leaves.
        if carried.placed || (page.outcome == .unchanged && target.separateOutput && state.output != nil) { place(page.path, .mirror) }
        for name in files.placed { place(plan.placedImage(name), .image) }
        let new = page.outputs.filter { !recordedOutputs.contains($0.name) }
        recordedOutputs.formUnion(new.map(\.name))
        unrecordedOutputs += new
    }

    mutating func place(_ path: OutputPath, _ kind: PlacedFile) {
        ledger.placed[path] = kind
        unrecordedPlaced[path] = kind
    }

    /// Step 6: the states and placed files not recorded yet, and the origins of new image files; the
    /// states' references are then let go (recorded with them; a large site's states are mostly those).
    mutating func flush() async {
        guard target.writesSite else { return }
        await store.recordOutputs(unrecordedOutputs)
        unrecordedOutputs = []
        let batch = Array(ledger.states[recorded...])
        for index in ledger.states.indices[recorded...] { ledger.states[index].references = nil }
        recorded = ledger.states.count
        await store.record(pages: batch, placed: unrecordedPlaced)
        unrecordedPlaced = [:]
    }
}

/// Writing one page as its plan says, on the calling thread.
private struct PageWrite: Sendable {
    let target: OutputTarget
    let site: String
    let outputRoot: String

    enum Done: Sendable {
        case nothing
        /// In place: written over its source; the file's stamp.
        case written(FileStamp)
        /// In place: its file changed since it was read; not written.
        case changedMeanwhile
        /// With `--out`: placed (`written`, or copied or found as written before); the output's stamp
        /// when it is imgbake's rewrite.
        case output(FileStamp?, written: Bool)
    }

    func perform(_ plan: PagePlan) throws(BuildError) -> Done {
        guard let write = plan.write, let read = plan.read else { return .nothing }
        let path = plan.path
        if target.rewritesSources {
            guard read.hash != write.hash else { return .nothing }
            guard FileStamp.of(site + "/" + path) == read.stamp,
                  let stamp = try PageWriter(site: site, outputRoot: site).write(path, write.bytes) else { return .changedMeanwhile }
            return .written(stamp)
        }
        if write.isSource {
            // Nothing to change: a copy of the source, from memory.
            try OutputTree(site: site, output: outputRoot).place(path, write.bytes, like: read.stamp)
            return .output(nil, written: false)
        }
        // As the last build wrote it, and still there as it was: not written again.
        if let before = plan.writtenBefore, FileStamp.of(outputRoot + "/" + path) == before { return .output(before, written: false) }
        return .output(try PageWriter(site: site, outputRoot: outputRoot).write(path, write.bytes), written: true)
    }
}
