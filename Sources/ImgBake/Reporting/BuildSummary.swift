/// What a build did, for the final summary line and the tests.
public struct BuildSummary: Sendable, Equatable {
    public var pagesScanned = 0
    /// Pages not read at all: unchanged since a build that localised all their images.
    public var pagesUnchanged = 0
    /// Of the unchanged pages: those whose lost outputs were written again from the cache.
    public var pagesRestored = 0
    /// Pages written as a build for another output made them (the same source, settings and images),
    /// from the copy it kept: read, but neither scanned nor rewritten.
    public var pagesReused = 0
    /// Nothing in the site or the output changed since the last build, which left it settled (its seal
    /// held): no page state was even read.
    public var nothingChanged = false
    public var pagesWritten = 0
    public var references = 0
    public var referencesLocalised = 0
    public var uniqueImages = 0
    public var imagesCached = 0
    public var imagesDownloaded = 0
    public var imagesRevalidated = 0
    public var imagesStale = 0
    /// Local images read from the site (new or changed since they were last read).
    public var imagesRead = 0
    public var imagesFailed = 0
    /// Of the failed: those whose host could not be reached, and how many hosts that was.
    public var imagesUnreachable = 0
    public var unreachableHosts = 0
    public var variantsEncoded = 0
    public var filesWritten = 0
    public var requests = 0
    public var notModified = 0
    public var bytesDownloaded = 0
    public var seconds = 0.0
    /// With a remote cache.
    public var remote: RemoteCounters?
    /// `--shard K/N`: `uniqueImages` are this shard's.
    public var shard: Shard?

    public var lines: [String] {
        var lines = [
            "\(pagesScanned) pages scanned, \(pagesWritten) rewritten" + (pagesUnchanged > 0 ? ", \(pagesUnchanged) unchanged" : "")
                + (pagesRestored > 0 ? " (\(pagesRestored) written again from the cache)" : "")
                + (nothingChanged ? " (nothing changed since the last build)" : "")
                + (pagesReused > 0 ? ", \(pagesReused) as built for another output" : "")
                + "; \(referencesLocalised) of \(references) image references localised",
            "\(uniqueImages) images: \(imagesCached) from cache, \(imagesDownloaded) downloaded, \(imagesRevalidated) revalidated"
                + (imagesRead > 0 ? ", \(imagesRead) read from the site" : "")
                + (imagesStale > 0 ? ", \(imagesStale) stale" : "") + ", \(imagesFailed) failed"
                + (imagesUnreachable > 0 ? " (\(Self.count(imagesUnreachable, "image")) on \(Self.count(unreachableHosts, "unreachable host")))" : ""),
            "\(variantsEncoded) variants encoded, \(filesWritten) image files written; \(requests) requests"
                + (notModified > 0 ? " (\(notModified) not modified)" : "") + ", \(ByteCount.describe(bytesDownloaded)) downloaded",
        ]
        if let remote {
            lines.append("remote cache: \(remote.hits) hits, \(remote.misses) misses, \(ByteCount.describe(remote.bytesDown)) down, "
                + "\(ByteCount.describe(remote.bytesUp)) up (\(remote.uploads) written, \(remote.alreadyThere) already there); "
                + "\(remote.requests) requests, \(String(format2: remote.seconds)) s")
        }
        if let shard {
            lines.insert("shard \(shard): \(uniqueImages) of the site's images are this shard's; no pages or image files written", at: 0)
        }
        lines.append("done in \(String(format2: seconds)) s")
        return lines
    }

    private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}

extension BuildSummary {
    /// Adds the images of `set` to the counts.
    mutating func count(_ set: ResolvedSet) {
        uniqueImages = set.results.count
        variantsEncoded += set.encoded.values.reduce(0, +)
        var hosts = Set<String>()
        defer { unreachableHosts = hosts.count }
        for result in set.results.values {
            switch result {
            case .failed(let failure):
                imagesFailed += 1
                if failure.kind == .fetch(.unreachable) {
                    imagesUnreachable += 1
                    if let host = failure.host { hosts.insert(host) }
                }
            case .resolved(let image, _):
                switch image.origin {
                case .cached: imagesCached += 1
                case .downloaded: imagesDownloaded += 1
                case .revalidated: imagesRevalidated += 1
                case .stale: imagesStale += 1
                case .read: imagesRead += 1
                }
            }
        }
    }
}
