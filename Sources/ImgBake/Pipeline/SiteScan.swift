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
        /// On the page's likely Largest Contentful Paint image: why it was taken (by its place and the
        /// size the author gave; `scan` has no images, so one of unknown size counts as large).
        public var lcp: String? = nil

        public var location: SourceLocation { SourceLocation(file: file, line: line, column: column) }
    }

    public var entries: [Entry]
    public var diagnostics: [Diagnostic]

    public static func scan(site: String, jobs: Int) async throws(BuildError) -> SiteScan {
        var entries: [Entry] = []
        let diagnostics = try await stream(site: site, jobs: jobs) { entries.append($0) }
        return SiteScan(entries: entries, diagnostics: diagnostics)
    }

    /// Hands every entry to `body` in page order, then returns the diagnostics: pages are scanned a
    /// batch at a time, so memory does not grow with the site (a million references stream through).
    public static func stream(site: String, jobs: Int, _ body: (Entry) -> Void) async throws(BuildError) -> [Diagnostic] {
        var config = Configuration(site: site, cacheDirectory: "", jobs: jobs)
        config.outputDirectory = nil
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: site, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BuildError(.usage, "site folder \(site) does not exist")
        }
        let inventory = SiteInventory.walk(site, skipping: [])
        let plan = try BuildPlan(config, now: 0)
        let settings = plan.scanSettings
        var diagnostics = inventory.diagnostics
        for batch in inventory.pages.batches(of: Build.batchPages) {
            var scanned: [ScannedPage] = []
            await Build.forEachScanned(Array(batch), site: site, settings: settings, jobs: jobs, maxBytes: config.maxPageBytes) { result in
                switch result {
                case .success(let page): scanned.append(page)
                case .failure(let problem): diagnostics.append(problem.diagnostic)
                }
            }
            for page in scanned.sorted(by: { $0.scan.file.path < $1.scan.file.path }) {
                diagnostics += page.scan.diagnostics
                let priority = LoadingPriority(page.scan.references, output: config.output, unknownIsLarge: true) { _ in nil }
                for (index, reference) in page.scan.references.enumerated() {
                    body(Entry(file: reference.location.file, line: reference.location.line, column: reference.location.column,
                               kind: reference.kind, url: reference.source.description,
                               lcp: priority.candidate?.index == index ? priority.candidate?.reason : nil))
                }
            }
        }
        return diagnostics
    }

    /// The entries as a JSON array, as `JSONEncoder` would write it whole.
    public func json() -> String {
        var writer = JSONArrayWriter()
        var text = writer.start
        for entry in entries { text += writer.element(entry) }
        return text + writer.end
    }
}

/// A JSON array of scan entries written an element at a time (pretty-printed, keys sorted), so a long
/// one need not be held whole.
public struct JSONArrayWriter {
    private let encoder: JSONEncoder
    private var count = 0

    public init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    }

    public let start = "["
    public var end: String { count == 0 ? "]" : "\n]" }

    /// The text that adds `entry` to what was written so far.
    public mutating func element(_ entry: SiteScan.Entry) -> String {
        guard let data = try? encoder.encode(entry) else { return "" }
        defer { count += 1 }
        return (count == 0 ? "\n  " : ",\n  ") + String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\n", with: "\n  ")
    }
}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func batches(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
