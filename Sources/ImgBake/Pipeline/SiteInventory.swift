import Foundation

/// What a site folder holds: its pages (`*.html`, `*.htm`, `*.md`, `*.markdown`) and every other file
/// (copied to `--out` as they are), outside hidden folders, the images folder and the output folder
/// when that lies inside the site. `imgbake.toml` is the build's, not the site's.
struct SiteInventory: Sendable {
    /// Paths relative to the site, sorted, with `/` separators.
    var pages: [String]
    var otherFiles: [String]
    /// Every folder walked (relative; "" is the site itself): a file added or removed changes one.
    var folders: [String]

    static func walk(_ site: String, skipping skipped: [String]) -> SiteInventory {
        let root = URL(fileURLWithPath: site).standardizedFileURL.path
        let skippedPaths = skipped.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        var inventory = SiteInventory(pages: [], otherFiles: [], folders: [""])
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return inventory }
        while let relative = enumerator.nextObject() as? String {
            let isFolder = enumerator.fileAttributes?[.type] as? FileAttributeType == .typeDirectory
            let full = root + "/" + relative
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") })
                || skippedPaths.contains(where: { full == $0 || full.hasPrefix($0 + "/") }) {
                if isFolder { enumerator.skipDescendants() }
                continue
            }
            if isFolder {
                inventory.folders.append(relative)
            } else if SourceFile.kind(forPath: relative) != nil {
                inventory.pages.append(relative)
            } else if relative != ConfigurationFile.defaultName {
                inventory.otherFiles.append(relative)
            }
        }
        inventory.pages.sort()
        inventory.otherFiles.sort()
        inventory.folders.sort()
        return inventory
    }
}
