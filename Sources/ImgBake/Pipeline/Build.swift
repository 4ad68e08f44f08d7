import Foundation

/// What a build produced: diagnostics (sorted by place), counts, and the exit status it implies.
public struct BuildResult: Sendable {
    public var diagnostics: [Diagnostic]
    public var summary: BuildSummary
    /// 0 success (warnings allowed), 1 failed (`--strict` with image failures, `--frozen` with misses,
    /// `--check` with references that would stay remote).
    public var exitCode: Int32
    /// Unique URLs that `--frozen` or `--check` needed from the network.
    public var missing: [String] = []
    /// With `--check`: the references that would stay remote, with why.
    public var remaining: [Diagnostic] = []
    public var report: BuildReport?
}

/// One build: find the pages that changed, scan them, resolve every unique image through the manager,
/// write the image files, splice the pages, mirror the rest of the site with `--out`, remove outputs no
/// page uses any more, and record what was done for the next build. Per-page and per-image problems
/// become diagnostics and the build goes on.
public struct Build: Sendable {
    public var configuration: Configuration
    /// Unix seconds; tests inject a clock to move freshness and failure memory through time.
    public var now: @Sendable () -> Double
    /// Read it while the build runs for a progress display.
    public let progress = BuildProgress()

    public init(_ configuration: Configuration, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.configuration = configuration
        self.now = now
    }

    public func run() async throws(BuildError) -> BuildResult {
        let started = ContinuousClock.now
        var config = configuration
        if config.check { config.fetch.policy = .frozen } // resolve from the cache only
        let build = Build(config, now: now)
        defer { progress.update { $0.finished = true } }
        return try await build.execute(started: started, check: configuration.check, progress: progress)
    }

    private func execute(started: ContinuousClock.Instant, check: Bool, progress: BuildProgress) async throws(BuildError) -> BuildResult {
        let config = configuration
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: config.site, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BuildError(.usage, "site folder \(config.site) does not exist")
        }
        let renderer: MarkupRenderer
        do { renderer = try MarkupRenderer(templatesDirectory: config.output.templatesDirectory) } catch {
            throw BuildError(.usage, error.description)
        }
        let fingerprint = BuildFingerprint.of(config, templates: renderer)
        let buildStart = now()
        // One build at a time writes an output; `--check` writes nothing.
        let outputLock = check ? nil : try await OutputLock(folder: config.outputRoot)
        defer { _ = outputLock }
        // Shared: other builds may use the cache at the same time; `cache gc` waits for all of them.
        var lock: CacheLock? = try lockCache(.shared, wait: true)
        let resolver = try makeResolver()
        progress.watch(resolver.downloader)
        let root = stateRoot
        var summary = BuildSummary()

        // Which pages to read: those whose last build does not still hold.
        var skipped = [config.outputRoot + "/" + config.output.imagesDirectory]
        if let out = config.outputDirectory { skipped.append(out) }
        let inventory = SiteInventory.walk(config.site, skipping: skipped)
        let previous = (try? await resolver.cache.perform { index, _ in try index.pageStates(root: root) }) ?? [:]
        let (unchanged, toRead) = await partition(inventory.pages, previous: previous, fingerprint: fingerprint, cache: resolver.cache)
        progress.update { $0.pagesTotal = inventory.pages.count; $0.pagesUnchanged = unchanged.count }
        let (scanned, unreadable) = await scan(toRead, progress: progress)
        var diagnostics = unreadable
        if let waited = outputLock?.waited, waited >= 0.5 {
            diagnostics.append(Diagnostic(.note, "waited \(Int(waited.rounded())) s for another imgbake build writing \(config.outputRoot)"))
        }
        summary.pagesScanned = scanned.count
        summary.pagesUnchanged = unchanged.count

        // Which references to localise, and with what variants.
        let defaultRequest = VariantRequest(config.images)
        var rewritable: [(page: ScannedPage, requests: [VariantRequest])] = []
        var leftAlone: [String: String] = [:] // page → why its references stay
        for var page in scanned {
            diagnostics += page.scan.diagnostics
            if let own = ownOutputPrefix { page.scan.references.removeAll { $0.url.string.hasPrefix(own) } }
            summary.references += page.scan.references.count
            if let base = page.scan.remoteBase, !page.scan.references.isEmpty, !config.output.publicPathIsAbsolute {
                let why = "page has a remote <base href> (\(base.url)); its \(page.scan.references.count) image references are left as they are, because a local path would resolve against that base too (set public_path to an absolute URL to localise them)"
                diagnostics.append(Diagnostic(.warning, why, at: base.location))
                leftAlone[page.scan.file.path] = "remote <base href>"
                continue
            }
            let requests = page.scan.references.map { reference -> VariantRequest in
                switch reference.request(over: defaultRequest) {
                case .success(let request): return request
                case .failure(let problem):
                    diagnostics.append(Diagnostic(.warning, problem.description, at: reference.location))
                    return defaultRequest
                }
            }
            rewritable.append((page, requests))
        }

