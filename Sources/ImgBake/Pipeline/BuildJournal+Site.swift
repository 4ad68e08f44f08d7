/// The journal's effects beyond the pages the stream built: the rest of the site, the removal of what
/// nothing uses, the seal. The order, and why a build stopped anywhere in it
/// leaves a site the next build completes, is argued at `BuildJournal`.
extension BuildJournal {
    /// After the stream: the state of every other page of the site (unchanged), temporaries a killed build left in the output's folders removed, and with `--out` the
    /// rest of the site copied into the output.
    mutating func complete(_ triage: PageTriage, _ inventory: SiteInventory) async throws(BuildError) {
        let config = plan.configuration
        let folders = inventory.folders.map { $0.isEmpty ? config.outputRoot : config.outputRoot + "/" + $0 }
        await pool.run { for folder in folders { StaleTemporaries.remove(in: folder) } }
        ledger.states += triage.unchanged
        if ledger.files.again > 0 {
            ledger.diagnostics.append(Diagnostic(.note, "wrote \(ledger.files.again) missing image file(s) again that pages still refer to"))
        }
        // Every page has a state by now (built, restored, unchanged); one that has none yet (none
        // should) is left unsettled rather than forgotten.
        let settled = Set(ledger.states.map(\.path))
        for path in inventory.pages where !settled.contains(path) {
            ledger.states.append(.unsettled(path, previous: triage.previous[path], fingerprint: plan.fingerprint))
        }
        if target.mirrorsSite { try await mirror(triage, inventory) }
    }

    /// With `--out`: every site file the journal did not place is placed in the output as it is (but the
    /// image files nothing mentions, with `output.originals = "referenced"`: those stay out, and are
    /// removed if an earlier build placed them). One that cannot be read is a warning naming it, not
    /// the end of the build.
    private mutating func mirror(_ triage: PageTriage, _ inventory: SiteInventory) async throws(BuildError) {
        let config = plan.configuration
        // Pages placed already, and unchanged pages whose output is a rewrite. (A site file under the
        // images folder's name is copied over an image file of the same name: the same bytes, as the
        // name holds their hash.)
        var handled = Set(ledger.placed.filter { $0.value == .mirror }.keys).union(triage.unchanged.filter { $0.output != nil }.map(\.path))
        // A page left for the next build keeps the output it has (its last rewrite), not a copy of its
        // source with the remote references; one that has none yet gets the copy, so the output is whole.
        let output = config.outputRoot + "/", left = self.left
        handled.formUnion(await pool.run { left.filter { FileStamp.of(output + $0) != nil } })
        if config.output.originals == .referenced { ledger.leftOut = await unmentionedOriginals(inventory) }
        let leftOut = ledger.leftOut
        let paths = (inventory.pages + inventory.otherFiles).filter { !handled.contains($0) && !leftOut.contains($0) }
        // Recorded as placed before they are copied (as the journal's every write is), those not
        // recorded already.
        var known = (try? await store.placedFiles()) ?? [:]
        let ahead = paths.filter { known[$0] != .mirror }
        await store.record(placed: Dictionary(ahead.map { ($0, PlacedFile.mirror) }, uniquingKeysWith: { $1 }))
        for path in ahead { known[path] = .mirror }
        knownPlaced = known
        let tree = OutputTree(site: config.site, output: config.outputRoot)
        let placements = try await pool.run { () throws(BuildError) in try paths.map { path throws(BuildError) in (path, try tree.mirror(path)) } }
        for (path, placement) in placements {
            if case .unreadable(let why) = placement {
                ledger.diagnostics.append(Diagnostic(.warning, "\(path): cannot read (\(why)); not copied to the output"))
                continue
            }
            place(path, .mirror)
        }
    }

    /// The site's image files no text of the output names: the pages as written (what each page's
    /// state says it mentions), and every other text file.
    private func unmentionedOriginals(_ inventory: SiteInventory) async -> Set<String> {
        let images = inventory.otherFiles.filter { ReferenceResolver.hasImageExtension($0) }
        let mentioned = Set(ledger.states.flatMap(\.mentions))
        let unmentioned = images.filter { !mentioned.contains(PathName.name($0)) }
        let site = plan.configuration.site
        return await pool.run {
            Originals.unmentioned(unmentioned, texts: inventory.otherFiles.filter(Originals.isText)) { AtomicFile.read(site + "/" + $0) } ?? []
        }
    }

    /// Removes what imgbake placed that nothing uses any more — image files no page uses (`PageModel.uses`,
    /// as each page's state keeps it), and with `--out` copies of files gone from the site — and records
    /// it with the states not recorded yet, in one transaction. Files it did not place stay. When a
    /// page's uses are not known (it could not be read or settled), no image file is removed at all.
    mutating func cleanUp(_ triage: PageTriage, _ inventory: SiteInventory) async {
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
        let known: [OutputPath: PlacedFile]
        do {
            if let placed = knownPlaced { known = placed } else { known = try await store.placedFiles() }
        } catch {
            ledger.diagnostics.append(Diagnostic(.warning, "cache: could not record the build's state: \(error)"))
            return
        }
        let placed = known.merging(ledger.placed) { $1 }
        let removed = placed.compactMap { path, kind -> OutputPath? in
            // Whatever placed it (a copy of a site file named like an image, say), a file a page uses stays.
            guard !used(path) else { return nil }
            let orphan = switch kind {
            case .image: everyPageKnown
            case .mirror: target.mirrorsSite && (!sitePaths.contains(path) || ledger.leftOut.contains(path))
            }
            return orphan ? path : nil
        }
        let tree = OutputTree(site: config.site, output: config.outputRoot)
        await pool.run { for path in removed { tree.remove(path) } }
        // Only what changed is written (a no-op rebuild of a large site writes no page state), and not
        // again what was recorded.
        let changed = ledger.states[recorded...].filter { triage.previous[$0.path] != $0 }
        recorded = ledger.states.count
        await store.recordOutputs(unrecordedOutputs)
        unrecordedOutputs = []
        await store.record(pages: changed, removingPages: gone, placed: ledger.placed.filter { known[$0.key] != $0.value }, removed: removed)
        unrecordedPlaced = [:]
        if !removed.isEmpty { ledger.diagnostics.append(Diagnostic(.note, "removed \(removed.count) output file(s) no page uses any more")) }
    }

    /// The seal, last: over a site whose every state is recorded (`BuildRun.sealIfSettled` decides).
    func seal(_ seal: SiteSeal) async {
        await store.putSeal(seal)
    }
}
