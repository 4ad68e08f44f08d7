import Foundation

/// Which pages a build reads: those whose last build does not still hold.
struct PagePartition: Sendable {
    /// What the last build of this site and output knew, by page.
    var previous: [String: PageState]
    /// Pages left alone: unchanged, built with the same settings, complete, outputs present, images fresh.
    var unchanged: [PageState]
    var toRead: [String]
}

/// The pages read and scanned, and the ones that could not be read.
struct ScanOutcome: Sendable {
    var pages: [ScannedPage]
    var unreadable: [Diagnostic]
}

extension Build {
    /// Every page and other file of the site, outside the images folder and the output.
    func takeInventory(_ plan: BuildPlan) -> SiteInventory {
        var skipped = [plan.imagesFolder]
        if let out = plan.configuration.outputDirectory { skipped.append(out) }
        return SiteInventory.walk(plan.configuration.site, skipping: skipped)
    }

    /// Pages whose last build still holds (unchanged source, same settings, every image localised,
    /// outputs present, images fresh) and those that must be read.
    func partition(_ inventory: SiteInventory, _ plan: BuildPlan, _ cache: ImageCache) async -> PagePartition {
        let previous = await cache.pageStates(root: plan.stateRoot)
        // In place, a page reached through a link is left as it is: rewriting it would replace the link
        // with a file, and the page it points at is in the site and rewritten where it is.
        let candidates = plan.inPlace ? inventory.pages.filter { !inventory.linkedPages.contains($0) } : inventory.pages
        let (unchanged, toRead) = await partition(candidates, previous: previous, plan: plan, cache: cache)
        progress.update { $0.pagesTotal = inventory.pages.count; $0.pagesUnchanged = unchanged.count }
        return PagePartition(previous: previous, unchanged: unchanged, toRead: toRead)
    }

    private func partition(_ pages: [String], previous: [String: PageState], plan: BuildPlan,
                           cache: ImageCache) async -> (unchanged: [PageState], toRead: [String]) {
        let config = plan.configuration
        // A shard build writes no pages: it reads them all, whatever an earlier build left.
        guard config.fetch.policy != .refresh, config.shard == nil else { return ([], pages) }
        var candidates: [PageState] = []
        var toRead: [String] = []
        var existing: [String: Bool] = [:]
        func exists(_ path: String) -> Bool {
            if let known = existing[path] { return known }
            let found = FileStamp.of(path) != nil
            existing[path] = found
            return found
        }
        for path in pages {
            guard var state = previous[path], state.fingerprint == plan.fingerprint, state.complete,
                  let stamp = FileStamp.of(config.site + "/" + path) else { toRead.append(path); continue }
            if stamp.size != state.size || stamp.modified != state.modified {
                // Touched: unchanged only if the bytes are.
                guard let bytes = AtomicFile.read(config.site + "/" + path), BlobID(of: bytes).hex == state.sourceHash else {
                    toRead.append(path)
                    continue
                }
                state.size = stamp.size
                state.modified = stamp.modified
            }
            let imagesFolder = plan.imagesFolder + "/"
            let outputsThere = state.images.allSatisfy { exists(imagesFolder + $0) }
            let pageThere = config.outputDirectory == nil
                || (state.output.map { FileStamp.of(config.outputRoot + "/" + path) == $0 } ?? exists(config.outputRoot + "/" + path))
            guard outputsThere && pageThere else { toRead.append(path); continue }
            candidates.append(state)
        }
        // Images past their freshness are revalidated, which needs their pages.
        let keys = Set(candidates.flatMap(\.keys))
        guard !keys.isEmpty else { return (candidates, toRead) }
        let ttl = config.fetch.ttl
        let moment = now()
        let records = (try? await cache.originals(keys.map(OriginalKey.init))) ?? [:]
        let stale = keys.filter { key in
            guard let record = records[OriginalKey(key)] else { return true }
            // A local image is as fresh as its file: changed since it was read, its pages are read again.
            if key.hasPrefix("file:") {
                return FileStamp.of(config.site + "/" + key.dropFirst(5)).map(LocalFiles.validator) != record.validators.etag
            }
            return !config.fetch.isOffline && !Freshness.isFresh(record, now: moment, defaultTTL: ttl)
        }
        var unchanged: [PageState] = []
        for state in candidates {
            if state.keys.contains(where: stale.contains) { toRead.append(state.path) } else { unchanged.append(state) }
        }
        return (unchanged, toRead.sorted())
    }

