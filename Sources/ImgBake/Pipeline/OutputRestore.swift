extension BuildRun {
    /// With `--out`: pages whose last build still holds but whose outputs are gone (a wiped `--out`, or
    /// a fresh CI checkout with the cache restored) are written again from the cache by the journal:
    /// their image files first, then the page as that build wrote it, without reading, scanning or
    /// rewriting anything. A page the cache cannot give back whole (a blob gone or damaged, a file it
    /// has no record of) is built like a changed one.
    func restoreLost(_ triage: PageTriage, _ journal: inout BuildJournal) async throws(BuildError) -> PageTriage {
        var triage = triage
        guard !triage.lost.isEmpty else { return triage }
        let lost = triage.lost
        triage.lost = []
        let folder = plan.imagesFolder + "/"
        let missing = await services.pages.run {
            Set(lost.flatMap(\.images)).filter { FileStamp.of(folder + $0) == nil }.sorted()
        }
        let records = missing.isEmpty ? [] : await store.outputRecords(named: missing)
        let images = records.map { OutputImage(fileName: $0.name, blob: $0.blob, bytes: -1, key: $0.key) }
        // A file the cache has no record of cannot be written again: its pages are built.
        let unknown = Set(missing).subtracting(records.map(\.name))
        let written = try await journal.restore(images: images, pages: lost.filter { $0.images.allSatisfy { !unknown.contains($0) } })
        for var state in lost {
            guard let stamp = written[state.path] else {
                triage.toBuild.append(PageToBuild(path: state.path, previous: state, source: .siteFile, stamp: state.stamp))
                continue
            }
            state.copy = .written(kept: state.kept, output: stamp)
            triage.unchanged.append(state)
            triage.restored.insert(state.path)
        }
        triage.toBuild.sort { $0.path < $1.path }
        progress.update { $0.pagesUnchanged = triage.unchanged.count }
        return triage
    }
}
