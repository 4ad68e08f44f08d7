extension PageStream {
    /// A page's source, read once: the site file, or in place the source the cache kept when the site
    /// file is imgbake's rewrite of it.
    struct LoadedPage: Sendable {
        var path: String
        var previous: PageState?
        /// The source's bytes and their SHA-256.
        var bytes: [UInt8]
        var hash: BlobID
        /// In place, when the site file is imgbake's rewrite: the kept source these bytes are.
        var kept: BlobID?
        /// The site file as it was read: its stamp, and the hash of its bytes when known.
        var siteStamp: FileStamp
        var siteHash: BlobID?
        var notes: [Diagnostic] = []

        /// The site file holds what the last build left there: the same source, or imgbake's rewrite of it.
        func isAsBuilt(_ previous: PageState) -> Bool {
            guard let siteHash else { return false }
            return previous.written.isEmpty ? siteHash == previous.sourceHash : previous.written.contains(siteHash)
        }

        /// The state of a page that was read but not settled this build: read again next time; what
        /// it uses is not known for sure, so no image file is removed.
        func unsettledState(_ plan: BuildPlan) -> PageState {
            var state = previous ?? PageState(path: path, fingerprint: plan.fingerprint, sourceHash: nil, size: -1, modified: -1,
                                              output: nil, complete: false, keys: [], images: [], references: RecordedReferences([]))
            state.complete = false
            state.imagesKnown = false
            return state
        }
    }

    func load(_ page: PageToBuild) -> Result<LoadedPage, PageFile.ReadError> {
        let store = run.store
        if case .kept(let blob) = page.source, let stamp = page.stamp, let bytes = store.keptPage(blob) {
            return .success(LoadedPage(path: page.path, previous: page.previous, bytes: bytes, hash: blob, kept: blob,
                                       siteStamp: stamp, siteHash: page.previous?.written.last))
        }
        let bytes: [UInt8], stamp: FileStamp
        switch PageFile.read(page.path, site: plan.configuration.site, maxBytes: plan.configuration.maxPageBytes) {
        case .success(let read): (bytes, stamp) = read
        case .failure(let problem): return .failure(problem)
        }
        let hash = BlobID(of: bytes)
        var loaded = LoadedPage(path: page.path, previous: page.previous, bytes: bytes, hash: hash, siteStamp: stamp, siteHash: hash)
        // In place, the site file may be imgbake's own rewrite (touched since, or written by a build
        // stopped before it recorded it): its source is the one the cache kept.
        if plan.inPlace && !plan.check, let previous = page.previous, previous.written.contains(hash) {
            if let blob = previous.kept, let source = store.keptPage(blob) {
                loaded.bytes = source
                loaded.hash = blob
                loaded.kept = blob
            } else {
                loaded.notes.append(Diagnostic(.warning, "the source imgbake kept of this page (as its generator wrote it) is gone from the cache: built from the page as it is, whose images are not refreshed until its generator writes it again",
                                               at: SourceLocation(file: page.path, line: 1, column: 1)))
            }
        }
        return .success(loaded)
    }

    func model(of page: LoadedPage) -> PageModel? {
        PageFile.scan(page.path, page.bytes, settings: plan.scanSettings).map { PageModel($0, settings: plan.pageSettings) }
    }

    /// A page that could not be read: left as it is, its last state kept but unsettled.
    func unsettled(_ page: PageToBuild, _ diagnostic: Diagnostic) -> BuiltPage {
        var state = page.previous ?? PageState(path: page.path, fingerprint: plan.fingerprint, sourceHash: nil, size: -1, modified: -1,
                                               output: nil, complete: false, keys: [], images: [], references: RecordedReferences([]))
        state.complete = false
        state.imagesKnown = false
        return BuiltPage(state: state, diagnostics: [diagnostic])
    }

    /// A page too deep to parse is left as it is (with `--out`, copied when its turn comes); the files
    /// it keeps are every output name in its bytes after the images folder's name, however the URL is
    /// written.
    func unparsed(_ page: PageToBuild, _ loaded: LoadedPage) -> Prepared {
        var built = unsettled(page, PageFile.tooDeep(page.path, loaded.bytes).diagnostic)
        built.state.imagesKnown = true
        built.state.images = OwnImageReferences.unparsedUses(in: loaded.bytes, ownPrefix: plan.ownPublicPath,
                                                             publicPaths: plan.scanSettings.ownPrefixes).sorted()
        guard plan.writesSite, !plan.inPlace else { return .done(built) }
        var draft = PageDraft(page: page, loaded: loaded, built: built, model: nil)
        shape(&draft)
        return .write(draft)
    }
}
