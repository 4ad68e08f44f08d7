import Foundation
import Locking

/// `imgbake serve`'s side of the library: the pages a generator's dev server answers, each rendered as a
/// build renders a page it writes (`PageRendering`, which `PagePlan` uses; a served page has no site
/// file, state or journal, so it is not planned), and the image files those pages name, answered from
/// the cache. Nothing is written but the cache.
///
///     upstream page ─▶ scan ─▶ PageModel ─▶ images: made before (cache) │ not yet (a pending URL) ─▶ PageRendering ─▶ bytes
///     /_img/NAME ─▶ a file a page was given: its blob
///     /_img/pending/ID ─▶ ImageDemand (coalesced per image) ─▶ the widest file in the source's format
///
/// A page never waits for an image to be made. An image whose variants are all in the cache is written
/// as a build writes it (the same names, `srcset`, `sizes`, `<picture>`, LCP choice, inlining). One that
/// is not is given one URL of its own, `pending/` and an id of its original key (a file's name holds its
/// hash, unknown until it is made): asking for it makes every variant the page wants in one resolution
/// and answers the widest file in the source's format; the next view of the page has the full markup.
/// The site's own images are fetched from the dev server, which has them, and asked about again once a
/// session (the dev server says nothing of how long they stay as they are).
public final class ServedSite: Sendable {
    let plan: BuildPlan
    let services: BuildServices
    let demand: ImageDemand
    let settings: PageRendering.Settings
    /// The dev server the pages come from, which also serves the site's own images.
    public let upstream: RemoteURL
    /// The path the browser asks image files under (`output.public_path`, made local when it is a CDN's).
    public let imagesPath: String
    /// Files pages were given, by name: what each is read from.
    private let files = Locked([String: ServedFile]())
    /// Images not made yet, by the id in their URL.
    private let pending = Locked([String: PendingImage]())
    private let counters = Locked(ServeTotals())
    /// Lines for the terminal: an image made, or failed.
    private let announce: @Sendable (String) -> Void
    /// Pages rewritten with every image named by its files, by where they are and the dev server's
    /// bytes: most pages come again unchanged (a reload, a second visit), and their rewrite stays the
    /// same while their images do, which they do for the session (the cache is locked against `cache
    /// gc` while imgbake serves). 64 MiB of them at most.
    private let rewrites = Locked(MemoryCache<PageKey, ServedPage>(costLimit: 64 << 20))

    private struct PageKey: Hashable, Sendable {
        var path: String
        var bytes: BlobID
        /// The styles' (`ServedStyles.generation`) it was planned with.
        var styles: Int
    }
    /// The page's stylesheets and scripts, fetched from the dev server.
    let styles: ServedStyles
    /// The files each page's layout read when it was last planned, to ask about again when it comes back.
    private let pageFiles = Locked([String: ServedStyles.Files]())

    private struct ServedFile {
        var blob: BlobID
        var contentType: String
    }

    private struct PendingImage {
        var wanted: ImageDemand.Wanted
        /// Where the browser is sent when the image fails: the URL as the page meant it.
        var original: String
        /// A site's own image, from the dev server: asked about again before it is first used.
        var fromDevServer: Bool
    }
    /// The site's own images asked about again in this session.
    private let revalidated = Locked(Set<OriginalKey>())

