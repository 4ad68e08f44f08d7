import Foundation
import Locking
/// Pages rewritten in memory, with the image files they refer to already written.
struct RewrittenPages: Sendable {
    /// Aligned with the pages rewritten; nil where the page changed since it was scanned.
    var rewrites: [PageRewrite?]
    var filesWritten: Int
    var placedImages: Set<String>
    var notes: [Diagnostic]
}

/// What a build changed in the output, and the state each page of the site is left in.
struct SiteChanges: Sendable {
    /// One per page of the site.
    var states: [PageState] = []
    /// Output-relative paths placed by this build: `image` or `mirror`.
    var placed: [String: String] = [:]
    /// How many of `states`, from the first, were recorded already, batch by batch (`settle`).
    var recordedStates = 0
    /// Names of the image files recorded so far (by name, to write them again if lost).
    var recordedOutputs: Set<String> = []
    var diagnostics: [Diagnostic] = []
    var filesWritten = 0
    var pagesWritten = 0
    var referencesLocalised = 0
    /// Pages left alone: their image files were seen when they were partitioned.
    var unchanged: Set<String> = []
    /// With `--out` and `output.originals = "referenced"`: the site's image files nothing mentions,
    /// kept out of the output.
    var leftOut: Set<String> = []

    mutating func merge(_ healing: Healing) {
        filesWritten += healing.written
        diagnostics += healing.diagnostics
        placed.merge(healing.placed) { $1 }
    }

    /// What one batch of pages changed, added to the site's (its states recorded already).
    mutating func absorb(_ batch: SiteChanges) {
        precondition(recordedStates == states.count, "recorded states come first")
        states += batch.states
        recordedStates = states.count
        placed.merge(batch.placed) { $1 }
        diagnostics += batch.diagnostics
        filesWritten += batch.filesWritten
        pagesWritten += batch.pagesWritten
        referencesLocalised += batch.referencesLocalised
        recordedOutputs.formUnion(batch.recordedOutputs)
    }
}

extension Build {
    /// Image files first, so a page never points at a file that is not there yet. A damaged cache blob
    /// found on the way is repaired by resolving its image again, and the pages are rewritten with what
    /// the repair produced.
    func writeImagesAndRewrite(_ pages: [RewritablePage], _ images: inout ResolvedSet, _ plan: BuildPlan,
                               _ services: BuildServices) async throws(BuildError) -> RewrittenPages {
        let store = services.cache
        // Small files in a page's first screen are written into it (`output.inline_images`).
        let rewriter = PageRewriter(output: plan.configuration.output, images: plan.configuration.images, renderer: plan.renderer) { variant in
            guard case .found(let bytes) = store.readBlobHere(variant.blob) else { return nil }
            return bytes
        }
        let cache = plan.inPlace ? nil : services.cache
        // Pages are independent: rewritten on every core (a fifth of a warm build's CPU was here, on one).
        let rewriteAll = { (images: ResolvedSet) -> [PageRewrite?] in
            let results = Locked([PageRewrite?](repeating: nil, count: pages.count))
            DispatchQueue.concurrentPerform(iterations: pages.count) { index in
                let page = pages[index]
                var rewrite = self.reload(page.page, plan).map { rewriter.rewrite($0, requests: page.requests, images: images.image(for:)) }
                if let bytes = rewrite?.bytes { rewrite?.rendered = cache?.keepPageHere(bytes) }
                results.withLock { $0[index] = rewrite }
            }
            return results.withLock { $0 }
        }
        var rewrites = rewriteAll(images)
        let emitter = ImageEmitter(cache: services.cache, directory: plan.imagesFolder)
        var emitted = try await emitter.write(rewrites.flatMap { $0?.outputs ?? [] })
        if !emitted.corrupt.isEmpty {
            await services.resolver.reload(emitted.corrupt, into: &images)
            rewrites = rewriteAll(images)
            let again = try await emitter.write(rewrites.flatMap { $0?.outputs ?? [] })
            emitted.written += again.written
            emitted.notes += again.notes
            emitted.placed.formUnion(again.placed)
        }
        return RewrittenPages(rewrites: rewrites, filesWritten: emitted.written, placedImages: emitted.placed,
                              notes: emitted.notes.map { Diagnostic(.note, $0) })
    }

    /// Writes one batch of rewritten pages (in place, or under `--out`), and settles the state of each
    /// page of the batch, rewritten or left alone.
    /// `strings`: the image names of the whole site's states share their storage.
    func writePages(_ rewritten: RewrittenPages, _ pages: [RewritablePage], leftAlone: [ScannedPage], _ images: ResolvedSet,
                    _ plan: BuildPlan, strings: inout Interner) throws(BuildError) -> SiteChanges {
        let config = plan.configuration
        let writer = PageWriter(site: config.site, outputRoot: config.outputRoot, inPlace: plan.inPlace)
        var site = SiteChanges(diagnostics: rewritten.notes, filesWritten: rewritten.filesWritten)
        for name in rewritten.placedImages { site.placed[plan.placedImage(name)] = "image" }
        for (page, rewrite) in zip(pages.map(\.page), rewritten.rewrites) {
            guard let rewrite else {
                site.diagnostics.append(changedWhileRunning(page.scan.file.path))
                continue
            }
            site.diagnostics += rewrite.diagnostics
            site.referencesLocalised += rewrite.localised
            var written: FileStamp?
            if let bytes = rewrite.bytes {
                written = try writer.write(page.scan.file.path, bytes)
                site.pagesWritten += 1
                if !plan.inPlace { site.placed[page.scan.file.path] = "mirror" }
            }
            site.states.append(state(of: page, rewrite: rewrite, written: written, images: images, plan, strings: &strings))
        }
        for page in leftAlone {
            site.states.append(state(of: page, rewrite: nil, written: nil, images: images, plan, strings: &strings))
        }
        return site
    }

