import Foundation

extension Build {
    /// Pages whose last build still holds (unchanged source, same settings, every image localised,
    /// outputs present, images fresh) and those that must be read.
    func partition(_ pages: [String], previous: [String: PageState], fingerprint: String,
                   cache: ImageCache) async -> (unchanged: [PageState], toRead: [String]) {
        let config = configuration
        guard config.fetch.policy != .refresh else { return ([], pages) }
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
            guard var state = previous[path], state.fingerprint == fingerprint, state.complete,
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
            let imagesFolder = config.outputRoot + "/" + config.output.imagesDirectory + "/"
            let outputsThere = state.images.allSatisfy { exists(imagesFolder + $0) }
            let pageThere = config.outputDirectory == nil
                || (state.output.map { FileStamp.of(config.outputRoot + "/" + path) == $0 } ?? exists(config.outputRoot + "/" + path))
            guard outputsThere && pageThere else { toRead.append(path); continue }
            candidates.append(state)
        }
        // Images past their freshness are revalidated, which needs their pages.
        let keys = Set(candidates.flatMap(\.keys))
        guard !keys.isEmpty, !config.fetch.isOffline else { return (candidates, toRead) }
        let ttl = config.fetch.ttl
        let moment = now()
        let stale: Set<String> = (try? await cache.perform { index, _ in
            Set(try keys.filter { key in
                guard let record = try index.original(OriginalKey(key)) else { return true }
                return !Freshness.isFresh(record, now: moment, defaultTTL: ttl)
            })
        }) ?? keys
        var unchanged: [PageState] = []
        for state in candidates {
            if state.keys.contains(where: stale.contains) { toRead.append(state.path) } else { unchanged.append(state) }
        }
        return (unchanged, toRead.sorted())
    }

    /// Reads and scans `paths`, `jobs` at a time (gumbo and cmark are CPU work; pages are independent).
    /// A page that cannot be read is a warning naming it; the build goes on without it.
    func scan(_ paths: [String], progress: BuildProgress? = nil) async -> (pages: [ScannedPage], unreadable: [Diagnostic]) {
        let config = configuration
        let publicPath = OutputNaming(publicPath: config.output.publicPath).publicPath
        return await withTaskGroup(of: (Int, Result<ScannedPage, PageReadError>).self) { group in
            var results = [Result<ScannedPage, PageReadError>?](repeating: nil, count: paths.count)
            var next = 0
            func submit() {
                let index = next
                let path = paths[index]
                group.addTask { (index, Self.scan(site: config.site, path: path, publicPath: publicPath)) }
                next += 1
            }
            while next < min(paths.count, max(2, config.jobs * 2)) { submit() }
            while let (index, scanned) = await group.next() {
                results[index] = scanned
                progress?.update { $0.pagesScanned += 1 }
                if next < paths.count { submit() }
            }
            var pages: [ScannedPage] = []
            var unreadable: [Diagnostic] = []
            for case let result? in results {
                switch result {
                case .success(let page): pages.append(page)
                case .failure(let problem):
                    unreadable.append(Diagnostic(.warning, "cannot read the page: \(problem.reason); left as it is",
                                                 at: SourceLocation(file: problem.path, line: 1, column: 1)))
                }
            }
            return (pages, unreadable)
        }
    }

    struct PageReadError: Error {
        var path: String
        var reason: String
    }

    static func scan(site: String, path: String, publicPath: String) -> Result<ScannedPage, PageReadError> {
        guard let kind = SourceFile.kind(forPath: path) else { return .failure(PageReadError(path: path, reason: "not a page")) }
        let bytes: [UInt8]
        let stamp: FileStamp
        do {
            (bytes, stamp) = try AtomicFile.readWithStamp(site + "/" + path)
        } catch {
            return .failure(PageReadError(path: path, reason: error.reason))
        }
        let file = SourceFile(path: path, kind: kind, bytes: bytes)
        var scan = kind == .html ? HTMLScanner.scan(file) : MarkdownScanner.scan(file)
        scan.file = SourceFile(path: path, kind: kind, bytes: [])
        return .success(ScannedPage(scan: scan, hash: BlobID(of: bytes).hex, stamp: stamp,
                                    ownImages: OwnImageReferences.fileNames(in: bytes, publicPath: publicPath)))
    }

    /// The page's bytes again, for rewriting, if they are still the ones scanned.
    func reload(_ page: ScannedPage) -> PageScan? {
        guard let bytes = AtomicFile.read(configuration.site + "/" + page.scan.file.path), BlobID(of: bytes).hex == page.hash
        else { return nil }
        var scan = page.scan
        scan.file = SourceFile(path: scan.file.path, kind: scan.file.kind, bytes: bytes)
        return scan
    }

    /// Writes a rewritten page (in place, or under `--out`), keeping the source's permissions, unless
    /// the target already holds exactly these bytes. Returns the written file's stamp.
    func writePage(_ path: String, _ bytes: [UInt8]) throws(BuildError) -> FileStamp? {
        let source = configuration.site + "/" + path
        let target = configuration.outputRoot + "/" + path
        if configuration.outputDirectory != nil, FileStamp.of(target)?.size == bytes.count, AtomicFile.read(target) == bytes {
            return FileStamp.of(target)
        }
        do {
            try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent)
            try AtomicFile.write(bytes, to: target, durable: false, mode: AtomicFile.mode(of: source) ?? 0o644)
        } catch {
            throw BuildError(.failed, error.description)
        }
        return FileStamp.of(target)
    }
}
