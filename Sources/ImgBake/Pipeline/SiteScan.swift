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
        let plan = try BuildPlan(config, now: 0)
        // Reads and parses run on threads of their own, `jobs` at once.
        let pool = WorkerPool(threads: jobs, name: "pages")
        let inventory = await SiteInventory.walk(site, on: pool)
        let variants = VariantPlan(settings: config.madeImages)
        var diagnostics = inventory.diagnostics
        for batch in inventory.pages.batches(of: BuildRun.window) {
            for result in await models(of: batch, plan, on: pool) {
                switch result {
                case .failure(let problem): diagnostics.append(problem.diagnostic)
                case .success(let model):
                    diagnostics += model.scan.diagnostics
                    // `scan` has no images: an image of unknown size counts as large.
                    let priority = model.priority(output: config.output, plan: variants, images: nil)
                    for (position, reference) in model.scan.references.enumerated() {
                        body(Entry(file: reference.location.file, line: reference.location.line, column: reference.location.column,
                                   kind: reference.kind, url: reference.source.description,
                                   lcp: priority.candidate?.index == position ? priority.candidate?.reason : nil))
                    }
                }
            }
        }
        await pool.shutdown()
        return diagnostics
    }

    /// The models of `paths`, in their order, each page read and scanned once on `pool`'s threads, a
    /// few pages to a job (one job per page cost as much in thread wake-ups as small pages take to scan).
    private static func models(of paths: ArraySlice<String>, _ plan: BuildPlan, on pool: WorkerPool) async -> [Result<PageModel, PageFile.ReadError>] {
        let site = plan.configuration.site, maxBytes = plan.configuration.maxPageBytes
        let settings = plan.scanSettings, pageSettings = plan.pageSettings
        return await Array(paths).map(slicesOf: 8, on: pool) { slice in
            slice.map { path -> Result<PageModel, PageFile.ReadError> in
                switch PageFile.read(path, site: site, maxBytes: maxBytes) {
                case .failure(let problem): return .failure(problem)
                case .success(let (bytes, _)):
                    guard let scan = PageFile.scan(path, bytes, settings: settings) else { return .failure(PageFile.tooDeep(path, bytes)) }
                    var model = PageModel(scan, settings: pageSettings)
                    // What the entries need is kept; the bytes go with the page.
                    model.scan.file = SourceFile(path: path, kind: scan.file.kind, bytes: [])
                    return .success(model)
                }
            }
        }
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
