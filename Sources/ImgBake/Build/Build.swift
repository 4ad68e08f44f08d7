import Foundation

/// A fatal problem: the build cannot start or cannot write its results.
public struct BuildError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable { case usage, failed }
    public var kind: Kind
    public var message: String
    public var description: String { message }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// What a build produced: diagnostics (sorted by place), counts, and the exit status it implies.
public struct BuildResult: Sendable {
    public var diagnostics: [Diagnostic]
    public var summary: BuildSummary
    /// 0 success (warnings allowed), 1 failed (`--strict` with image failures, `--frozen` with misses).
    public var exitCode: Int32
    /// Unique URLs that `--frozen` needed from the network.
    public var missing: [String] = []
}

/// One build: scan the site, resolve every unique image through the manager, write the image files,
/// then splice the pages. Per-page and per-image problems become diagnostics and the build goes on.
public struct Build: Sendable {
    public var configuration: Configuration
    /// Unix seconds; tests inject a clock to move freshness and failure memory through time.
    public var now: @Sendable () -> Double

    public init(_ configuration: Configuration, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.configuration = configuration
        self.now = now
    }

    public func run() async throws(BuildError) -> BuildResult {
        let started = ContinuousClock.now
        let config = configuration
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: config.site, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BuildError(.usage, "site folder \(config.site) does not exist")
        }
        let renderer: MarkupRenderer
        do { renderer = try MarkupRenderer(templatesDirectory: config.output.templatesDirectory) } catch {
            throw BuildError(.usage, error.description)
        }

        var summary = BuildSummary()
        var diagnostics: [Diagnostic] = []
        let scans = await scanSite()
        summary.pagesScanned = scans.count
        var rewritable: [PageScan] = []
        for scan in scans {
            diagnostics += scan.diagnostics
            summary.references += scan.references.count
            if let base = scan.remoteBase, !scan.references.isEmpty, !config.output.publicPathIsAbsolute {
                diagnostics.append(Diagnostic(.warning, "page has a remote <base href> (\(base.url)); its \(scan.references.count) image references are left as they are, because a local path would resolve against that base too (set public_path to an absolute URL to localise them)", at: base.location))
                continue
            }
            rewritable.append(scan)
        }

        // What each reference asks for: the configured variants, or its element's overrides.
        let defaultRequest = VariantRequest(config.images)
        let requests = rewritable.map { scan in
            scan.references.map { reference -> VariantRequest in
                switch reference.request(over: defaultRequest) {
                case .success(let request): return request
                case .failure(let problem):
                    diagnostics.append(Diagnostic(.warning, problem.description, at: reference.location))
                    return defaultRequest
                }
            }
        }

        let buildStart = now()
        // Shared: other builds may use the cache at the same time; `cache gc` waits for all of them.
        var lock: CacheLock? = try lockCache(.shared, wait: true)
        let resolver = try makeResolver()
        var images = await resolver.resolveAll(zip(rewritable, requests).flatMap { scan, requests in
            zip(scan.references.map(\.url), requests).map { ($0, $1) }
        })
        let rewriter = PageRewriter(output: config.output, images: config.images, renderer: renderer)
        let rewriteAll = { (images: ResolvedSet) in
            zip(rewritable, requests).map { rewriter.rewrite($0, requests: $1, images: images.image(for:)) }
        }
        var rewrites = rewriteAll(images)

        // Write image files first, so a page never points at a file that is not there yet. A corrupt
        // cache blob found on the way is repaired by resolving its image again; the pages are then
        // rewritten with what the repair produced.
        let emitter = ImageEmitter(cache: resolver.cache, directory: config.outputRoot + "/" + config.output.imagesDirectory)
        var emitted = try await emitter.write(rewrites.flatMap(\.outputs))
        if !emitted.corrupt.isEmpty {
            await resolver.reload(emitted.corrupt, into: &images)
            rewrites = rewriteAll(images)
            let again = try await emitter.write(rewrites.flatMap(\.outputs))
            emitted.written += again.written
            emitted.notes += again.notes
        }
        diagnostics += emitted.notes.map { Diagnostic(.note, $0) }
        summary.filesWritten = emitted.written

        for (scan, rewrite) in zip(rewritable, rewrites) {
            diagnostics += rewrite.diagnostics
            guard let bytes = rewrite.bytes else { continue }
            try writePage(scan.file, bytes)
            summary.pagesWritten += 1
            summary.referencesLocalised += rewrite.localised
        }

        diagnostics += images.diagnostics(for: rewritable)
        images.count(into: &summary)
        diagnostics += await resolver.finish(images, now: now())
        lock = nil
        if let maxSize = config.cache.maxSize {
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
        if config.strict && summary.imagesFailed > 0 { result.exitCode = 1 }
        return result
    }

    private func makeResolver() throws(BuildError) -> Resolver {
        do {
            return try Resolver(configuration: configuration, now: now)
        } catch let error as BuildError {
            throw error
        } catch {
            throw BuildError(.failed, "cannot open the cache at \(configuration.cache.directory): \(error)")
        }
    }

    private func lockCache(_ mode: CacheLock.Mode, wait: Bool) throws(BuildError) -> CacheLock? {
        do { return try CacheLock(directory: configuration.cache.directory, mode: mode, wait: wait) } catch {
            throw BuildError(.failed, "cannot lock the cache at \(configuration.cache.directory): \(error)")
        }
    }

    /// Keeps the cache under `cache.max_size` after a build, if no other build is using it now.
    /// What this build used is never evicted.
    private func collectGarbage(_ cache: ImageCache, maxBytes: Int, protectedSince: Double) -> [Diagnostic] {
        guard let exclusive = try? lockCache(.exclusive, wait: false) else {
            return [Diagnostic(.note, "cache: size budget not enforced this time: another build is using the cache")]
        }
        defer { _ = exclusive }
        do {
            let report = try CacheMaintenance.collect(cache, maxBytes: maxBytes, protectedSince: protectedSince)
            var notes: [Diagnostic] = []
            if report.removedFiles > 0 {
                notes.append(Diagnostic(.note, "cache: evicted \(report.removedEntries) entries (\(ByteCount.describe(report.freedBytes))) to stay under \(ByteCount.describe(maxBytes))"))
            }
            if report.overBudget {
                notes.append(Diagnostic(.warning, "cache: \(ByteCount.describe(report.remainingBytes)) is over the \(ByteCount.describe(maxBytes)) budget: this build alone uses more"))
            }
            return notes
        } catch {
            return [Diagnostic(.warning, "cache: garbage collection failed: \(error)")]
        }
    }

    private func writePage(_ file: SourceFile, _ bytes: [UInt8]) throws(BuildError) {
        let source = configuration.site + "/" + file.path
        let target = configuration.outputRoot + "/" + file.path
        do {
            try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent)
            try AtomicFile.write(bytes, to: target, durable: false, mode: AtomicFile.mode(of: source) ?? 0o644)
        } catch {
            throw BuildError(.failed, error.description)
        }
    }

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

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
