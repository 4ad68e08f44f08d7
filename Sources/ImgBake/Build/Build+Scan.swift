import Foundation

extension Build {
    /// Reads and scans every page, `jobs` at a time (gumbo and cmark are CPU work; pages are
    /// independent).
    func scanSite() async -> [PageScan] {
        let config = configuration
        var skipped = [config.outputRoot + "/" + config.output.imagesDirectory]
        if let out = config.outputDirectory { skipped.append(out) }
        let paths = SiteWalker.pages(in: config.site, skipping: skipped)
        return await withTaskGroup(of: (Int, PageScan?).self) { group in
            var results = [PageScan?](repeating: nil, count: paths.count)
            var next = 0
            func submit() {
                let index = next
                let path = paths[index]
                group.addTask { (index, Self.scan(site: config.site, path: path)) }
                next += 1
            }
            while next < min(paths.count, max(2, config.jobs * 2)) { submit() }
            while let (index, scan) = await group.next() {
                results[index] = scan
                if next < paths.count { submit() }
            }
            return results.compactMap { $0 }
        }
    }

    static func scan(site: String, path: String) -> PageScan? {
        guard let kind = SourceFile.kind(forPath: path), let bytes = AtomicFile.read(site + "/" + path) else { return nil }
        let file = SourceFile(path: path, kind: kind, bytes: bytes)
        return kind == .html ? HTMLScanner.scan(file) : MarkdownScanner.scan(file)
    }
}