    func changedWhileRunning(_ path: String) -> Diagnostic {
        Diagnostic(.warning, "changed while imgbake was running; left for the next build", at: SourceLocation(file: path, line: 1, column: 1))
    }

    /// After the pages read this build: the state of every other page of the site (unchanged, written
    /// again from the cache, or not settled), and with `--out` the rest of the site mirrored.
    func completeSite(_ site: inout SiteChanges, _ pages: PagePartition, _ inventory: SiteInventory, _ plan: BuildPlan) throws(BuildError) {
        // Temporary pages a killed build left beside the ones it was replacing.
        for folder in inventory.folders { StaleTemporaries.remove(in: folder.isEmpty ? plan.configuration.outputRoot : plan.configuration.outputRoot + "/" + folder) }
        site.states += pages.unchanged
        site.merge(pages.restoration)
        site.unchanged = Set(pages.unchanged.map(\.path))
        // A page that changed while the build ran, or could not be read, keeps what it refers to now
        // (and the images stay), with `complete` off so the next build reads it.
        let settled = Set(site.states.map(\.path))
        for path in inventory.pages where !settled.contains(path) {
            site.states.append(unsettledState(path, previous: pages.previous[path], plan))
        }
        if !plan.inPlace {
            let mirrored = try mirror(inventory, states: site.states, placed: &site.placed, plan)
            site.diagnostics += mirrored.warnings
            site.leftOut = mirrored.leftOut
        }
    }

    /// The state of a page this build did not settle: what it refers to is read from the output as it
    /// is now (so its image files stay), and it is read again next time.
    private func unsettledState(_ path: String, previous: PageState?, _ plan: BuildPlan) -> PageState {
        let live = (try? AtomicFile.readWithStamp(plan.configuration.outputRoot + "/" + path)).map {
            OwnImageReferences.inUse(page: path, bytes: $0.0, settings: plan.scanSettings)
        }
        var state = previous ?? PageState(path: path, fingerprint: plan.fingerprint, sourceHash: "", size: -1, modified: -1,
                                          output: nil, complete: false, keys: [], images: [], references: RecordedReferences([]))
        // The stored references stay as they were (nil: not loaded) until the page is read again.
        state.complete = false
        state.imagesKnown = live != nil
        state.images = Array(Set(state.images).union(live ?? [])).sorted()
        return state
    }

    private func state(of page: ScannedPage, rewrite: PageRewrite?, written: FileStamp?, images: ResolvedSet,
                       _ plan: BuildPlan, strings: inout Interner) -> PageState {
        let references = page.scan.references
        let resolved = references.allSatisfy { images.image(for: $0.source) != nil }
        let complete = rewrite != nil && resolved && page.scan.diagnostics.isEmpty && (rewrite?.diagnostics.isEmpty ?? false)
        let inPlaceRewritten = plan.inPlace && written != nil
        // Rewritten in place, the page is now what imgbake wrote: that is the source next time.
        let source = inPlaceRewritten ? written! : page.stamp
        let hash = inPlaceRewritten ? BlobID(of: rewrite!.bytes!).hex : page.hash
        return PageState(
            path: page.scan.file.path, fingerprint: plan.fingerprint, sourceHash: hash, size: source.size, modified: source.modified,
            output: plan.inPlace ? nil : written, rendered: plan.inPlace || written == nil ? nil : rewrite?.rendered, complete: complete,
            keys: inPlaceRewritten && complete ? [] : Array(Set(references.compactMap { images.keyOf[$0.source]?.string })).sorted(),
            images: ownImages(page, rewrite: rewrite, plan).sorted().map { strings.intern($0) },
            references: RecordedReferences(references.map {
                RecordedReference(line: $0.location.line, column: $0.location.column, kind: $0.kind, url: $0.source.description)
            }))
    }

    /// The image files the page refers to as it now is in the output: those its source already used
    /// (rewriting splices only the references it localises, so every use of an output survives it), the
    /// files the rewrite put in, and any mention in the bytes written.
    private func ownImages(_ page: ScannedPage, rewrite: PageRewrite?, _ plan: BuildPlan) -> Set<String> {
        guard let rewrite, let bytes = rewrite.bytes else { return page.ownImages }
        return page.ownImages.union(rewrite.outputs.map(\.fileName))
            .union(OwnImageReferences.fileNames(in: bytes, publicPaths: plan.scanSettings.ownPrefixes))
    }
}