    /// Reads and scans `paths`, `jobs` at a time (gumbo and cmark are CPU work; pages are independent).
    /// A page that cannot be read is a warning naming it; the build goes on without it.
    func scan(_ paths: [String], _ plan: BuildPlan) async -> ScanOutcome {
        await Self.scan(paths, site: plan.configuration.site, settings: plan.scanSettings, jobs: plan.configuration.jobs,
                        maxBytes: plan.configuration.maxPageBytes) {
            progress.update { $0.pagesScanned += 1 }
        }
    }

    static func scan(_ paths: [String], site: String, settings: ScanSettings, jobs: Int, maxBytes: Int = .max,
                     scanned: @Sendable () -> Void = {}) async -> ScanOutcome {
        await withTaskGroup(of: (Int, Result<ScannedPage, PageReadError>).self) { group in
            var results = [Result<ScannedPage, PageReadError>?](repeating: nil, count: paths.count)
            var next = 0
            func submit() {
                let index = next
                let path = paths[index]
                group.addTask { (index, Self.scan(site: site, path: path, settings: settings, maxBytes: maxBytes)) }
                next += 1
            }
            while next < min(paths.count, max(2, jobs * 2)) { submit() }
            while let (index, result) = await group.next() {
                results[index] = result
                scanned()
                if next < paths.count { submit() }
            }
            var pages: [ScannedPage] = []
            var unreadable: [Diagnostic] = []
            for case let result? in results {
                switch result {
                case .success(let page): pages.append(page)
                case .failure(let problem):
                    unreadable.append(Diagnostic(.warning, "page not read: \(problem.reason); left as it is",
                                                 at: SourceLocation(file: problem.path, line: 1, column: 1)))
                }
            }
            return ScanOutcome(pages: pages, unreadable: unreadable)
        }
    }

    struct PageReadError: Error {
        var path: String
        var reason: String
    }

    static func scan(site: String, path: String, settings: ScanSettings, maxBytes: Int = .max) -> Result<ScannedPage, PageReadError> {
        guard let kind = SourceFile.kind(forPath: path) else { return .failure(PageReadError(path: path, reason: "not a page")) }
        if let size = FileStamp.of(site + "/" + path)?.size, size > maxBytes {
            let limit = ByteCount.describe(maxBytes)
            return .failure(PageReadError(path: path, reason: "\(ByteCount.describe(size)), over the \(limit) limit (build.max_page_size)"))
        }
        let bytes: [UInt8]
        let stamp: FileStamp
        do {
            (bytes, stamp) = try AtomicFile.readWithStamp(site + "/" + path)
        } catch {
            return .failure(PageReadError(path: path, reason: error.reason))
        }
        let depth = NestingDepth.estimate(bytes)
        guard depth <= NestingDepth.limit else {
            return .failure(PageReadError(path: path, reason: "elements nested \(depth) deep, more than \(NestingDepth.limit) (parsing it would take minutes)"))
        }
        let file = SourceFile(path: path, kind: kind, bytes: bytes)
        var scan = SourceScanner.scan(file, settings: settings)
        scan.file = SourceFile(path: path, kind: kind, bytes: [])
        return .success(ScannedPage(scan: scan, hash: BlobID(of: bytes).hex, stamp: stamp,
                                    ownImages: OwnImageReferences.fileNames(in: bytes, publicPath: settings.ownPrefix)))
    }

    /// The page's bytes again, for rewriting, if they are still the ones scanned.
    func reload(_ page: ScannedPage, _ plan: BuildPlan) -> PageScan? {
        guard let bytes = AtomicFile.read(plan.configuration.site + "/" + page.scan.file.path), BlobID(of: bytes).hex == page.hash
        else { return nil }
        var scan = page.scan
        scan.file = SourceFile(path: scan.file.path, kind: scan.file.kind, bytes: bytes)
        return scan
    }
}
