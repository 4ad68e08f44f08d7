// The seams of the page stage and the journal: what they keep about each site (`SiteStates`), what
// they take from the image cache (`BlobFiles`), and what the image manager asks of the shared cache
// (`RemoteCaching`). A build uses `SiteStateStore`, `ImageCache` and `RemoteCache`; tests put the
// in-memory doubles of the tests' support library here (`InMemorySiteStates`, `InMemoryBlobs`,
// `EmptyRemote`), so a page's plan and the journal's effects are tested without a site build around
// them, and no product type carries members that exist only for tests.

/// What builds know about each site they wrote: the state of every page, the files placed in each
/// output, the seal of a settled site, and which blob each image file came from (`SiteStateStore`).
protocol SiteStates: Sendable {
    /// What the last build of this site and output knew about each page; `withReferences` for reports.
    func pageStates(withReferences: Bool) async -> [String: PageState]
    /// Whether builds of other outputs kept any page (when none did, no page is looked up).
    func anyBuiltElsewhere() async -> Bool
    /// The page at `path` as builds of other outputs left it, each with the copy kept of it. Blocking:
    /// called from the page stage's own threads.
    func builtElsewhere(path: String) -> [PageState]
    /// How many page states are recorded; nil when the store cannot say.
    func pageStateCount() async -> Int?
    func seal() async -> SiteSeal?
    /// Seals the site (or, with nil, removes its seal).
    func putSeal(_ seal: SiteSeal?) async
    /// Files builds placed under the output: the only files imgbake may remove there.
    func placedFiles() async throws -> [OutputPath: PlacedFile]
    /// Saves page states, removes those of pages gone, and records the files placed and removed, in
    /// one transaction.
    func record(pages: [PageState], removingPages gone: [String], placed: [OutputPath: PlacedFile], removed: [OutputPath]) async
    /// Remembers which blob and image each written image file came from (to write it again if lost).
    func recordOutputs(_ records: [OutputRecord]) async
    func outputRecords(named names: [String]) async -> [OutputRecord]
    /// Keeps a page's bytes (its source in place, as written with `--out`); nil when it cannot.
    /// Blocking: called from the journal's own threads.
    func keepPage(_ bytes: [UInt8], as id: BlobID) -> BlobID?
    /// A kept page's bytes, verified; nil when missing or damaged. Blocking.
    func keptPage(_ id: BlobID) -> [UInt8]?
}

extension SiteStates {
    func pageStates() async -> [String: PageState] { await pageStates(withReferences: false) }

    func record(pages: [PageState] = [], removingPages gone: [String] = [], placed: [OutputPath: PlacedFile] = [:],
                removed: [OutputPath] = []) async {
        await record(pages: pages, removingPages: gone, placed: placed, removed: removed)
    }
}

/// What the page stage takes from the image cache: the blobs image files are written from, checked
/// before a page is planned (a damaged blob is a resolution problem, not a write's), and the records
/// of originals that say whether a page's images are still what they were (`ImageCache`).
protocol BlobFiles: Sendable {
    /// Writes a verified copy of a blob to `path`; a blob missing or damaged is forgotten by the cache.
    func copyBlob(_ id: BlobID, to path: String) async -> ImageCache.CopyOutcome
    /// Whether a blob is there and whole. A blob this process stored counts as whole without being read
    /// again; one that is not is forgotten with every record naming it, so that its image is made again.
    func checkBlob(_ id: BlobID) async -> Bool
    /// A blob's bytes, verified; blocking (called from the page stage's own threads).
    func readBlobHere(_ id: BlobID) -> BlobStore.ReadResult
    /// The cache's records of these originals (those it has).
    func originals(_ keys: some Sequence<OriginalKey> & Sendable) async throws -> [OriginalKey: OriginalRecord]
}

/// The shared cache (`cache.remote`), as the image manager uses it: asked after the local cache
/// misses, told what the build made (`RemoteCache`).
protocol RemoteCaching: Sendable {
    /// Whether the build uploads every image it uses, not only what it made (a shard build).
    var uploadsEverythingUsed: Bool { get }
    /// The pack of `key`, read into the local cache; nil when the remote has none.
    func localise(_ key: PackKey) async -> PackContents?
    /// An original's bytes, from its blob in the remote; nil when it has none.
    func original(_ id: BlobID) async -> [UInt8]?
    func noteOriginal(_ record: OriginalRecord, credits: Credits, downloaded: Bool)
    func noteVariants(_ rows: [VariantRecord], placeholder: (kind: String, value: String)?, of record: OriginalRecord)
    /// Everything of an image is noted: its pack may be uploaded.
    func imageDone(_ record: OriginalRecord, credits: Credits)
    /// Asks for the remote's layout now, beside the scan.
    func askLayoutAhead()
    /// Waits for the uploads of the build.
    func finishUploads() async
    func diagnostics() -> [Diagnostic]
    var stats: RemoteCounters { get }
    func shutdown() async
}

extension SiteStateStore: SiteStates {}
extension ImageCache: BlobFiles {}
extension RemoteCache: RemoteCaching {}
