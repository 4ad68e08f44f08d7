/// The stamps a seal is made of: every site file's (and, with `--out`, its copy's in the output) and
/// the image files' the pages use.
struct SealStamps {
    /// Aligned with `inventory.pages + inventory.otherFiles`.
    var files: [SiteInventory.FileStamps]
    /// Aligned with the image names they were taken for.
    var images: [FileStamp?]

    /// As they are now: the inventory's, and the image files'.
    static func take(_ inventory: SiteInventory, images names: [String], _ plan: BuildPlan) -> SealStamps {
        SealStamps(files: inventory.stamps, images: ImagesFolder.stamps(of: names, plan))
    }

    /// SHA-256 over the settings, the folders, and each file's name and stamps, in inventory order.
    func digest(_ inventory: SiteInventory, images names: [String], _ plan: BuildPlan) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity((files.count + names.count) * 64)
        func add(_ text: String) { bytes += text.utf8; bytes.append(0) }
        func add(_ stamp: FileStamp?) {
            withUnsafeBytes(of: (Int64(stamp?.size ?? -1), stamp?.modified ?? -1)) { bytes += $0 }
        }
        // Each part counted first, so that no two different listings can give the same bytes.
        add("imgbake seal 2")
        add(plan.settingsFingerprint)
        add(plan.target.sealName)
        add("\(inventory.folders.count) folders, \(inventory.linkedPages.count) links, \(files.count) files, \(names.count) images")
        for folder in inventory.folders { add(folder) }
        for page in inventory.linkedPages.sorted() { add(page) }
        for (path, stamps) in zip(inventory.pages + inventory.otherFiles, files) {
            add(path)
            add(stamps.site)
            add(stamps.output)
        }
        for (name, stamp) in zip(names, images) {
            add(name)
            add(stamp)
        }
        return BlobID(of: bytes).hex
    }

    /// The stamps the build left, by its page states: each page's site file as recorded, its copy in
    /// the output as written (or as current as its source when copied), each other file's copy as
    /// current as its source (the mirror made it so), every image file there. Only other files and
    /// image files are looked at: a file changed while the build ran differs from this on the next
    /// check, which then finds nothing sealed. Nil when a page has no state or an image file is missing.
    static func left(by states: [PageState], _ inventory: SiteInventory, images names: [String], _ plan: BuildPlan) -> SealStamps? {
        // By index, not a copy of every state: a large site's states are a good part of the build's memory.
        let byPath = Dictionary(states.indices.map { (states[$0].path, $0) }, uniquingKeysWith: { first, _ in first })
        var files: [SiteInventory.FileStamps] = []
        files.reserveCapacity(inventory.pages.count + inventory.otherFiles.count)
        for path in inventory.pages {
            guard let index = byPath[path] else { return nil }
            let state = states[index]
            files.append(SiteInventory.FileStamps(site: state.stamp, output: plan.target.separateOutput ? state.output ?? state.stamp : nil))
        }
        let site = plan.configuration.site + "/"
        for path in inventory.otherFiles {
            guard let stamp = FileStamp.of(site + path) else { return nil }
            files.append(SiteInventory.FileStamps(site: stamp, output: plan.target.separateOutput ? stamp : nil))
        }
        let images = ImagesFolder.stamps(of: names, plan)
        return images.contains(nil) ? nil : SealStamps(files: files, images: images)
    }
}

extension BuildRun {
    /// True when nothing changed since the last build sealed the site: every file of the site and the
    /// output has the stamp it had then, the page states and placed files are as it recorded them (the
    /// index's triggers remove the seal otherwise), and every image the pages use still has the
    /// original it had, fresh. A build would then find every page unchanged.
    func holds(_ seal: SiteSeal?, _ inventory: SiteInventory) async -> Bool {
        guard let seal, plan.trustsSeal, !inventory.diagnostics.hasWarnings else { return false }
        let plan = self.plan
        let stamps = await services.pages.run { SealStamps.take(inventory, images: seal.images, plan) }
        guard stamps.digest(inventory, images: seal.images, plan) == seal.digest else { return false }
        guard let sources = UInt64(seal.sources, radix: 16) else { return false }
        return await SourceCheck.of(Set(seal.keys), self).holds(seal.keys, SourceDigest(value: sources))
    }

    /// After recording a build that wrote the site: its seal, when every page is settled (read or left
    /// alone, complete, with every image localised and known), every page state recorded, and nothing
    /// about the pages was worth a warning (a build let off would not repeat it). The journal puts it.
    func sealIfSettled(_ ledger: SiteLedger, _ inventory: SiteInventory) async -> SiteSeal? {
        let states = ledger.states
        guard services.cache.unstored == nil, states.count == inventory.pages.count,
              !(inventory.diagnostics + ledger.diagnostics).hasWarnings,
              states.allSatisfy({ $0.complete && $0.imagesKnown && $0.fingerprint == plan.fingerprint }) else { return nil }
        var names = Set<String>(), keys = Set<OriginalKey>()
        for state in states {
            names.formUnion(state.images)
            keys.formUnion(state.keys)
        }
        let sortedNames = names.sorted(), sortedKeys = keys.sorted()
        guard let stamps = await stampsLeft(by: states, inventory, images: sortedNames),
              await store.pageStateCount() == states.count else { return nil }
        // The originals as every page was built from them, each still fresh: a key whose original is
        // stale, or changed since a page was built (by another build sharing the cache), leaves nothing
        // sealed.
        let check = await SourceCheck.of(keys, self)
        guard states.allSatisfy({ check.holds($0.keys, $0.sources) }) else { return nil }
        var sources = SourceDigest()
        for key in sortedKeys {
            guard let term = check.term(key) else { return nil }
            sources.add(term)
        }
        return SiteSeal(digest: stamps.digest(inventory, images: sortedNames, plan), keys: sortedKeys,
                        sources: String(sources.value, radix: 16), images: sortedNames)
    }
}

extension BuildRun {
    /// `SealStamps.left`, on the page stage's threads.
    private func stampsLeft(by states: [PageState], _ inventory: SiteInventory, images: [String]) async -> SealStamps? {
        let plan = self.plan
        return await services.pages.run { SealStamps.left(by: states, inventory, images: images, plan) }
    }
}

extension [Diagnostic] {
    /// Whether any is more than a note.
    var hasWarnings: Bool { contains { $0.severity > .note } }
}
