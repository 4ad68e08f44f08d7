import Locking

/// `imgbake serve`'s stylesheets and scripts (`StyleLibrary`): there is no site folder, so each file a
/// page applies is fetched from the dev server when a page first names it, with its `@import`s, and
/// asked about again (a conditional request) when a page naming it is served a second or more after it
/// last was: an edited stylesheet counts from the next view. `generation` changes whenever one did, so
/// a page's remembered rewrite is not served past a change of the styles it was made with.
final class ServedStyles: StyleLibrary {
    private let downloader: Downloader
    private let upstream: RemoteURL
    private let siteRoot: String
    private let settings: ScanSettings
    private let files = Locked([String: Asset]())
    private let inlines = Locked([BlobID: StyleSheet]())
    private let changes = Locked(0)

    /// A file as last fetched.
    private struct Asset {
        var validators: Validators?
        /// Its bytes' hash; nil when it could not be fetched.
        var digest: BlobID?
        /// Parsed, for a stylesheet; nil when it could not be fetched.
        var sheet: StyleSheet?
        /// For a script: `ScriptCheck`'s verdict; nil when it could not be fetched.
        var restructures: Bool?
        var checked: ContinuousClock.Instant
    }

    init(downloader: Downloader, upstream: RemoteURL, siteRoot: String, settings: ScanSettings) {
        self.downloader = downloader
        self.upstream = upstream
        self.siteRoot = siteRoot
        self.settings = settings
    }

    /// Changes whenever a stylesheet or script came back different.
    var generation: Int { changes.withLock { $0 } }

    /// Fetches what the page's layout reads that is not known, or was last asked about a second ago or more.
    func prepare(_ inputs: PageStyleInputs) async { await refresh(Files(inputs)) }

    /// The files `paths` asked about again where a second or more has passed.
    func refresh(_ files: Files) async {
        for path in files.stylesheets { await fetchSheet(path, depth: 0) }
        for path in files.scripts { await fetch(path, script: true) }
    }

    /// The files a page's layout reads, for `refresh`.
    struct Files: Sendable {
        var stylesheets: [String]
        var scripts: [String]

        init(_ inputs: PageStyleInputs) {
            stylesheets = inputs.stylesheets.compactMap { if case .file(let path, _) = $0 { path } else { nil } }
            scripts = inputs.scripts.compactMap { if case .file(let path) = $0 { path } else { nil } }
        }
    }

    private func fetchSheet(_ path: String, depth: Int) async {
        await fetch(path, script: false)
        guard depth < 8, let sheet = stylesheet(path) else { return }
        let resolver = ReferenceResolver(settings: settings, pagePath: path)
        for item in sheet.imports {
            if case .site(let imported)? = resolver.asset(item.url) { await fetchSheet(imported, depth: depth + 1) }
        }
    }

    private func fetch(_ path: String, script: Bool) async {
        let known = files.withLock { $0[path] }
        if let known, ContinuousClock.now - known.checked < .seconds(1) { return }
        let escaped = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        guard let url = RemoteURL.resolve(siteRoot + escaped, against: upstream) else { return }
        var asset = Asset(validators: nil, digest: nil, sheet: nil, restructures: nil, checked: .now)
        switch await downloader.download(url, revalidating: known?.validators) {
        case .fetched(let bytes, let validators):
            asset.validators = validators
            asset.digest = BlobID(of: bytes)
            if asset.digest != known?.digest {
                if script { asset.restructures = ScriptCheck.mayRestructureImages(bytes) } else { asset.sheet = StyleSheet.parse(bytes) }
            } else {
                (asset.restructures, asset.sheet) = (known?.restructures, known?.sheet)
            }
        case .notModified:
            guard let known else { return }
            asset = known
            asset.checked = .now
        case .failed:
            break
        }
        files.withLock { $0[path] = asset }
        if known == nil || known?.digest != asset.digest { changes.withLock { $0 += 1 } }
    }

    func stylesheet(_ path: String) -> StyleSheet? { files.withLock { $0[path]?.sheet } }

    func inline(_ text: String) -> StyleSheet {
        let key = BlobID(of: Array(text.utf8))
        if let known = inlines.withLock({ $0[key] }) { return known }
        let sheet = StyleSheet.parse(Array(text.utf8))
        inlines.withLock { $0[key] = sheet }
        return sheet
    }

    func scriptMayRestructureImages(_ path: String) -> Bool? { files.withLock { $0[path]?.restructures } }
}
