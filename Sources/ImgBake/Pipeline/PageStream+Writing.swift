extension PageStream {
    /// A page's turn: its image files written (those a rewrite put in, and those it already named that
    /// are missing), then, in place, the states of pages about to be written over their sources
    /// recorded together, then the pages written. Returns what became of each page, in order.
    /// `known`: the image files named by the turns before, there or recorded as placed.
    func write(_ turn: [Prepared], known: inout Set<String>) async throws(BuildError) -> [BuiltPage] {
        var pages: [PageWrite] = []
        var built: [BuiltPage] = []
        await recordFilesAboutToBePlaced(turn, known: &known)
        for prepared in turn {
            switch prepared {
            case .done(let page): pages.append(PageWrite(done: page))
            case .write(let draft): pages.append(try await settle(draft))
            }
        }
        if plan.inPlace { await recordIntents(pages) }
        for page in pages { built.append(try await finish(page)) }
        return built
    }

    /// A page ready to be written: what it becomes, and the state it will be in.
    struct PageWrite: Sendable {
        var built: BuiltPage
        var draft: PageDraft?
        /// What the site file (in place) or the output file becomes, and its SHA-256.
        var target: [UInt8] = []
        var targetHash = ""

        init(done: BuiltPage) { built = done }

        init(_ draft: PageDraft, target: [UInt8], targetHash: String) {
            built = draft.built
            self.draft = draft
            self.target = target
            self.targetHash = targetHash
        }

        /// In place, the page imgbake writes over its source.
        var rewritesSource: Bool { draft.map { targetHash != $0.loaded.hash } ?? false }
    }

    /// The page's image files written, and its state as it will be once the page is written.
    private func settle(_ draft: PageDraft) async throws(BuildError) -> PageWrite {
        var draft = draft
        guard let model = draft.model else {
            // Too deep to parse: copied as it is.
            return PageWrite(draft, target: draft.loaded.bytes, targetHash: draft.loaded.hash)
        }
        try await writeImages(&draft, model)
        let rewrite = draft.rewrite ?? PageRewrite(bytes: nil, outputs: [], diagnostics: [], localised: 0)
        let uses = model.uses(rewrite, publicPaths: plan.scanSettings.ownPrefixes)
        draft.built.diagnostics += try await writeMissing(uses, rewrite, &draft.built.files)
        draft.built.diagnostics += rewrite.diagnostics
        draft.built.localised = rewrite.localised
        draft.built.outputs = outputRecords(rewrite, draft.images)
        // What the page becomes: the rewrite, or its source as it is (in place, over an earlier rewrite
        // whose images now fail, the source comes back).
        let target = rewrite.bytes ?? draft.loaded.bytes
        var write = PageWrite(draft, target: target, targetHash: rewrite.bytes.map { BlobID(of: $0).hex } ?? draft.loaded.hash)
        let loaded = draft.loaded
        var state = PageState(path: loaded.path, fingerprint: plan.fingerprint, sourceHash: loaded.hash, size: loaded.siteStamp.size,
                              modified: loaded.siteStamp.modified, output: nil,
                              complete: model.requests != nil && draft.images.resolvesAll(model) && model.scan.diagnostics.isEmpty
                                  && rewrite.diagnostics.isEmpty,
                              keys: Array(Set(model.scan.references.map { run.services.manager.key(for: $0.source) })).sorted(),
                              sources: draft.images.sources, images: uses.map(\.name), mentions: mentions(target),
                              references: model.recordedReferences)
        if plan.inPlace && write.rewritesSource {
            // The source is kept, so that the page can be built again from it when an image changes.
            state.kept = loaded.kept ?? run.store.keepPage(loaded.bytes)
            state.written = state.kept == nil ? [] : [write.targetHash]
        } else if !plan.inPlace, let bytes = rewrite.bytes {
            // The page as written is kept, so that a lost output is written again from the cache.
            state.kept = run.store.keepPage(bytes)
        }
        write.built.state = state
        return write
    }

    /// The rewrite's image files written first, so that a page never points at a file that is not there
    /// yet. A damaged cache blob found on the way is repaired by resolving its image again, and the
    /// page rewritten with what the repair produced.
    private func writeImages(_ draft: inout PageDraft, _ model: PageModel) async throws(BuildError) {
        guard let rewrite = draft.rewrite, let requests = model.requests, let priority = draft.priority else { return }
        let first = try await files.write(rewrite.outputs)
        draft.built.files.add(first)
        guard !first.corrupt.isEmpty else { return }
        for key in first.corrupt {
            guard let resolution = await demand.reload(key) else { continue }
            for case (let source, .resolved(let image, _)) in draft.images.resolutions where image.key == key {
                draft.images.resolutions[source] = resolution
            }
        }
        draft.rewrite = rewriter.rewrite(model.scan, requests: requests, images: draft.images.image(for:), priority: priority)
        draft.built.files.add(try await files.write(draft.rewrite?.outputs ?? []))
    }

    /// Files the page names that are not there (removed by hand, by another tool, by an older imgbake),
    /// written again from the cache, or made again; what cannot be is a warning where the page names it.
    private func writeMissing(_ uses: [OutputUse], _ rewrite: PageRewrite, _ written: inout ImageFilesWritten) async throws(BuildError) -> [Diagnostic] {
        let made = Set(rewrite.outputs.map(\.fileName))
        let folder = plan.imagesFolder + "/"
        var diagnostics: [Diagnostic] = []
        for use in uses where !made.contains(use.name) && OwnImageReferences.isOutputName(use.name) && FileStamp.of(folder + use.name) == nil {
            switch try await missing.writeAgain(use.name) {
            case .written(let files):
                written.add(files)
                written.again += files.placed.count
            case .unavailable(let why):
                diagnostics.append(Diagnostic(.warning, "refers to \(plan.ownPublicPath)\(use.name), which is missing: \(why)", at: use.location))
            }
        }
        return diagnostics
    }

    private func outputRecords(_ rewrite: PageRewrite, _ images: PageImages) -> [OutputRecord] {
        var urls: [OriginalKey: String] = [:]
        for case .resolved(let image, _) in images.resolutions.values { urls[image.key] = image.url.serialized }
        return rewrite.outputs.compactMap { output in
            urls[output.key].map { OutputRecord(name: output.fileName, blob: output.blob, key: output.key, url: $0) }
        }
    }

    /// With `--out` and `output.originals = "referenced"`: the site's image files the page mentions.
    private func mentions(_ bytes: [UInt8]) -> [String] {
        guard !siteImageNames.isEmpty else { return [] }
        return Originals.mentioned(in: bytes, among: siteImageNames).sorted()
    }

    /// The image files the turn is about to write, recorded as placed by imgbake before they are: a
    /// build stopped after writing one and before recording it would otherwise leave a file no build
    /// knows it may remove.
    private func recordFilesAboutToBePlaced(_ turn: [Prepared], known: inout Set<String>) async {
        let folder = plan.imagesFolder + "/", directory = plan.configuration.output.imagesDirectory + "/"
        var placed: [OutputPath: PlacedFile] = [:]
        for case .write(let draft) in turn {
            for output in draft.rewrite?.outputs ?? [] where !known.contains(output.fileName) {
                known.insert(output.fileName)
                if FileStamp.of(folder + output.fileName) == nil { placed[directory + output.fileName] = .image }
            }
        }
        await run.store.record(pages: [], placed: placed)
    }

    /// In place, before pages are written over their sources: their states, saying which source the
    /// cache kept and which rewrite is about to stand in the site, in one record. A build stopped
    /// between a write and the record of its batch still leaves states that know the pages' sources.
    private func recordIntents(_ pages: [PageWrite]) async {
        let intents = pages.compactMap { page -> PageState? in
            guard let draft = page.draft, page.rewritesSource, draft.loaded.siteHash != page.targetHash, page.built.state.kept != nil
            else { return nil }
            var intent = page.built.state
            // What is there now still stands for the kept source if the build stops before the write.
            intent.written = (draft.loaded.kept != nil ? draft.loaded.previous?.written ?? [] : []) + intent.written
            intent.size = -1
            intent.modified = -1
            intent.complete = false
            return intent
        }
        await run.store.record(pages: intents)
    }

    /// Writes the page (in place over its source, or into the output) unless it already holds those
    /// bytes, and settles its state.
    private func finish(_ page: PageWrite) async throws(BuildError) -> BuiltPage {
        guard let draft = page.draft else { return page.built }
        var built = page.built
        let config = plan.configuration
        if plan.inPlace {
            guard draft.loaded.siteHash != page.targetHash else { return built }
            let file = config.site + "/" + draft.page.path
            guard FileStamp.of(file) == draft.loaded.siteStamp,
                  let stamp = try PageWriter(site: config.site, outputRoot: config.site).write(draft.page.path, page.target) else {
                built.state = draft.loaded.unsettledState(plan)
                built.diagnostics.append(Diagnostic(.warning, "changed while imgbake was running; left for the next build",
                                                    at: SourceLocation(file: draft.page.path, line: 1, column: 1)))
                return built
            }
            built.state.size = stamp.size
            built.state.modified = stamp.modified
            built.written = true
            return built
        }
        built.placed[draft.page.path] = .mirror
        guard draft.rewrite?.bytes != nil else {
            // Nothing to change: a copy of the source, from memory.
            try OutputTree(site: config.site, output: config.outputRoot).place(draft.page.path, page.target, like: draft.loaded.siteStamp)
            return built
        }
        // As the last build wrote it, and still there as it was: not written again.
        if let previous = draft.page.previous, let output = previous.output, previous.kept != nil, previous.kept == built.state.kept,
           FileStamp.of(config.outputRoot + "/" + draft.page.path) == output {
            built.state.output = output
            return built
        }
        built.state.output = try PageWriter(site: config.site, outputRoot: config.outputRoot).write(draft.page.path, page.target)
        built.written = true
        return built
    }
}
