import Foundation

/// `--report FILE.json`: every reference and image of a build with its outcome, per-host figures and
/// totals. The schema is `docs/report.schema.json`; `version` changes when it does.
public struct BuildReport: Codable, Sendable {
    public var version = 1
    /// The version as shown, `+dirty` included (`SystemInfo.displayVersion`).
    public var imgbake = SystemInfo.displayVersion
    public var generatedAt: String
    public var site: String
    public var output: String
    public var check: Bool
    public var policy: String
    public var seconds: Double
    public var totals: Totals
    public var hosts: [Host]
    public var images: [Image]
    public var references: [Reference]
    public var diagnostics: [Message]
    /// With a remote cache: what it did.
    public var remote: RemoteCounters?
    /// `--shard K/N`: images are this shard's only, and no pages were written.
    public var shard: String?
    /// Per lossy format, the encoder qualities of the files (chosen per variant under `"auto"`).
    public var qualities: [QualitySummary]?

    /// What became of an image, or of a reference (its image's, or why it was not read or written).
    public enum Outcome: String, Codable, Sendable {
        case cached, downloaded, revalidated, stale
        /// One of the site's own images, read from its file.
        case read
        case failed
        /// A reference of a page not read again: its last build localised it.
        case unchanged
        /// A reference left as it is, with the reason.
        case skipped

        init(_ origin: ResolutionOrigin) {
            switch origin {
            case .cached: self = .cached
            case .downloaded: self = .downloaded
            case .revalidated: self = .revalidated
            case .stale: self = .stale
            case .read: self = .read
            }
        }

        /// The reference points at local files now.
        var isLocalised: Bool { self != .failed && self != .skipped }
    }

    public struct Totals: Codable, Sendable {
        public var pages = 0, pagesRewritten = 0, pagesUnchanged = 0
        /// Of the unchanged pages: those whose lost outputs were written again from the cache.
        public var pagesRestored = 0
        public var references = 0, referencesLocalised = 0
        public var images = 0, imagesCached = 0, imagesDownloaded = 0, imagesRevalidated = 0, imagesStale = 0, imagesFailed = 0
        /// Of the failed images: those whose host could not be reached, and the hosts.
        public var imagesUnreachable = 0, unreachableHosts = 0
        /// Local images read from the site (their variants were not all cached).
        public var imagesRead = 0
        public var variantsEncoded = 0, filesWritten = 0
        public var requests = 0, notModified = 0, bytesDownloaded = 0
        /// Originals' bytes, and their fallbacks' (the widest original-format variant), over resolved images.
        public var bytesBefore = 0, bytesAfter = 0
    }

    public struct Host: Codable, Sendable {
        public var host: String
        public var requests: Int
        public var bytes: Int
        public var seconds: Double
        public var failures: Int
        /// Why the host could not be reached (its name did not resolve, no connection), this build or,
        /// for a name, a build of the last `fetch.unresolvable_ttl`.
        public var unreachable: String?
    }

    public struct Image: Codable, Sendable {
        public var url: String
        public var key: String
        /// `cached`, `downloaded`, `revalidated`, `stale`, `read` or `failed`.
        public var outcome: Outcome
        public var reason: String?
        public var format: String?
        public var width: Int?
        public var height: Int?
        public var bytesBefore: Int?
        public var bytesAfter: Int?
        public var files: [File]
        /// A small WebP of the image as a data URI (HTML reports only).
        public var thumbnail: String?
    }

    public struct File: Codable, Sendable {
        public var name: String
        public var format: String
        public var width: Int
        public var height: Int
        public var bytes: Int
        /// The encoder quality the file was made at; none for PNG, GIF and SVG, and where the source's own
        /// bytes stand for the variant.
        public var quality: Int?
        /// The SSIM (libwebp's, on luma) its quality search measured at that quality on a sample of its
        /// pixels: what the file was held to, the same target for every lossy format. None for a fixed
        /// quality (not measured).
        public var score: Double?
        /// The format this fallback was also made in, and why this one was kept instead.
        public var instead: Instead?
    }

