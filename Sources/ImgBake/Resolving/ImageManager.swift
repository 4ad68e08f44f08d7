import Synchronization
import Vips

/// The coordinator (SDWebImage's manager, for a batch build), in two stages with their own
/// de-duplication, like Nuke's task pool:
///
/// - the original: cache query, freshness, failure memory, one coalesced download or revalidation
///   per original key per build, however many pages and variant sets wait on it;
/// - the variant set: the variants a request needs, from the index when all are there (no decode),
///   else made from the cached original in one decode, and stored.
///
///     let manager = ImageManager(cache: cache, downloader: downloader, transformer: transformer, ...)
///     switch await manager.resolve(url) { case .resolved(let image, _): ...; case .failed(let why): ... }
public actor ImageManager {
    let cache: ImageCache
    let downloader: any Downloading
    let transformer: any Transforming
    let plan: VariantPlan
    let keyFilter: KeyFilter
    let fetch: FetchSettings
    let placeholder: Placeholder
    let svgPolicy: SVGPolicy
    /// The site folder, for local images (nil: none are read).
    let site: LocalFiles?
    /// The shared cache of other machines, asked after the local one (nil without one).
    let remote: (any RemoteCaching)?
    /// What freshness and failure memory are judged by.
    let clock: any WallClock

    /// One task per original key for the whole build: in flight, then finished (records are small).
    private let originals = TaskPool<OriginalKey, OriginalOutcome>()
    /// One task per variant set while it runs, and nothing once it ended: what an image resolved to is
    /// remembered in one place, the build's demand (`ImageDemand`), which asks here once per image
    /// unless a page wants more than it has or its files need repair. A variant set asked again finds
    /// its files in the index (no decode), and a failed original stays failed in `originals`.
    private let images = TaskPool<ImageKey, Resolution>()
    /// Decoded headers by original blob (two URLs with the same bytes are inspected once).
    private var headers: MemoryCache<BlobID, Inspection>
    init(cache: ImageCache, downloader: any Downloading, transformer: any Transforming, images: ImageSettings,
         fetch: FetchSettings, remote: (any RemoteCaching)? = nil, site: String? = nil,
         clock: any WallClock = SystemClock()) {
        self.cache = cache
        self.remote = remote
        self.downloader = downloader
        self.transformer = transformer
        self.plan = VariantPlan(settings: images)
        self.placeholder = images.placeholder
        self.svgPolicy = images.svg
        self.site = site.map(LocalFiles.init(site:))
        self.keyFilter = KeyFilter(stripQuery: fetch.stripQuery, hostRules: fetch.hostRules)
        self.fetch = fetch
        self.clock = clock
        headers = MemoryCache(costLimit: 8 << 20)
    }

    /// The original key: the filtered URL, or `file:` and the site path of a local image.
    public nonisolated func key(for source: ImageSource) -> OriginalKey {
        switch source {
        case .remote(let url): keyFilter.key(for: url)
        case .local(let path): .siteFile(path)
        }
    }

    /// Resolves `url` with the variants `request` asks for (the configuration's by default): joins the
    /// resolution of the same variant set in flight, or starts one.
    public func resolve(_ url: ImageSource, request: VariantRequest? = nil) async -> Resolution {
        let key = ImageKey(original: self.key(for: url), request: request ?? plan.defaultRequest)
        let (task, _) = images.task(for: key) { Task { await self.load(url, key) } }
        let result = await task.value
        images.forget(key, ifStill: task)
        return result
    }

    /// The image with the variants `request` asks for as the local cache holds them now, or nil when it
    /// holds not all of them: no network, no image work, and nothing remembered (`imgbake serve` names
    /// such an image by a URL of its own and resolves it when the browser asks for that). A cached
    /// original is used however old: the dev server shows what the cache has, as `--offline` does.
    public func cached(_ url: ImageSource, request: VariantRequest? = nil) async -> ResolvedImage? {
        let key = ImageKey(original: self.key(for: url), request: request ?? plan.defaultRequest)
        guard let record = try? await cache.original(key.original),
              case .success(let made) = await variantSet(record, request: key.request, makeMissing: false) else { return nil }
        let credits = await cache.credits(of: record.blob) ?? Credits()
        return image(record, url: url, made, origin: .cached, credits: credits)
    }

    /// Cancels every load still running (at the end of a build that stops early).
    public func cancelAll() {
        originals.cancelAll()
        images.cancelAll()
    }

    // MARK: The original stage

    /// The original for `key`: joins the load in flight or finished in this build, or starts one.
    func original(_ source: ImageSource, _ key: OriginalKey) async -> OriginalOutcome {
        await originals.value(for: key) { Task { await self.loadOriginal(source, key: key, force: false) } }
    }

    /// Asks the origin about `source`'s cached original once for the rest of this manager's life, however
    /// fresh the cache thinks it (a conditional request): `imgbake serve` does so for the site's own
    /// images, which the dev server answers without saying how long they stay as they are. What it
    /// resolves afterwards uses the answer.
    public func revalidate(_ source: ImageSource) async {
        let key = self.key(for: source)
        _ = await originals.value(for: key) { Task { await self.loadOriginal(source, key: key, force: false, revalidate: true) } }
    }

    /// Downloads the original again, whatever the cache says (its blob was damaged).
    func refetchOriginal(_ url: ImageSource, _ key: OriginalKey) async -> OriginalOutcome {
        // Found undecodable by another variant set of it in this build (`markFailed`): not fetched again.
        if let task = originals.current(key), case .failed = await task.value { return await task.value }
        let task = Task { await self.loadOriginal(url, key: key, force: true) }
        originals.replace(key, with: task)
        return await task.value
    }

    /// From now on in this build, the original for `key` is this failure (no new load).
    func markFailed(_ key: OriginalKey, _ failure: ImageFailure) {
        originals.replace(key, with: Task { .failed(failure) })
    }

    nonisolated func now() -> Double { clock.now() }

    func knownInspection(for blob: BlobID) -> Inspection? { headers.value(for: blob) }

    func remember(_ inspection: Inspection, for blob: BlobID) { headers.set(inspection, for: blob, cost: 128) }
}

/// What the original stage produced.
enum OriginalOutcome: Sendable {
    case available(OriginalRecord, origin: ResolutionOrigin, credits: Credits, notes: [String])
    case failed(ImageFailure)

    /// The failure as a resolution (only meaningful for `.failed`).
    var failure: Resolution {
        if case .failed(let failure) = self { return .failed(failure) }
        return .failed(ImageFailure(reason: "the original is available", kind: .fetch(.final)))
    }
}

/// One variant set of one original.
struct ImageKey: Hashable, Sendable {
    var original: OriginalKey
    var request: VariantRequest
}
