/// What a build leaves behind besides the pages it built: the state of every other page, the rest of
/// the site copied (`--out`), and the removal of outputs nothing uses any more.
extension BuildRun {
    /// After the stream: the state of every other page of the site (unchanged, or written again from the
    /// cache), and with `--out` the rest of the site copied into the output.
    func completeSite(_ ledger: inout SiteLedger, _ triage: PageTriage, _ inventory: SiteInventory) throws(BuildError) {
        let config = plan.configuration
        // Temporary pages a killed build left beside the ones it was replacing.
        for folder in inventory.folders { StaleTemporaries.remove(in: folder.isEmpty ? config.outputRoot : config.outputRoot + "/" + folder) }
        ledger.states += triage.unchanged
        ledger.filesWritten += triage.restoration.written
        ledger.diagnostics += triage.restoration.notes.map { Diagnostic(.note, $0) }
        for name in triage.restoration.placed { ledger.placed[ledger.imagePath(name)] = .image }
        for path in triage.restored { ledger.placed[path] = .mirror }
        if ledger.filesWrittenAgain > 0 {
            ledger.diagnostics.append(Diagnostic(.note, "wrote \(ledger.filesWrittenAgain) missing image file(s) again that pages still refer to"))
        }
        // Every page has a state by now (built, unchanged, restored); one that has none yet (none
        // should) is left unsettled rather than forgotten.
        let settled = Set(ledger.states.map(\.path))
        for path in inventory.pages where !settled.contains(path) {
            var state = triage.previous[path] ?? PageState(path: path, fingerprint: plan.fingerprint, sourceHash: nil, size: -1, modified: -1,
                                                           output: nil, complete: false, keys: [], images: [])
            state.complete = false
            state.imagesKnown = false
            ledger.states.append(state)
        }
        if !plan.inPlace { try mirror(&ledger, triage, inventory) }
    }

    /// With `--out`: every site file the stream did not place is placed in the output as it is (but the
    /// image files nothing mentions, with `output.originals = "referenced"`: those stay out, and are
    /// removed if an earlier build placed them). One that cannot be read is a warning naming it, not
    /// the end of the build.
    private func mirror(_ ledger: inout SiteLedger, _ triage: PageTriage, _ inventory: SiteInventory) throws(BuildError) {
        let tree = OutputTree(site: plan.configuration.site, output: plan.configuration.outputRoot)
        // Pages the stream or the restore placed, and unchanged pages whose output is a rewrite. (A site
        // file under the images folder's name is copied over an image file of the same name: the same
        // bytes, as the name holds their hash.)
        let handled = Set(ledger.placed.filter { $0.value == .mirror }.keys).union(triage.unchanged.filter { $0.output != nil }.map(\.path))
        if plan.configuration.output.originals == .referenced { ledger.leftOut = unmentionedOriginals(ledger, inventory) }
        for path in inventory.pages + inventory.otherFiles where !handled.contains(path) && !ledger.leftOut.contains(path) {
            if case .unreadable(let why) = try tree.mirror(path) {
                ledger.diagnostics.append(Diagnostic(.warning, "\(path): cannot read (\(why)); not copied to the output"))
                continue
            }
            ledger.placed[path] = .mirror
        }
    }

    /// The site's image files no text of the output names: the pages as written (what each page's
    /// state says it mentions), and every other text file.
    private func unmentionedOriginals(_ ledger: SiteLedger, _ inventory: SiteInventory) -> Set<String> {
        let images = inventory.otherFiles.filter { ReferenceResolver.hasImageExtension($0) }
        let mentioned = Set(ledger.states.flatMap(\.mentions))
        let unmentioned = images.filter { !mentioned.contains(PathName.name($0)) }
        let site = plan.configuration.site
        return Originals.unmentioned(unmentioned, texts: inventory.otherFiles.filter(Originals.isText)) { AtomicFile.read(site + "/" + $0) } ?? []
    }

    /// Removes what imgbake placed that nothing uses any more — image files no page uses (`PageModel.uses`,
    /// as each page's state keeps it), and with `--out` copies of files gone from the site — and saves
    /// the states of pages the stream did not record. Files it did not place stay. When a page's uses
    /// are not known (it could not be read or settled), no image file is removed at all.
    func cleanUp(_ ledger: SiteLedger, _ triage: PageTriage, _ inventory: SiteInventory) async -> [Diagnostic] {
        let config = plan.configuration
        let present = Set(inventory.pages)
        let gone = triage.previous.keys.filter { !present.contains($0) }
        // By file name: a few hundred names over thousands of pages, not a path per reference.
        var names = Set<String>()
        for state in ledger.states { names.formUnion(state.images) }
        let imagesPrefix = config.output.imagesDirectory + "/"
        func used(_ path: OutputPath) -> Bool { path.hasPrefix(imagesPrefix) && names.contains(String(path.dropFirst(imagesPrefix.count))) }
        let everyPageKnown = ledger.states.allSatisfy(\.imagesKnown) && Set(ledger.states.map(\.path)).isSuperset(of: present)
        let sitePaths = present.union(inventory.otherFiles)
        do {
            let known = try await store.placedFiles()
            let placed = known.merging(ledger.placed) { $1 }
            var removed: [OutputPath] = []
            let tree = OutputTree(site: config.site, output: config.outputRoot)
            for (path, kind) in placed where !used(path) {
                // Whatever placed it (a copy of a site file named like an image, say), a file a page
                // uses stays.
                let orphan = switch kind {
                case .image: everyPageKnown
                case .mirror: !plan.inPlace && (!sitePaths.contains(path) || ledger.leftOut.contains(path))
                }
                guard orphan else { continue }
                tree.remove(path)
                removed.append(path)
            }
            // Only what changed is written (a no-op rebuild of a large site writes no page state), and not
            // again what the stream recorded.
            let changed = ledger.states[ledger.recorded...].filter { triage.previous[$0.path] != $0 }
            await store.record(pages: changed, removingPages: gone, placed: ledger.placed.filter { known[$0.key] != $0.value }, removed: removed)
            return removed.isEmpty ? [] : [Diagnostic(.note, "removed \(removed.count) output file(s) no page uses any more")]
        } catch {
            return [Diagnostic(.warning, "cache: could not record the build's state: \(error)")]
        }
    }
}
