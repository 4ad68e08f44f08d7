import Foundation

/// Finds the pages of a site: `*.html`, `*.htm`, `*.md`, `*.markdown`, not in hidden folders, not in
/// the images folder and not in the output folder when that lies inside the site.
enum SiteWalker {
    /// Paths relative to `site`, sorted, with `/` separators.
    static func pages(in site: String, skipping skipped: [String]) -> [String] {
        let root = URL(fileURLWithPath: site).standardizedFileURL.path
        let skippedPaths = skipped.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var pages: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let components = relative.split(separator: "/")
            let full = root + "/" + relative
            if components.contains(where: { $0.hasPrefix(".") }) || skippedPaths.contains(where: { full == $0 || full.hasPrefix($0 + "/") }) {
                if enumerator.fileAttributes?[.type] as? FileAttributeType == .typeDirectory { enumerator.skipDescendants() }
                continue
            }
            guard SourceFile.kind(forPath: relative) != nil,
                  enumerator.fileAttributes?[.type] as? FileAttributeType != .typeDirectory else { continue }
            pages.append(relative)
        }
        return pages.sorted()
    }
}