    /// Runs `body` with the site's services (cache, downloader, libvips), shut down afterwards.
    public static func using<T: Sendable>(_ given: Configuration, upstream: RemoteURL, clock: any WallClock = SystemClock(),
                                          announce: @escaping @Sendable (String) -> Void = { _ in },
                                          _ body: @Sendable (ServedSite) async throws -> T) async throws -> T {
        var config = given
        // The browser asks the proxy for every file: a CDN public path would send it elsewhere.
        if config.output.publicPathIsAbsolute { config.output.publicPath = config.output.localPublicPath }
        // A dev server on loopback writes its own URLs as localhost (Hugo) or 127.0.0.1: both reach it.
        let port = upstream.effectivePort, address = upstream.host == "localhost" ? "127.0.0.1" : upstream.host
        config.fetch.connectTo += Self.names(ofHost: upstream.host).map { "\($0):\(port):\(address):\(port)" }
        // The dev server is where the user said it is: its images may be fetched, loopback or not.
        let plan = try BuildPlan(serving: config, now: clock.now())
        let result: Result<T, any Error> = try await BuildServices.using(plan, clock: clock) { services throws(BuildError) in
            let demand = ImageDemand(manager: services.manager, limit: config.fetch.concurrency + 2 * config.jobs, shard: nil)
            let site = ServedSite(plan: plan, services: services, demand: demand, upstream: upstream, announce: announce)
            do { return .success(try await body(site)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    private init(plan: BuildPlan, services: BuildServices, demand: ImageDemand, upstream: RemoteURL,
                 announce: @escaping @Sendable (String) -> Void) {
        self.plan = plan
        self.announce = announce
        self.services = services
        self.demand = demand
        self.upstream = upstream
        settings = plan.renderingSettings
        imagesPath = plan.ownPublicPath
        styles = ServedStyles(downloader: services.downloader, upstream: upstream, siteRoot: plan.configuration.output.siteRoot,
                              settings: plan.scanSettings)
    }

    /// The names a dev server at `host` writes its own URLs with.
    public static func names(ofHost host: String) -> [String] {
        ["127.0.0.1", "localhost"].contains(host) ? ["127.0.0.1", "localhost"] : [host]
    }

    /// What the session has done so far.
    public var totals: ServeTotals { counters.withLock { $0 } }

    // MARK: Pages

    /// The path a page answered at `urlPath` with `contentType` has in the site, as a build would find
    /// it (`/posts/a/` is `posts/a/index.html`; under `output.site_root`), or nil when such a response is
    /// not a page imgbake rewrites (HTML, CSS, RSS, Atom, JSON Feed) or is outside the site.
    public func sitePath(urlPath: String, contentType: String) -> String? {
        Self.sitePath(urlPath: urlPath, contentType: contentType, siteRoot: plan.configuration.output.siteRoot)
    }

    static func sitePath(urlPath: String, contentType: String, siteRoot: String) -> String? {
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let ext: String
        switch type {
        case "text/html", "application/xhtml+xml": ext = "html"
        case "text/css": ext = "css"
        case "application/rss+xml", "application/atom+xml", "application/xml", "text/xml": ext = "xml"
        case "application/feed+json", "application/json": ext = "json"
        default: return nil
        }
        let decoded = String(urlPath.prefix { $0 != "?" && $0 != "#" }).removingPercentEncoding ?? urlPath
        guard decoded.hasPrefix(siteRoot) || decoded + "/" == siteRoot else { return nil }
        var path = String(decoded.dropFirst(min(siteRoot.count, decoded.count)))
        while path.hasPrefix("/") { path.removeFirst() }
        if path.isEmpty || path.hasSuffix("/") { return path + "index." + ext }
        if SourceFile.kind(forPath: path) == SourceFile.kind(forPath: "x." + ext) { return path }
        return path + "." + ext
    }

    /// The page as a build would write it, for the browser; its images not in the cache yet are named by
    /// pending URLs. Never waits for an image to be made. Parsing and planning run on the page stage's
    /// threads (`--jobs` of them), as in a build, however many requests come at once.
    public func page(_ bytes: [UInt8], sitePath path: String) async -> ServedPage {
        await withTaskExecutorPreference(services.pages) { await self.planned(bytes, sitePath: path) }
    }

    private func planned(_ bytes: [UInt8], sitePath path: String) async -> ServedPage {
        if let files = pageFiles.withLock({ $0[path] }) { await styles.refresh(files) }
        if var again = rewrites.withLock({ $0.value(for: PageKey(path: path, bytes: BlobID(of: bytes), styles: styles.generation)) }) {
            again.remembered = true
            counters.withLock { $0.pages += 1 }
            return again
        }
        guard let scan = PageFile.scan(path, bytes, settings: plan.scanSettings) else {
            var page = ServedPage()
            page.diagnostics = [PageFile.tooDeep(path, bytes).diagnostic]
            return page
        }
        if let inputs = scan.styles {
            await styles.prepare(inputs)
            pageFiles.withLock { $0[path] = ServedStyles.Files(inputs) }
        }
        let key = PageKey(path: path, bytes: BlobID(of: bytes), styles: styles.generation)
        let model = PageModel(scan, settings: plan.pageSettings, styles: styles)
        let (images, counts) = await self.images(of: model)
        let rendering = PageRendering.render(model, images, settings)
        files.withLock { files in
            for file in rendering.files {
                files[file.fileName] = ServedFile(blob: file.blob, contentType: Self.contentType(of: file.fileName))
            }
        }
        var page = ServedPage(counts)
        page.bytes = rendering.bytes.flatMap { $0 == bytes ? nil : $0 }
        page.references = rendering.references
        page.diagnostics = rendering.diagnostics
        counters.withLock { $0.pages += 1 }
        if page.images.pending == 0 {
            let cost = (page.bytes?.count ?? 0) + 256
            rewrites.withLock { $0.set(page, for: key, cost: cost) }
        }
        return page
    }

    /// The page's images: each one resolved earlier in this session or wholly in the cache, or else a
    /// pending URL (the page asks for them all at once, as a build's pages do: `PageImages.ask`).
    private func images(of model: PageModel) async -> (PageImages, ServedPage.Images) {
        let wanted = model.demand
        var images = await PageImages.ask(wanted, of: demand, fetchedFrom: fetchedFrom) { waiting in
            var known: [OriginalKey: PageImages.Waited] = [:]
            for image in waiting {
                let written = wanted.first { fetchedFrom($0.0) == image.source }?.0
                let fromDevServer = written.map { if case .local = $0 { true } else { false } } ?? false
                if !fromDevServer || revalidated.withLock({ $0.contains(image.key) }),
                   let cached = await services.manager.cached(image.source, request: image.request) {
                    known[image.key] = .resolution(.resolved(cached, notes: []))
                } else {
                    let id = waitFor(image, original: written.map(browserURL) ?? image.source.description, fromDevServer: fromDevServer)
                    known[image.key] = .pending(imagesPath + "pending/" + id)
                }
            }
            return known
        }
        var counts = ServedPage.Images()
        var counted: Set<OriginalKey> = []
        for (source, key) in images.keys where counted.insert(key).inserted {
            if images.pending[source] != nil {
                counts.pending += 1
            } else if case .failed? = images.resolutions[source] {
                counts.failed += 1
            } else if images.resolutions[source] != nil {
                counts.cached += 1
            }
        }
        if plan.configuration.output.inlineBytes > 0 {
            images.inline = images.smallFiles(limit: plan.configuration.output.inlineBytes) { blob in
                if case .found(let bytes) = services.cache.readBlobHere(blob) { bytes } else { nil }
            }
        }
        return (images, counts)
    }

    /// The URL the browser is sent to for an image that failed: the site's own at its path under the site
    /// root, a remote one as it is.
    private func browserURL(_ source: ImageSource) -> String {
        guard case .local(let path) = source else { return source.description }
        return plan.configuration.output.siteRoot + path
    }

    /// A site's own image is fetched from the dev server, which has it (there is no site folder).
    private func fetchedFrom(_ source: ImageSource) -> ImageSource {
        guard case .local(let path) = source else { return source }
        let escaped = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        return RemoteURL.resolve(plan.configuration.output.siteRoot + escaped, against: upstream).map(ImageSource.remote) ?? source
    }

    /// The id of an image's pending URL (from its key: the same image, the same URL on every page), with
    /// what this page asks of it added to what earlier pages asked.
    /// A new one starts being made at once, before the browser asks (an image no request asks for, as a
    /// social card's, is made too, and the page's next view names its files).
    private func waitFor(_ image: ImageDemand.Wanted, original: String, fromDevServer: Bool) -> String {
        let id = String(BlobID(of: Array(image.key.string.utf8)).hex.prefix(20))
        let isNew = pending.withLock { pending in
            if var known = pending[id] {
                known.wanted.request = known.wanted.request.union(image.request)
                pending[id] = known
                return false
            }
            pending[id] = PendingImage(wanted: image, original: original, fromDevServer: fromDevServer)
            return true
        }
        if isNew { Task { _ = await resolve(id) } }
        return id
    }

    // MARK: Image files

    /// Blocking work of a request (a page's inflation), on the page stage's threads rather than Swift's
    /// cooperative pool, which awaiting tasks share.
    public func onPageThreads<T: Sendable>(_ work: () -> T) async -> T {
        await services.pages.run(work)
    }

    /// The answer to a request for `name` under `imagesPath`: a file a page was given, or a pending
    /// image made now; nil when it is neither (the dev server is asked). Its blob is read on the page
    /// stage's threads.
    public func image(named name: String) async -> ServedImage? {
        await withTaskExecutorPreference(services.pages) { await self.answer(name) }
    }

    private func answer(_ name: String) async -> ServedImage? {
        if name.hasPrefix("pending/") { return await make(String(name.dropFirst("pending/".count))) }
        guard let file = files.withLock({ $0[name] }) else { return nil }
        guard case .found(let bytes) = services.cache.readBlobHere(file.blob) else {
            return .missing("\(name): its blob is gone from the cache or damaged (`imgbake cache verify` finds such blobs; the next build makes them again)")
        }
        return .file(bytes: bytes, contentType: file.contentType, immutable: true)
    }

    /// A pending image resolved with everything pages asked of it so far (coalesced with every other
    /// request for it through the demand), told once in the terminal when it is first made or fails. A
    /// site's own image is asked about again first, once a session.
    private func resolve(_ id: String) async -> (PendingImage, Resolution)? {
        guard let image = pending.withLock({ $0[id] }) else { return nil }
        let started = ContinuousClock.now
        if image.fromDevServer {
            await services.manager.revalidate(image.wanted.source)
            revalidated.withLock { _ = $0.insert(image.wanted.key) }
        }
        guard let result = await demand.resolution(of: image.wanted) else { return nil }
        switch result {
        case .resolved(let resolved, _):
            if counters.withLock({ $0.made.insert(id).inserted }) {
                let files = resolved.variants(for: image.wanted.request, plan: settings.rewriter.plan).count
                announce("  made \(image.original): \(resolved.source.width)×\(resolved.source.height), \(files) files, \(Self.milliseconds(since: started)) ms")
            }
        case .failed(let failure):
            if counters.withLock({ $0.failed.insert(id).inserted }) {
                announce("warning: \(image.original): \(failure.reason); left as it is")
            }
        }
        return (image, result)
    }

    /// A pending image asked for: the widest file in the source's format once it is made; when it
    /// fails, the browser is sent to the URL the page wrote.
    private func make(_ id: String) async -> ServedImage? {
        guard let (image, result) = await resolve(id) else { return nil }
        switch result {
        case .resolved(let resolved, _):
            let variants = resolved.variants(for: image.wanted.request, plan: settings.rewriter.plan)
            guard let file = variants.widest(in: resolved.fallbackFormats),
                  case .found(let bytes) = services.cache.readBlobHere(file.blob) else {
                return .missing("\(image.original): made, but its file could not be read from the cache")
            }
            return .file(bytes: bytes, contentType: file.format.mimeType, immutable: false)
        case .failed:
            return .redirect(to: image.original)
        }
    }

    static func contentType(of name: String) -> String {
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        let ext = name[name.index(after: dot)...].lowercased()
        return ImageFormat.allCases.first { $0.fileExtension == ext || (ext == "jpg" && $0 == .jpeg) }?.mimeType ?? "application/octet-stream"
    }

    /// Whole milliseconds since `start`, as the terminal shows them.
    public static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}

/// What became of one page served.
public struct ServedPage: Sendable {
    /// The page as rewritten; nil when it is answered as the dev server sent it.
    public var bytes: [UInt8]?
    public var references = 0
    public var images = Images()
    public var diagnostics: [Diagnostic] = []
    /// Answered from the rewrite remembered for the same bytes.
    public var remembered = false

    /// How the page's images were named.
    public struct Images: Sendable {
        /// Written as a build writes them (their files in the cache).
        public var cached = 0
        /// Named by a pending URL, made when the browser asks for it.
        public var pending = 0
        /// Failed earlier in the session: their references keep their URLs.
        public var failed = 0
    }

    init(_ images: Images = Images()) { self.images = images }
}

/// The answer to a request for an image file.
public enum ServedImage: Sendable {
    /// `immutable`: the name holds the hash of the bytes.
    case file(bytes: [UInt8], contentType: String, immutable: Bool)
    /// The image failed (the terminal was told why): the browser is sent to the URL the page wrote.
    case redirect(to: String)
    case missing(String)
}

/// What a serve session has done, for its summary.
public struct ServeTotals: Sendable {
    public var pages = 0
    /// Images made, and failed, by the id of their pending URL.
    var made: Set<String> = []
    var failed: Set<String> = []
    public var imagesMade: Int { made.count }
    public var imagesFailed: Int { failed.count }
}
