import Locking

/// The services one build runs on, with one owner that starts them, locks what they share, and
/// shuts them down — cancelling what is still running and joining every thread it started —
/// however the build ends.
///
/// Threads. The orchestration runs on Swift's cooperative pool, which never blocks; blocking work runs
/// on task executors of its own (`WorkerPool`), each thread count a stage's concurrency limit:
/// - pages: `--jobs` threads (default: the number of cores): the site walked and stamped, page states
///   decoded, pages read, parsed and planned;
/// - journal: `--jobs` threads: pages, image files and kept copies written (apart from the pages'
///   threads, so that a turn's writes never wait in line behind pages being planned);
/// - transform: `--jobs` threads, one libvips pipeline each;
/// - inspect: 1, header reads of downloaded originals (so they are stored and released at once
///   instead of waiting in memory behind long encodes);
/// - cache I/O: 2 (`ImageCache.ioThreads`), SQLite and blob files;
/// - transfers: 1, the owner of every libcurl handle (`--concurrency` transfers at once; a thread, not
///   an executor, because it sleeps in `curl_multi_poll`: see docs/ARCHITECTURE.md);
/// - remote cache: 1 more, with `cache.remote` (its own libcurl session, uploads in the background).
/// On the 2-core machines CI runs on that is 10 threads, of which only the transform ones are busy
/// for long.
final class BuildServices: Sendable {
    let cache: ImageCache
    let downloader: Downloader
    let transformer: Transformer
    let manager: ImageManager
    /// The page stage's threads and the journal's (see above).
    let pages: WorkerPool
    let journal: WorkerPool
    /// What builds know about this site and output (page states, placed files, the seal).
    let sites: any SiteStates
    /// The shared cache (`cache.remote`), unless `--offline` or `--no-remote`.
    let remote: (any RemoteCaching)?
    /// Held while the build uses the cache, so `cache gc` never removes what it uses.
    private let cacheLock: Locked<CacheLock?>
    /// Held for the whole build: one build at a time writes an output. None for `--check`.
    let outputLock: OutputLock?
    /// Removing the temporary files killed builds left among the blobs (256 folders to list) runs
    /// from the start, beside the build's own work; the build waits for it before it ends.
    let sweep: Task<Void, Never>

    /// Runs `body` with the services, and shuts them down afterwards whatever happened.
    static func using<T: Sendable>(_ plan: BuildPlan, clock: any WallClock,
                                   _ body: (BuildServices) async throws(BuildError) -> T) async throws(BuildError) -> T {
        let services = try await BuildServices(plan, clock: clock)
        do {
            let result = try await body(services)
            await services.shutdown()
            return result
        } catch {
            await services.shutdown()
            throw error
        }
    }

    private init(_ plan: BuildPlan, clock: any WallClock) async throws(BuildError) {
        let config = plan.configuration
        outputLock = plan.target.writesSite ? try await OutputLock(folder: config.outputRoot) : nil
        do { cache = try ImageCache(directory: config.cache.directory) } catch {
            throw BuildError(.failed, ImageCache.whyNotOpened(error, directory: config.cache.directory))
        }
        // A read-only cache nobody can lock (no lock file, no way to make one) is used unlocked: this
        // build cannot change it, and the warning at the end says so.
        let lock = cache.readOnly == nil ? try Self.lockCache(config.cache.directory, .shared, wait: true)
                                         : try? Self.lockCache(config.cache.directory, .shared, wait: true)
        cacheLock = Locked(lock ?? nil)
        do {
            transformer = try Transformer(threads: config.jobs,
                                          limits: .init(maxPixels: config.images.maxPixels, maxFrames: config.images.maxFrames))
        } catch {
            throw BuildError(.failed, "cannot start libvips: \(error)")
        }
        // Hosts earlier builds could not resolve fail at once for `unresolvable_ttl`, unless this
        // build is to ask again (--retry-failed, --refresh).
        let hosts = UnresolvableHostsInCache(cache: cache, clock: clock)
        downloader = Downloader(settings: config.fetch, unresolvable: await hosts.remembered(within: config.fetch.unresolvableTTL),
                                believed: !config.fetch.retryFailed && config.fetch.policy != .refresh, memory: hosts)
        remote = Self.remote(plan, local: cache)
        manager = ImageManager(cache: cache, downloader: downloader, transformer: transformer,
                               images: config.madeImages, fetch: config.fetch, remote: remote,
                               site: config.images.local ? config.site : nil, clock: clock)
        pages = WorkerPool(threads: config.jobs, name: "pages")
        journal = WorkerPool(threads: config.jobs, name: "journal")
        sites = SiteStateStore(cache: cache, root: plan.stateRoot, decoding: pages)
        sweep = Task { [cache] in await cache.sweepTemporaries() }
    }

    /// `--offline` means no network at all: not the remote cache either.
    private static func remote(_ plan: BuildPlan, local: ImageCache) -> (any RemoteCaching)? {
        let config = plan.configuration
        guard let settings = config.cache.remote, config.fetch.policy != .offline else { return nil }
        return RemoteCache(settings: settings, local: local, maxOriginalBytes: config.fetch.maxBytes,
                           uploadsEverythingUsed: plan.target.uploadsEverythingUsed)
    }

    /// Before the pages are scanned: with a local cache no build has used (a new CI runner reading
    /// through), every image will be asked of the remote, so its layout marker is asked for now, beside
    /// the scan. A cache that has been used asks nothing until an image misses (a warm build makes no
    /// request, nor does a site without images).
    func anticipateRemoteMisses() async {
        guard let remote, await cache.isUnused() else { return }
        remote.askLayoutAhead()
    }

    /// Lets `cache gc` (and this build's own size-budget pass) take the cache exclusively.
    func releaseCacheLock() { cacheLock.withLock { $0 = nil } }

    static func lockCache(_ directory: String, _ mode: CacheLock.Mode, wait: Bool) throws(BuildError) -> CacheLock? {
        do { return try CacheLock(directory: directory, mode: mode, wait: wait) } catch let error as WriteError {
            throw BuildError(error)
        } catch {
            throw BuildError(.failed, "cannot lock the cache at \(directory): \(error)")
        }
    }

    private func shutdown() async {
        await sweep.value
        await manager.cancelAll()
        await downloader.shutdown()
        await transformer.shutdown()
        // Uploads read what they send from the cache: they finish first.
        await remote?.shutdown()
        // The page stage's and the journal's threads may still be keeping copies into the cache.
        await pages.shutdown()
        await journal.shutdown()
        await cache.shutdown()
        releaseCacheLock()
    }
}
