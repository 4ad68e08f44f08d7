import Locking

/// How far a build is, for a progress display: read `snapshot` as often as you like.
public final class BuildProgress: Sendable {
    public struct Snapshot: Sendable, Equatable {
        public var pagesTotal = 0
        public var pagesUnchanged = 0
        public var pagesScanned = 0
        public var imagesTotal = 0
        public var imagesResolved = 0
        public var downloadsInFlight = 0
        public var bytesDownloaded = 0
        public var finished = false

        /// `320/400 pages (200 unchanged) · 35/100 images · 4 downloading · 12.30 MB`
        public var line: String {
            var parts = ["\(pagesScanned + pagesUnchanged)/\(pagesTotal) pages"]
            if pagesUnchanged > 0 { parts[0] += " (\(pagesUnchanged) unchanged)" }
            if imagesTotal > 0 { parts.append("\(imagesResolved)/\(imagesTotal) images") }
            if downloadsInFlight > 0 { parts.append("\(downloadsInFlight) downloading") }
            if bytesDownloaded > 0 { parts.append(ByteCount.describe(bytesDownloaded)) }
            return parts.joined(separator: " · ")
        }
    }

    private let state = Locked(Snapshot())
    private let downloader = Locked<Downloader?>(nil)

    public init() {}

    public var snapshot: Snapshot {
        var snapshot = state.withLock { $0 }
        if let downloader = downloader.withLock({ $0 }) {
            let counters = downloader.stats
            snapshot.downloadsInFlight = counters.inFlight
            snapshot.bytesDownloaded = counters.bytes
        }
        return snapshot
    }

    func update(_ body: (inout Snapshot) -> Void) { state.withLock { body(&$0) } }

    func watch(_ downloader: Downloader) { self.downloader.withLock { $0 = downloader } }
}