        var images = await resolver.resolveAll(rewritable.flatMap { page, requests in
            zip(page.scan.references.map(\.url), requests).map { ($0, $1) }
        }, observe: { done, total in progress.update { $0.imagesResolved = done; $0.imagesTotal = total } })
        let rewriter = PageRewriter(output: config.output, images: config.images, renderer: renderer)
        let rewriteAll = { (images: ResolvedSet) -> [PageRewrite?] in
            rewritable.map { page, requests in
                self.reload(page).map { rewriter.rewrite($0, requests: requests, images: images.image(for:)) }
            }
        }
        // --check writes nothing: pages need not be read again.
        var rewrites = check ? [] : rewriteAll(images)

        var states: [PageState] = []
        var placedNow: [String: String] = [:]
        if !check {
            // Image files first, so a page never points at a file that is not there yet. A damaged
            // cache blob found on the way is repaired by resolving its image again, and the pages are
            // rewritten with what the repair produced.
            let emitter = ImageEmitter(cache: resolver.cache, directory: config.outputRoot + "/" + config.output.imagesDirectory)
            var emitted = try await emitter.write(rewrites.flatMap { $0?.outputs ?? [] })
            if !emitted.corrupt.isEmpty {
                await resolver.reload(emitted.corrupt, into: &images)
                rewrites = rewriteAll(images)
                let again = try await emitter.write(rewrites.flatMap { $0?.outputs ?? [] })
                emitted.written += again.written
                emitted.notes += again.notes
                emitted.placed.formUnion(again.placed)
            }
            diagnostics += emitted.notes.map { Diagnostic(.note, $0) }
            summary.filesWritten = emitted.written
            for name in emitted.placed { placedNow[config.output.imagesDirectory + "/" + name] = "image" }

            for ((page, _), rewrite) in zip(rewritable, rewrites) {
                guard let rewrite else {
                    diagnostics.append(Diagnostic(.warning, "changed while imgbake was running; left for the next build",
                                                  at: SourceLocation(file: page.scan.file.path, line: 1, column: 1)))
                    continue
                }
                diagnostics += rewrite.diagnostics
                summary.referencesLocalised += rewrite.localised
                var written: FileStamp?
                if let bytes = rewrite.bytes {
                    written = try writePage(page.scan.file.path, bytes)
                    summary.pagesWritten += 1
                    if config.outputDirectory != nil { placedNow[page.scan.file.path] = "mirror" }
                }
                states.append(state(of: page, rewrite: rewrite, written: written, images: images, fingerprint: fingerprint))
            }
            for page in scanned where leftAlone[page.scan.file.path] != nil {
                states.append(state(of: page, rewrite: nil, written: nil, images: images, fingerprint: fingerprint))
            }
            states += unchanged
            // A page that changed while the build ran, or could not be read, keeps what it refers to
            // now (and the images stay), with `complete` off so the next build reads it.
            let recorded = Set(states.map(\.path))
            for path in inventory.pages where !recorded.contains(path) {
                states.append(unsettledState(path, previous: previous[path], fingerprint: fingerprint))
            }
            if config.outputDirectory != nil {
                try mirror(inventory, states: states, placed: &placedNow)
            }
            let unchangedPaths = Set(unchanged.map(\.path)) // their files were seen when they were partitioned
            let healed = try await heal(states.filter { !unchangedPaths.contains($0.path) }, resolver: resolver, placed: &placedNow)
            diagnostics += healed.diagnostics
            summary.filesWritten += healed.written
            diagnostics += await record(states, previous: previous, inventory: inventory, placedNow: placedNow,
                                        outputs: rewrites.flatMap { $0?.outputs ?? [] }, images: images, cache: resolver.cache)
        }

        diagnostics += images.diagnostics(for: rewritable.map(\.page.scan))
        summary.count(images)
        diagnostics += await resolver.finish(images, now: now())
        lock = nil
        if !check, let maxSize = config.cache.maxSize {
            diagnostics += collectGarbage(resolver.cache, maxBytes: maxSize, protectedSince: buildStart)
        }
        _ = lock
        let counters = resolver.downloader.stats
        summary.requests = counters.requests
        summary.notModified = counters.notModified
        summary.bytesDownloaded = counters.bytes
        summary.seconds = (ContinuousClock.now - started).seconds

