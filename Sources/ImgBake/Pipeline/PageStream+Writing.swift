extension PageStream {
    /// A page's turn: its image files written (those a rewrite put in, and those it already named that
    /// are missing), then, in place, the states of pages about to be written over their sources
    /// recorded together, then the pages written. Returns what became of each page, in order. Only
    /// this ordered I/O happens here; what each page becomes was shaped when it was prepared.
    /// `known`: the image files named by the turns before, there or recorded as placed.
    func write(_ turn: [Prepared], known: inout Set<String>) async throws(BuildError) -> [BuiltPage] {
        await recordFilesAboutToBePlaced(turn, known: &known)
        var drafts: [PageDraft?] = []
        var built: [BuiltPage] = []
        for prepared in turn {
            switch prepared {
            case .done(let page): drafts.append(nil); built.append(page)
            case .write(var draft):
                try await settle(&draft)
                drafts.append(draft)
                built.append(draft.built)
            }
        }
        if plan.inPlace { await recordIntents(drafts.compactMap { $0 }) }
        for (index, draft) in drafts.enumerated() {
            if let draft { built[index] = try await finish(draft) }
        }
        return built
    }

    /// What the page becomes (the rewrite, or its source as it is: in place, over an earlier rewrite
    /// whose images now fail, the source comes back), the files it uses, and the state it will be in
    /// once written: on the page's own task, beside the others, before its turn.
    func shape(_ draft: inout PageDraft) {
        let loaded = draft.loaded
        guard let model = draft.model else {
            // Too deep to parse: copied as it is.
            draft.target = loaded.bytes
            draft.targetHash = loaded.hash
            return
        }
        let rewrite = draft.rewrite ?? PageRewrite(bytes: nil, outputs: [], diagnostics: [], localised: 0)
        draft.target = rewrite.bytes ?? loaded.bytes
        draft.targetHash = rewrite.bytes.map { BlobID(of: $0) } ?? loaded.hash
        draft.uses = model.uses(rewrite, publicPaths: plan.scanSettings.ownPrefixes)
        draft.built.localised = rewrite.localised
        draft.built.outputs = outputRecords(rewrite, draft.images)
        var state = PageState(path: loaded.path, fingerprint: plan.fingerprint, sourceHash: loaded.hash, size: loaded.siteStamp.size,
                              modified: loaded.siteStamp.modified, output: nil,
                              complete: model.requests != nil && draft.images.resolvesAll(model) && model.scan.diagnostics.isEmpty
                                  && rewrite.diagnostics.isEmpty,
                              keys: Array(Set(draft.images.keys.values)).sorted(),
                              sources: draft.images.sources, images: draft.uses.map(\.name), mentions: mentions(draft.target),
                              references: model.recordedReferences)
        if plan.inPlace && draft.rewritesSource {
            // The source is kept, so that the page can be built again from it when an image changes.
            state.kept = loaded.kept ?? run.store.keepPage(loaded.bytes, as: loaded.hash)
            state.written = state.kept == nil ? [] : draft.targetHash.map { [$0] } ?? []
        } else if !plan.inPlace, rewrite.bytes != nil {
            // The page as written is kept, so that a lost output is written again from the cache.
            state.kept = run.store.keepPage(draft.target, as: draft.targetHash)
        }
        draft.built.state = state
    }

    /// The page's image files written, and those it names that are missing; a rewrite made again
    /// after a damaged blob is shaped again.
    private func settle(_ draft: inout PageDraft) async throws(BuildError) {
        guard let model = draft.model else { return }
        if try await writeImages(&draft, model) { shape(&draft) }
        let rewrite = draft.rewrite ?? PageRewrite(bytes: nil, outputs: [], diagnostics: [], localised: 0)
        draft.built.diagnostics += try await writeMissing(draft.uses, rewrite, &draft.built.files)
        draft.built.diagnostics += rewrite.diagnostics
    }

    /// The rewrite's image files written first, so that a page never points at a file that is not there
    /// yet. A damaged cache blob found on the way is repaired by resolving its image again, and the
    /// page rewritten with what the repair produced (then true).
    private func writeImages(_ draft: inout PageDraft, _ model: PageModel) async throws(BuildError) -> Bool {
        guard let rewrite = draft.rewrite, let requests = model.requests, let priority = draft.priority else { return false }
        let first = try await files.write(rewrite.outputs)
        draft.built.files.add(first)
        guard !first.corrupt.isEmpty else { return false }
        for key in first.corrupt {
            guard let resolution = await demand.reload(key) else { continue }
            for case (let source, .resolved(let image, _)) in draft.images.resolutions where image.key == key {
                draft.images.resolutions[source] = resolution
            }
        }
        draft.rewrite = rewriter.rewrite(model.scan, requests: requests, images: draft.images.image(for:), priority: priority)
        draft.built.files.add(try await files.write(draft.rewrite?.outputs ?? []))
        return true
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
    private func recordIntents(_ drafts: [PageDraft]) async {
        let intents = drafts.compactMap { draft -> PageState? in
            guard draft.rewritesSource, draft.loaded.siteHash != draft.targetHash, draft.built.state.kept != nil else { return nil }
            var intent = draft.built.state
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
    private func finish(_ draft: PageDraft) async throws(BuildError) -> BuiltPage {
        var built = draft.built
        let config = plan.configuration
        if plan.inPlace {
            guard draft.loaded.siteHash != draft.targetHash else { return built }
            let file = config.site + "/" + draft.page.path
            guard FileStamp.of(file) == draft.loaded.siteStamp,
                  let stamp = try PageWriter(site: config.site, outputRoot: config.site).write(draft.page.path, draft.target) else {
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
            try OutputTree(site: config.site, output: config.outputRoot).place(draft.page.path, draft.target, like: draft.loaded.siteStamp)
            return built
        }
        // As the last build wrote it, and still there as it was: not written again.
        if let previous = draft.page.previous, let output = previous.output, previous.kept != nil, previous.kept == built.state.kept,
           FileStamp.of(config.outputRoot + "/" + draft.page.path) == output {
            built.state.output = output
            return built
        }
        built.state.output = try PageWriter(site: config.site, outputRoot: config.outputRoot).write(draft.page.path, draft.target)
        built.written = true
        return built
    }
}