    /// A fallback chosen over another format made at the same width (a PNG's, as PNG or as JPEG).
    public struct Instead: Codable, Sendable {
        public var format: String
        /// Its bytes; absent when it could not be made.
        public var bytes: Int?
        public var why: String

        init(_ passed: StoredVariant.PassedOver, kept: ImageFormat) {
            format = passed.format.rawValue
            bytes = passed.bytes > 0 ? passed.bytes : nil
            why = passed.bytes == 0 ? "the source has transparency, which a JPEG cannot keep"
                : kept == .jpeg ? "the JPEG reached the quality target and is smaller"
                : "the PNG is smaller, or the JPEG did not reach the quality target"
        }
    }

    /// How the qualities of one format's files are spread, and their bytes.
    public struct QualitySummary: Codable, Sendable, Equatable {
        public var format: String
        public var files: Int
        public var bytes: Int
        public var min: Int
        public var median: Int
        public var max: Int
        /// Files per quality (`"74": 3`).
        public var counts: [String: Int]

        /// One summary per format present, in the order given.
        static func of(_ files: [File]) -> [QualitySummary] {
            var order: [String] = []
            var byFormat: [String: [File]] = [:]
            for file in files where file.quality != nil {
                if byFormat[file.format] == nil { order.append(file.format) }
                byFormat[file.format, default: []].append(file)
            }
            return order.map { format in
                let group = byFormat[format]!
                let qualities = group.compactMap(\.quality).sorted()
                return QualitySummary(format: format, files: group.count, bytes: group.reduce(0) { $0 + $1.bytes },
                                      min: qualities.first!, median: qualities[(qualities.count - 1) / 2], max: qualities.last!,
                                      counts: Dictionary(qualities.map { (String($0), 1) }, uniquingKeysWith: +))
            }
        }
    }

    public struct Reference: Codable, Sendable {
        public var file: String
        public var line: Int
        public var column: Int
        public var kind: String
        public var url: String
        /// The image's outcome; `unchanged` (the page was not read again: its last build localised
        /// it) or `skipped` (left as it is, with the reason).
        public var outcome: Outcome
        public var reason: String?
        /// Index into `images`.
        public var image: Int?
        /// On the reference taken for its page's likely Largest Contentful Paint image: why.
        public var lcp: String?
    }

    public struct Message: Codable, Sendable {
        public var severity: String
        public var location: String?
        public var message: String
    }

    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }
}

/// A page's references as the report lists them, with the key of each one's image (nil when the page
/// is left alone).
struct ReportPage: Sendable {
    var references: [BuildReport.Reference] = []
    var keys: [OriginalKey?] = []
}

/// Assembles the report from what the build did.
struct ReportBuilder {
    var report: BuildReport
    private var imageIndex: [OriginalKey: Int] = [:]
    /// References of the pages read, with their image's key, until the images are known.
    private var pending: [(BuildReport.Reference, OriginalKey?)] = []

    init(configuration config: Configuration, check: Bool) {
        let formatter = ISO8601DateFormatter()
        report = BuildReport(generatedAt: formatter.string(from: Date()), site: config.site, output: config.outputRoot,
                             check: check, policy: config.fetch.policy.rawValue, seconds: 0, totals: .init(),
                             hosts: [], images: [], references: [], diagnostics: [])
    }

