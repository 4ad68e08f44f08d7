/// What a build did, for the final summary line and the tests.
public struct BuildSummary: Sendable, Equatable {
    public var pagesScanned = 0
    /// Pages not read at all: unchanged since a build that localised all their images.
    public var pagesUnchanged = 0
    public var pagesWritten = 0
    public var references = 0
    public var referencesLocalised = 0
    public var uniqueImages = 0
    public var imagesCached = 0
    public var imagesDownloaded = 0
    public var imagesRevalidated = 0
    public var imagesStale = 0
    public var imagesFailed = 0
    public var variantsEncoded = 0
    public var filesWritten = 0
    public var requests = 0
    public var notModified = 0
    public var bytesDownloaded = 0
    public var seconds = 0.0

    public var lines: [String] {
        var lines = [
            "\(pagesScanned) pages scanned, \(pagesWritten) rewritten" + (pagesUnchanged > 0 ? ", \(pagesUnchanged) unchanged" : "")
                + "; \(referencesLocalised) of \(references) image references localised",
            "\(uniqueImages) images: \(imagesCached) from cache, \(imagesDownloaded) downloaded, \(imagesRevalidated) revalidated"
                + (imagesStale > 0 ? ", \(imagesStale) stale" : "") + ", \(imagesFailed) failed",
            "\(variantsEncoded) variants encoded, \(filesWritten) image files written; \(requests) requests"
                + (notModified > 0 ? " (\(notModified) not modified)" : "") + ", \(ByteCount.describe(bytesDownloaded)) downloaded",
        ]
        lines.append("done in \(String(format2: seconds)) s")
        return lines
    }
}

public enum ByteCount {
    public static func describe(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return "\(String(format2: Double(bytes) / 1024)) KB" }
        if bytes < 1024 * 1024 * 1024 { return "\(String(format2: Double(bytes) / 1048576)) MB" }
        return "\(String(format2: Double(bytes) / 1073741824)) GB"
    }
}

extension String {
    /// Two decimals, without Foundation's locale-dependent formatting.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
