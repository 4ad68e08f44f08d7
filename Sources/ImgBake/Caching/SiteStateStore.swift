/// What builds know about each site they wrote, beside the images they made: the state of every page,
/// the files placed in each output, the seal of a settled site, and which blob each image file an
/// images folder holds came from. Keyed by a root (a site and its output); the image cache's own
/// entries are the `ImageCache`'s.
///
/// It shares the cache's index and I/O threads (one SQLite file, so that `cache clean` and the seal's
/// triggers see both), and, like the cache, stores nothing once the cache cannot store.
struct SiteStateStore: Sendable {
    let cache: ImageCache
    let root: String
    /// Where the states read are decoded: on a large unchanged site that is a fifth of the build.
    let decoding: WorkerPool

    /// What the last build of this root knew about each page: read on the cache's thread, decoded on
    /// `decoding`'s, a slice at a time (the names and keys of one slice's states share their storage:
    /// a site's pages use a few hundred images between them).
    func pageStates(withReferences: Bool) async -> [String: PageState] {
        guard let rows = try? await cache.run({ [root] index, _ in try index.pageStateRows(root: root, withReferences: withReferences) })
        else { return [:] }
        let decoded = await rows.map(slicesOf: 512, on: decoding) { slice in
            var strings = Interner()
            return slice.compactMap { row in PageStateCodec.decode(row, interning: &strings) }
        }
        var states: [String: PageState] = [:]
        states.reserveCapacity(decoded.count)
        for state in decoded { states[state.path] = state }
        return states
    }

    /// Whether builds of other outputs kept any page (when none did, no page is looked up). In-place
    /// builds count too, though `builtElsewhere` leaves their pages out: the state says which, not the
    /// index.
    func anyBuiltElsewhere() async -> Bool {
        (try? cache.index.hasPageCopies(otherThan: root)) ?? false
    }

    /// The page at `path` as `--out` builds of other outputs left it, each with the copy kept of it:
    /// what a build may write for this output without reading or rewriting anything, when the source,
    /// the settings and the images are the same. (In place, the copy kept is the page's source, not
    /// what was written.) One indexed query, on the calling page's own task as `keptPage` reads are: a
    /// hop to the cache's I/O threads for each page of a large site cost more in thread wake-ups than
    /// the query itself.
    func builtElsewhere(path: String) -> [PageState] {
        ((try? cache.index.pageStatesWithCopies(path: path, otherThan: root)) ?? []).filter { $0.output != nil }
    }

    /// How many page states are recorded; nil when the index cannot say.
    func pageStateCount() async -> Int? {
        try? await cache.run { [root] index, _ in try index.pageStateCount(root: root) }
    }

    /// The seal, if there is a readable one.
    func seal() async -> SiteSeal? {
        try? await cache.run { [root] index, _ in try index.seal(root: root) }
    }

    /// Seals the root (or, with nil, removes its seal).
    func putSeal(_ seal: SiteSeal?) async {
        await cache.store({ [root] index, _ in try index.putSeal(seal, root: root) }, else: { _ in })
    }

    /// Files builds placed under the output.
    func placedFiles() async throws -> [OutputPath: PlacedFile] {
        try await cache.run { [root] index, _ in try index.placedFiles(root: root) }
    }

    /// Saves page states, removes those of pages gone, and records the files placed and removed.
    func record(pages: [PageState], removingPages gone: [String], placed: [OutputPath: PlacedFile], removed: [OutputPath]) async {
        guard !pages.isEmpty || !gone.isEmpty || !placed.isEmpty || !removed.isEmpty else { return }
        await cache.store({ [root] index, _ in
            try index.putPageStates(pages, removing: gone, root: root)
            try index.recordPlaced(placed, removed: removed, root: root)
        }, else: { _ in })
    }

    /// Remembers which blob and image each written image file came from (to write it again if lost).
    func recordOutputs(_ records: [OutputRecord]) async {
        guard !records.isEmpty else { return }
        await cache.store({ index, _ in try index.recordOutputs(records) }, else: { _ in })
    }

    /// What is known about files that builds wrote into images folders, by name.
    func outputRecords(named names: [String]) async -> [OutputRecord] {
        (try? await cache.run { index, _ in try names.compactMap { try index.output(named: $0) } }) ?? []
    }

    /// Keeps a page's bytes (as written with `--out`, or its source in place) as a blob, on the calling
    /// thread. Nil when the cache cannot store. `id`: the bytes' hash.
    func keepPage(_ bytes: [UInt8], as id: BlobID) -> BlobID? {
        guard cache.canStore else { return nil }
        return (try? cache.blobs.writeSmall(bytes, as: id)) == nil ? nil : id
    }

    /// A kept page's bytes, verified; nil when missing or damaged.
    func keptPage(_ id: BlobID) -> [UInt8]? {
        guard case .found(let bytes) = cache.readBlobHere(id) else { return nil }
        return bytes
    }
}
