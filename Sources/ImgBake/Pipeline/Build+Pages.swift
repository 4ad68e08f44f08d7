import Foundation

/// Which pages a build reads: those whose last build does not still hold.
struct PagePartition: Sendable {
    /// What the last build of this site and output knew, by page.
    var previous: [String: PageState]
    /// Pages left alone: unchanged, built with the same settings, complete, outputs present, images fresh.
    /// After `restore`, also those whose outputs were written again from the cache.
    var unchanged: [PageState]
    /// Pages that would be unchanged but for their outputs (the page or its image files) being gone;
    /// `restore` writes them again from the cache. Empty in place, or when the build writes no pages.
    var lost: [PageState] = []
    var toRead: [String]
    /// Of `unchanged`: the pages `restore` wrote again, and the files it placed.
    var restored: Set<String> = []
    var restoration = Healing()
    /// When the site's seal held: every page, left alone without even reading its state.
    var sealed: Int? = nil

    var unchangedCount: Int { unchanged.count + (sealed ?? 0) }
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
        return SiteInventory.walk(plan.configuration.site, skipping: skipped, excluded: plan.configuration.exclude,
                                  output: plan.inPlace ? nil : plan.configuration.outputRoot)
    }

    /// Pages whose last build still holds (unchanged source, same settings, every image localised,
    /// outputs present, images fresh) and those that must be read.
    func partition(_ inventory: SiteInventory, _ previous: [String: PageState], _ plan: BuildPlan, _ cache: ImageCache) async -> PagePartition {
        // In place, a page reached through a link is left as it is: rewriting it would replace the link
        // with a file, and the page it points at is in the site and rewritten where it is.
        let pages = zip(inventory.pages, inventory.stamps).map { (path: $0, stamps: $1) }
        let candidates = plan.inPlace ? pages.filter { !inventory.linkedPages.contains($0.path) } : pages
        var partition = await partition(candidates, previous: previous, plan: plan, cache: cache)
        progress.update { $0.pagesTotal = inventory.pages.count; $0.pagesUnchanged = partition.unchanged.count }
        partition.previous = previous
        return partition
    }

    private func partition(_ pages: [(path: String, stamps: SiteInventory.FileStamps)], previous: [String: PageState], plan: BuildPlan,
                           cache: ImageCache) async -> PagePartition {
        let config = plan.configuration
        // A shard build writes no pages: it reads them all, whatever an earlier build left.
        guard config.fetch.policy != .refresh, config.shard == nil else { return PagePartition(previous: [:], unchanged: [], toRead: pages.map(\.path)) }
        // With `--out`, a page whose outputs are gone is written again from the cache (`restore`).
        let restoring = plan.writesSite && !plan.inPlace
        // A `stat` or two per page: on every core, in slices, each remembering the image files it saw.
        let verdicts = pages.mapOnEveryCore(slice: 256) { slice in
            var seen: [String: Bool] = [:]
            return slice.map { page in verdict(page.path, page.stamps, previous[page.path], plan: plan, restoring: restoring, seen: &seen) }
        }
        var candidates: [PageState] = []
        var lost: Set<String> = []
        var toRead: [String] = []
        for verdict in verdicts {
            switch verdict {
            case .read(let path): toRead.append(path)
            case .unchanged(let state): candidates.append(state)
            case .lost(let state):
                candidates.append(state)
                lost.insert(state.path)
            }
        }
        // Images past their freshness are revalidated, which needs their pages.
        let keys = Set(candidates.flatMap(\.keys))
        let stale = await staleKeys(keys, plan: plan, cache: cache)
        var partition = PagePartition(previous: [:], unchanged: [], toRead: toRead)
        for state in candidates {
            if state.keys.contains(where: stale.contains) {
                partition.toRead.append(state.path)
            } else if lost.contains(state.path) {
                partition.lost.append(state)
            } else {
                partition.unchanged.append(state)
            }
        }
        partition.toRead.sort()
        return partition
    }

    private enum PageVerdict {
        case read(String)
        /// Unchanged, with its outputs in place (images' freshness still to be checked).
        case unchanged(PageState)
        /// Unchanged, but its page or image files are gone from the output.
        case lost(PageState)
    }

    /// Whether the page's last build still holds, by its state, its file's stamp (its hash when the
    /// stamp changed) and its outputs.
    private func verdict(_ path: String, _ stamps: SiteInventory.FileStamps, _ previous: PageState?, plan: BuildPlan, restoring: Bool,
                         seen: inout [String: Bool]) -> PageVerdict {
        let config = plan.configuration
        guard var state = previous, state.fingerprint == plan.fingerprint, state.complete,
              let stamp = stamps.site else { return .read(path) }
        if stamp.size != state.size || stamp.modified != state.modified {
            // Touched: unchanged only if the bytes are.
            guard let bytes = AtomicFile.read(config.site + "/" + path), BlobID(of: bytes).hex == state.sourceHash else {
                return .read(path)
            }
            state.size = stamp.size
            state.modified = stamp.modified
        }
        let imagesFolder = plan.imagesFolder + "/"
        let outputsThere = state.images.allSatisfy { name in
            if let known = seen[name] { return known }
            let found = FileStamp.of(imagesFolder + name) != nil
            seen[name] = found
            return found
        }
        // A page the last build did not rewrite (nothing to localise) is a copy of its source, which
        // `mirror` places whether or not it is there.
        guard config.outputDirectory != nil, let written = state.output else { return outputsThere ? .unchanged(state) : .read(path) }
        let output = stamps.output
        if outputsThere && output == written { return .unchanged(state) }
        // Restored only when the output page is as written or gone: one that is there but different
        // may be newer than this state (a build that wrote it and was killed before recording it).
        return restoring && state.rendered != nil && (output == written || output == nil) ? .lost(state) : .read(path)
    }

    /// Of `keys`, the images whose cached copy is past its freshness (or whose local file changed).
    func staleKeys(_ keys: Set<String>, plan: BuildPlan, cache: ImageCache) async -> Set<String> {
        let config = plan.configuration
        guard !keys.isEmpty else { return [] }
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
        return Set(stale)
    }

    /// Reads and scans `paths`, `jobs` at a time (gumbo and cmark are CPU work; pages are independent).
    /// A page that cannot be read is a warning naming it; the build goes on without it.
    func scan(_ paths: [String], _ plan: BuildPlan) async -> ScanOutcome {
        var outcome = ScanOutcome(pages: [], unreadable: [])
        await forEachScanned(paths, plan) { result in
            switch result {
            case .success(let page): outcome.pages.append(page)
            case .failure(let problem): outcome.unreadable.append(problem.diagnostic)
            }
        }
        outcome.pages.sort { $0.scan.file.path < $1.scan.file.path }
        return outcome
    }

    /// Reads and scans `paths`, handing each result to `body` as it comes: at most `jobs × 2` pages are
    /// held at once, however large the site.
    func forEachScanned(_ paths: [String], _ plan: BuildPlan, _ body: (Result<ScannedPage, PageReadError>) -> Void) async {
        await Self.forEachScanned(paths, site: plan.configuration.site, settings: plan.scanSettings, jobs: plan.configuration.jobs,
                                  maxBytes: plan.configuration.maxPageBytes, scanned: { progress.update { $0.pagesScanned += 1 } }, body)
    }

    static func forEachScanned(_ paths: [String], site: String, settings: ScanSettings, jobs: Int, maxBytes: Int = .max,
                               scanned: @Sendable () -> Void = {}, _ body: (Result<ScannedPage, PageReadError>) -> Void) async {
        await withTaskGroup(of: Result<ScannedPage, PageReadError>.self) { group in
            var next = 0
            func submit() {
                let path = paths[next]
                group.addTask { Self.scan(site: site, path: path, settings: settings, maxBytes: maxBytes) }
                next += 1
            }
            while next < min(paths.count, max(2, jobs * 2)) { submit() }
            while let result = await group.next() {
                scanned()
                body(result)
                if next < paths.count { submit() }
            }
        }
    }

    struct PageReadError: Error {
        var path: String
        var reason: String

        var diagnostic: Diagnostic {
            Diagnostic(.warning, "page not read: \(reason); left as it is", at: SourceLocation(file: path, line: 1, column: 1))
        }
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
                                    ownImages: OwnImageReferences.inUse(scan, bytes: bytes, settings: settings)))
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