        var result = BuildResult(diagnostics: diagnostics.sorted(by: Self.order), summary: summary, exitCode: 0)
        if config.fetch.policy == .frozen {
            result.missing = images.missing
            if !result.missing.isEmpty { result.exitCode = 1 }
        }
        if check {
            result.remaining = remaining(leftAlone: leftAlone, scanned: scanned, images: images)
            if !result.remaining.isEmpty { result.exitCode = 1 }
        }
        if config.strict && summary.imagesFailed > 0 { result.exitCode = 1 }
        if config.reportPath != nil || config.wantsReport {
            result.report = await makeReport(scanned: scanned, leftAlone: leftAlone, unchanged: unchanged, images: images,
                                             summary: summary, counters: counters, diagnostics: result.diagnostics,
                                             check: check, transformer: resolver.transformer)
        }
        if !check, result.exitCode == 0 {
            try writeDepfile(inventory)
        }
        return result
    }

    // MARK: Pieces

    /// With a CDN `public_path`, references to what imgbake itself wrote look remote: they start with this.
    var ownOutputPrefix: String? {
        configuration.output.publicPathIsAbsolute ? OutputNaming(publicPath: configuration.output.publicPath).publicPath : nil
    }

    /// Identifies this site and output in the cache's per-site state.
    var stateRoot: String {
        let site = URL(fileURLWithPath: configuration.site).standardizedFileURL.path
        let output = URL(fileURLWithPath: configuration.outputRoot).standardizedFileURL.path
        return site + "\n" + output
    }

    /// The state of a page this build did not settle: what it refers to is read from the output as it
    /// is now (so its image files stay), and it is read again next time.
    private func unsettledState(_ path: String, previous: PageState?, fingerprint: String) -> PageState {
        let live = (try? AtomicFile.readWithStamp(configuration.outputRoot + "/" + path)).map {
            OwnImageReferences.fileNames(in: $0.0, publicPath: ownPublicPath)
        }
        var state = previous ?? PageState(path: path, fingerprint: fingerprint, sourceHash: "", size: -1, modified: -1,
                                          output: nil, complete: false, keys: [], images: [], references: [])
        state.complete = false
        state.imagesKnown = live != nil
        state.images = Array(Set(state.images).union(live ?? [])).sorted()
        return state
    }

    private func state(of page: ScannedPage, rewrite: PageRewrite?, written: FileStamp?, images: ResolvedSet, fingerprint: String) -> PageState {
        let references = page.scan.references
        let resolved = references.allSatisfy { images.image(for: $0.url) != nil }
        let complete = rewrite != nil && resolved && page.scan.diagnostics.isEmpty && (rewrite?.diagnostics.isEmpty ?? false)
        let inPlaceRewritten = configuration.outputDirectory == nil && written != nil
        // Rewritten in place, the page is now what imgbake wrote: that is the source next time.
        let source = inPlaceRewritten ? written! : page.stamp
        let hash = inPlaceRewritten ? BlobID(of: rewrite!.bytes!).hex : page.hash
        return PageState(
            path: page.scan.file.path, fingerprint: fingerprint, sourceHash: hash, size: source.size, modified: source.modified,
            output: configuration.outputDirectory != nil ? written : nil, complete: complete,
            keys: inPlaceRewritten && complete ? [] : Array(Set(references.compactMap { images.keyOf[$0.url]?.string })).sorted(),
            images: Array(ownImages(page, rewrite: rewrite)).sorted(),
            references: references.map { RecordedReference(line: $0.location.line, column: $0.location.column, kind: $0.kind, url: $0.url.description) })
    }

    /// The image files the page refers to as it now is in the output: those of the bytes written, or
    /// (not rewritten) of the source, whatever build localised them.
    private func ownImages(_ page: ScannedPage, rewrite: PageRewrite?) -> Set<String> {
        guard let rewrite, let bytes = rewrite.bytes else { return page.ownImages }
        return OwnImageReferences.fileNames(in: bytes, publicPath: ownPublicPath).union(rewrite.outputs.map(\.fileName))
    }

    /// `public_path` as references to the images folder start (with a trailing slash).
    var ownPublicPath: String { OutputNaming(publicPath: configuration.output.publicPath).publicPath }

    /// Diagnostics without a place first, then by file, line, column.
    static func order(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        switch (a.location, b.location) {
        case (nil, nil): return a.message < b.message
        case (nil, _): return true
        case (_, nil): return false
        case (let x?, let y?): return x == y ? a.message < b.message : x < y
        }
    }
}

