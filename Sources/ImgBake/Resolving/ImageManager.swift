import Synchronization
import Vips

/// The coordinator (SDWebImage's manager, for a batch build): for each URL, the variant query, the
/// original query, the failure memory, one coalesced download, the transform and the store —
/// according to the fetch policy. One in-flight load per original key, however many pages and
/// variants wait on it; a finished resolution is kept in memory for the rest of the build.
///
///     let manager = ImageManager(cache: cache, downloader: downloader, transformer: transformer, ...)
///     switch await manager.resolve(url) { case .resolved(let image, _): ...; case .failed(let why): ... }
public actor ImageManager {
    let cache: ImageCache
    let downloader: Downloader
    let transformer: Transformer
    let plan: VariantPlan
    let keyFilter: KeyFilter
    let fetch: FetchSettings
    /// Unix seconds; injectable so tests can move time.
    let now: @Sendable () -> Double

    private var inFlight: [OriginalKey: Task<Resolution, Never>] = [:]
    /// Resolved images of this build, within a memory budget.
    private var resolved: MemoryCache<OriginalKey, Resolution>
    /// Failures are kept whatever the budget (they are small), so a failing URL is asked once per build.
    private var failed: [OriginalKey: Resolution] = [:]
    /// Decoded headers by original blob (two URLs with the same bytes are inspected once).
    var headers: MemoryCache<BlobID, SourceInfo>
    /// Loads started (one per key per build, whatever the number of callers).
    public private(set) var loadsStarted = 0

    public init(cache: ImageCache, downloader: Downloader, transformer: Transformer, images: ImageSettings,
                fetch: FetchSettings, memoryLimit: Int = 64 << 20, now: @escaping @Sendable () -> Double) {
        resolved = MemoryCache(costLimit: memoryLimit)
        headers = MemoryCache(costLimit: memoryLimit / 8)
        self.cache = cache
        self.downloader = downloader
        self.transformer = transformer
        self.plan = VariantPlan(settings: images)
        self.keyFilter = KeyFilter(stripQuery: fetch.stripQuery, hostRules: fetch.hostRules)
        self.fetch = fetch
        self.now = now
    }

    public func key(for url: RemoteURL) -> OriginalKey { keyFilter.key(for: url) }

    /// Resolves `url`: from memory, by joining the load already in flight for its key, or by
    /// starting one.
    public func resolve(_ url: RemoteURL) async -> Resolution {
        let key = keyFilter.key(for: url)
        if let done = resolved.value(for: key) ?? failed[key] { return done }
        if let running = inFlight[key] { return await running.value }
        loadsStarted += 1
        let task = Task { await self.load(url, key: key) }
        inFlight[key] = task
        let result = await task.value
        inFlight[key] = nil
        switch result {
        case .resolved(let image, _): resolved.set(result, for: key, cost: Self.cost(of: image))
        case .failed: failed[key] = result
        }
        return result
    }

    /// Approximate bytes a resolved image holds in memory.
    static func cost(of image: ResolvedImage) -> Int {
        256 + image.url.string.utf8.count + image.variants.count * 160
    }

    /// Memory layer figures, for tests and reports.
    public var memory: (entries: Int, cost: Int, limit: Int, evictions: Int) {
        (resolved.count, resolved.totalCost, resolved.costLimit, resolved.evictions)
    }

    func header(for blob: BlobID) -> SourceInfo? { headers.value(for: blob) }

    func remember(_ info: SourceInfo, for blob: BlobID) { headers.set(info, for: blob, cost: 64) }

    /// Forgets what this build knew about `key` and resolves it again (after a corrupt blob was found
    /// while writing outputs).
    public func reload(_ url: RemoteURL) async -> Resolution {
        let key = keyFilter.key(for: url)
        resolved.remove(key)
        failed[key] = nil
        return await resolve(url)
    }
}