    mutating func add(images set: ResolvedSet, naming: OutputNaming) {
        for key in set.results.keys.sorted() {
            guard let result = set.results[key], let url = set.representative[key] else { continue }
            var image = BuildReport.Image(url: url.description, key: key.string, outcome: .failed, files: [])
            switch result {
            case .failed(let failure):
                image.reason = failure.reason
            case .resolved(let resolved, _):
                image.outcome = BuildReport.Outcome(resolved.origin)
                image.format = resolved.source.format.rawValue
                image.width = resolved.source.width
                image.height = resolved.source.height
                image.bytesBefore = resolved.originalBytes
                image.bytesAfter = resolved.variants.widest(in: resolved.fallbackFormats)?.bytes
                image.files = resolved.variants.onePerFile.map {
                    BuildReport.File(name: naming.fileName($0, of: resolved), format: $0.format.rawValue,
                                     width: $0.width, height: $0.height, bytes: $0.bytes, quality: $0.made.quality,
                                     score: $0.made.score?.value, instead: $0.passedOver.map { [format = $0.format] in BuildReport.Instead($0, kept: format) })
                }
                report.totals.bytesBefore += resolved.originalBytes
                report.totals.bytesAfter += image.bytesAfter ?? 0
            }
            imageIndex[key] = report.images.count
            report.images.append(image)
        }
        for (var entry, key) in pending {
            if let key, let index = imageIndex[key] {
                entry.image = index
                entry.outcome = report.images[index].outcome
                entry.reason = report.images[index].reason
            }
            report.references.append(entry)
        }
        pending = []
    }

    /// A page's references (their images' outcomes are filled in by `add(images:naming:)`).
    mutating func add(_ page: ReportPage) {
        for (entry, key) in zip(page.references, page.keys) {
            pending.append((entry, key))
        }
    }

    mutating func add(unchanged state: PageState) {
        for reference in state.references ?? [] {
            report.references.append(BuildReport.Reference(file: state.path, line: reference.line, column: reference.column,
                                                           kind: reference.kind.rawValue, url: reference.url, outcome: .unchanged))
        }
    }

    mutating func finish(summary: BuildSummary, counters: FetchCounters, diagnostics: [Diagnostic]) {
        let s = summary
        report.seconds = s.seconds
        report.remote = s.remote.map { remote in
            var rounded = remote
            rounded.seconds = (remote.seconds * 1000).rounded() / 1000
            return rounded
        }
        report.shard = s.shard?.description
        // Pages come in the order they were finished: the report lists them by place.
        report.references.sort { ($0.file, $0.line, $0.column, $0.kind, $0.url) < ($1.file, $1.line, $1.column, $1.kind, $1.url) }
        let summaries = BuildReport.QualitySummary.of(report.images.flatMap(\.files))
        report.qualities = summaries.isEmpty ? nil : summaries
        report.totals.pages = s.pagesScanned + s.pagesUnchanged
        report.totals.pagesRewritten = s.pagesWritten
        report.totals.pagesUnchanged = s.pagesUnchanged
        report.totals.pagesRestored = s.pagesRestored
        report.totals.references = report.references.count
        report.totals.referencesLocalised = report.references.filter { $0.outcome.isLocalised }.count
        report.totals.images = s.uniqueImages
        report.totals.imagesCached = s.imagesCached
        report.totals.imagesDownloaded = s.imagesDownloaded
        report.totals.imagesRevalidated = s.imagesRevalidated
        report.totals.imagesStale = s.imagesStale
        report.totals.imagesFailed = s.imagesFailed
        report.totals.imagesUnreachable = s.imagesUnreachable
        report.totals.unreachableHosts = s.unreachableHosts
        report.totals.imagesRead = s.imagesRead
        report.totals.variantsEncoded = s.variantsEncoded
        report.totals.filesWritten = s.filesWritten
        report.totals.requests = counters.requests
        report.totals.notModified = counters.notModified
        report.totals.bytesDownloaded = counters.bytes
        // Every host asked, and those not asked because an earlier build could not resolve them.
        report.hosts = Set(counters.hosts.keys).union(counters.unreachable.keys).sorted().map { host in
            let asked = counters.hosts[host] ?? HostCounters()
            return BuildReport.Host(host: host, requests: asked.requests, bytes: asked.bytes,
                                    seconds: (asked.seconds * 1000).rounded() / 1000, failures: asked.failures,
                                    unreachable: counters.unreachable[host])
        }
        report.diagnostics = diagnostics.map {
            BuildReport.Message(severity: $0.severity.rawValue, location: $0.location?.description, message: $0.message)
        }
    }
}
