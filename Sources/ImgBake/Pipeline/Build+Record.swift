/// What a build leaves behind besides pages and images: the mirrored site (`--out`), the state the
/// next build starts from, and the removal of outputs nothing uses any more.
extension Build {
    /// With `--out`: every site file not written this build is placed in the output as it is (but the
    /// image files nothing mentions, with `output.originals = "referenced"`: returned, to be removed
    /// if an earlier build placed them). One that cannot be read is a warning naming it, not the end
    /// of the build.
    func mirror(_ inventory: SiteInventory, states: [PageState], placed: inout [String: String],
                _ plan: BuildPlan) throws(BuildError) -> (warnings: [Diagnostic], leftOut: Set<String>) {
        let tree = OutputTree(site: plan.configuration.site, output: plan.configuration.outputRoot)
        let written = Set(states.filter { $0.output != nil }.map(\.path))
        let leftOut = plan.configuration.output.originals == .referenced ? unmentionedOriginals(inventory, written: written, plan) : []
        var warnings: [Diagnostic] = []
        for path in inventory.pages + inventory.otherFiles where !written.contains(path) && !leftOut.contains(path) {
            if case .unreadable(let why) = try tree.mirror(path) {
                warnings.append(Diagnostic(.warning, "\(path): cannot read (\(why)); not copied to the output"))
                continue
            }
            placed[path] = "mirror"
        }
        return (warnings, leftOut)
    }

    /// The site's image files no text of the output names: pages as written (or copied), and every
    /// other text file.
    private func unmentionedOriginals(_ inventory: SiteInventory, written: Set<String>, _ plan: BuildPlan) -> Set<String> {
        let config = plan.configuration
        let images = inventory.otherFiles.filter { ReferenceResolver.hasImageExtension($0) }
        let texts = inventory.pages + inventory.otherFiles.filter(Originals.isText)
        return Originals.unmentioned(images, texts: texts) { path in
            AtomicFile.read((written.contains(path) ? config.outputRoot : config.site) + "/" + path)
        } ?? []
    }

    /// Saves page states, and removes what imgbake placed that nothing uses any more: images no page
    /// refers to, and (with `--out`) copies of files gone from the site. Files it did not place stay.
    ///
    /// "Refers to" is what every page of the site holds after this build, whatever path it took
    /// (unchanged, rewritten, left with a failed image, changed while the build ran): `site.states` has
    /// one per page. When one page could not be read, no image file is removed at all.
    func record(_ site: SiteChanges, _ pages: PagePartition, _ inventory: SiteInventory,
                _ plan: BuildPlan, _ cache: ImageCache) async -> [Diagnostic] {
        let config = plan.configuration
        let present = Set(inventory.pages)
        let gone = pages.previous.keys.filter { !present.contains($0) }
        // By file name: a few hundred names over thousands of pages, not a path per reference.
        var names = Set<String>()
        for state in site.states { names.formUnion(state.images) }
        let imagesPrefix = config.output.imagesDirectory + "/"
        func referenced(_ path: String) -> Bool { path.hasPrefix(imagesPrefix) && names.contains(String(path.dropFirst(imagesPrefix.count))) }
        let everyPageKnown = site.states.allSatisfy(\.imagesKnown) && Set(site.states.map(\.path)).isSuperset(of: present)
        let sitePaths = present.union(inventory.otherFiles)
        do {
            let known = try await cache.placedFiles(root: plan.stateRoot)
            let placed = known.merging(site.placed) { $1 }
            var removed: [String] = []
            let tree = OutputTree(site: config.site, output: config.outputRoot)
            for (path, kind) in placed where !referenced(path) {
                // Whatever placed it (a copy of a site file named like an image, say), a file a page
                // refers to stays.
                let orphan = kind == "image" ? everyPageKnown : (!plan.inPlace && (!sitePaths.contains(path) || site.leftOut.contains(path)))
                guard orphan else { continue }
                tree.remove(path)
                removed.append(path)
            }
            // Only what changed is written (a no-op rebuild of a large site writes no page state), and not
            // again what the batches recorded.
            let changed = site.states[site.recordedStates...].filter { pages.previous[$0.path] != $0 }
            await cache.recordBuild(root: plan.stateRoot, pages: changed, removingPages: gone, outputs: [],
                                        placed: site.placed.filter { known[$0.key] != $0.value }, removed: removed)
            return removed.isEmpty ? [] : [Diagnostic(.note, "removed \(removed.count) output file(s) no page uses any more")]
        } catch {
            return [Diagnostic(.warning, "cache: could not record the build's state: \(error)")]
        }
    }
}
