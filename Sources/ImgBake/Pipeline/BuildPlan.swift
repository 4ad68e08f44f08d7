import Foundation

/// What a build works from, settled before anything is touched: the effective configuration
/// (`--check` resolves from the cache only), the markup templates, the fingerprint of every setting
/// that shapes outputs, and the names derived from them.
struct BuildPlan: Sendable {
    let configuration: Configuration
    /// Where the build leaves what it makes, and so what it does (the one answer to the build's mode).
    let target: OutputTarget
    let renderer: MarkupRenderer
    /// Every setting that shapes outputs, hashed (what the site's seal holds to).
    let settingsFingerprint: String
    /// What each page's state holds to: the settings and, once the site is walked, what its stylesheets
    /// and scripts say of its layout (`laidOut`).
    private(set) var fingerprint: String
    /// The site's stylesheets and scripts, read once each (nil for `imgbake serve`, whose pages come
    /// with their own).
    let styles: SiteStyles?
    /// Identifies this site and output in the cache's per-site state.
    let stateRoot: String
    /// Unix seconds when the build started: what it used since is protected from eviction.
    let startedAt: Double
    let started = ContinuousClock.now

    init(_ given: Configuration, now: Double) throws(BuildError) {
        try self.init(given, target: try OutputTarget(given), now: now)
    }

    /// `imgbake serve`: the dev server is the target, and it has the pages (there is no site folder).
    init(serving given: Configuration, now: Double) throws(BuildError) {
        try self.init(given, target: .devServer, now: now)
    }

    private init(_ given: Configuration, target: OutputTarget, now: Double) throws(BuildError) {
        var config = given
        self.target = target
        if target.resolvesFromCacheOnly {
            config.fetch.policy = .frozen
            config.cache.remote?.write = false
        }
        var isDirectory: ObjCBool = false
        guard target == .devServer || (FileManager.default.fileExists(atPath: config.site, isDirectory: &isDirectory) && isDirectory.boolValue) else {
            throw BuildError(.usage, "site folder \(config.site) does not exist")
        }
        do { renderer = try MarkupRenderer(templatesDirectory: config.output.templatesDirectory) } catch {
            throw BuildError(.usage, error.description)
        }
        configuration = config
        settingsFingerprint = BuildFingerprint.of(config, templates: renderer)
        fingerprint = settingsFingerprint
        styles = target == .devServer ? nil : SiteStyles(site: config.site)
        let site = URL(fileURLWithPath: config.site).standardizedFileURL.path
        let output = URL(fileURLWithPath: config.outputRoot).standardizedFileURL.path
        stateRoot = site + "\n" + output
        startedAt = now
    }

    /// The plan with the site's layout in its fingerprint: a changed stylesheet or script can change
    /// what markup a page's images get, so its pages are built again (no image work is repeated). In
    /// place, a stylesheet imgbake rewrote has the same rules: URLs are not part of them.
    func laidOut(_ inventory: SiteInventory, on pool: WorkerPool) async -> BuildPlan {
        guard let styles else { return self }
        var plan = self
        let digest = await pool.run { styles.digest(of: inventory.pages + inventory.otherFiles) }
        plan.fingerprint = BlobID(of: Array((settingsFingerprint + "\nlayout " + digest).utf8)).hex
        return plan
    }

    var imagesFolder: String { configuration.outputRoot + "/" + configuration.output.imagesDirectory }

    /// An image file's path under the output root, as the `placed` records name it.
    func placedImage(_ name: String) -> String { configuration.output.imagesDirectory + "/" + name }

    /// `public_path` as references to the images folder start (with a trailing slash).
    var ownPublicPath: String { OutputNaming(publicPath: configuration.output.publicPath).publicPath }

    /// With a CDN `public_path`, references to what imgbake itself wrote look remote: they start with this.
    var ownOutputPrefix: String? { configuration.output.publicPathIsAbsolute ? ownPublicPath : nil }

    /// What the scanners need to know about the site.
    var scanSettings: ScanSettings {
        var settings = ScanSettings()
        settings.localImages = configuration.images.local
        settings.siteRoot = configuration.output.siteRoot
        settings.baseURL = configuration.output.baseURL
        settings.ownPrefix = ownPublicPath
        settings.frontMatterKeys = configuration.images.frontMatterKeys
        settings.imageLinks = configuration.output.imageLinks != .off
        switch configuration.requireAlt {
        case .warn: settings.missingAlt = .warning
        case .error: settings.missingAlt = .error
        case .off: settings.missingAlt = nil
        }
        return settings
    }

    /// What a page's model needs of the settings.
    var pageSettings: PageModel.Settings {
        let images = configuration.madeImages, output = configuration.output
        return PageModel.Settings(ownOutputPrefix: ownOutputPrefix, publicPaths: scanSettings.ownPrefixes, defaultRequest: VariantRequest(images),
                                  markup: output.markup, markdown: output.markdown, scanSettings: scanSettings,
                                  fallbackWidth: images.oneFallbackWidth)
    }

    /// What planning needs of the build, the same for every page (`siteImageNames`: with `--out` and
    /// `output.originals = "referenced"`, the site's image files, to see which each page mentions).
    func planSettings(siteImageNames: Set<String> = []) -> PlanSettings {
        PlanSettings(target: target, fingerprint: fingerprint, publicPaths: scanSettings.ownPrefixes, ownPublicPath: ownPublicPath,
                     reports: reports, rendering: renderingSettings, siteImageNames: siteImageNames)
    }

    /// How pages are rendered, in a build and in `imgbake serve`.
    var renderingSettings: PageRendering.Settings {
        PageRendering.Settings(rewriter: PageRewriter(output: configuration.output, images: configuration.madeImages, renderer: renderer),
                               output: configuration.output)
    }

    /// A report is made (`--report`, `--verbose`): every reference is kept for it.
    var reports: Bool { !configuration.reportPaths.isEmpty || configuration.wantsReport }

    /// `--refresh` revalidates every image, which needs every page; a shard build writes no pages and
    /// reads them all, whatever an earlier build left.
    var readsEveryPage: Bool { configuration.fetch.policy == .refresh || target.readsEveryPage }

    /// Whether a build may be skipped when its site's seal holds: one that writes the site as usual.
    /// `--refresh` revalidates every image, and a report lists every page's references. (Such builds
    /// still seal when they end settled: the next usual build is let off.)
    var trustsSeal: Bool {
        target.writesSite && configuration.fetch.policy != .refresh && configuration.reportPaths.isEmpty && !configuration.wantsReport
    }

    /// Whether a page may be written as a build for another output made it, from the copy kept of it:
    /// not where every image is revalidated (`--refresh`) or every reference reported.
    var reusesPagesBuiltElsewhere: Bool { trustsSeal }
}
