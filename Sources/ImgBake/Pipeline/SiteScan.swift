import Foundation

/// `imgbake scan`: every image reference of a site (remote, and its own), with its place and kind. No
/// network, no cache.
public struct SiteScan: Sendable {
    public struct Entry: Sendable, Codable, Equatable {
        public var file: String
        public var line: Int
        public var column: Int
        public var kind: ImageReference.Kind
        public var url: String

        public var location: SourceLocation { SourceLocation(file: file, line: line, column: column) }
    }

    public var entries: [Entry]
    public var diagnostics: [Diagnostic]

    public static func scan(site: String, jobs: Int) async throws(BuildError) -> SiteScan {
        var config = Configuration(site: site, cacheDirectory: "", jobs: jobs)
        config.outputDirectory = nil
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: site, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BuildError(.usage, "site folder \(site) does not exist")
        }
        let inventory = SiteInventory.walk(site, skipping: [])
        let pages = inventory.pages
        let outcome = await Build.scan(pages, site: site, settings: try BuildPlan(config, now: 0).scanSettings,
                                       jobs: jobs, maxBytes: config.maxPageBytes)
        let (scans, unreadable) = (outcome.pages.map(\.scan), outcome.unreadable)
        return SiteScan(
            entries: scans.flatMap { scan in
                scan.references.map {
                    Entry(file: $0.location.file, line: $0.location.line, column: $0.location.column, kind: $0.kind, url: $0.source.description)
                }
            },
            diagnostics: inventory.diagnostics + unreadable + scans.flatMap(\.diagnostics))
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(entries)) ?? Data("[]".utf8), as: UTF8.self)
    }
}
