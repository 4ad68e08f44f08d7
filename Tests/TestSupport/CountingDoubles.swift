import Locking
@testable import ImgBake
import Vips

// Doubles at the image manager's seams (`Downloading`, `Transforming`): the real part behind them,
// counted, so tests can prove de-duplication without members in the product that exist for them.

/// A downloader that counts what it is asked for, then asks the real one: how tests see that a URL was
/// fetched once however many pages use it.
package final class CountingDownloader: Downloading {
    private let downloader: Downloader
    private let counts = Locked([String: Int]())

    package init(_ downloader: Downloader) { self.downloader = downloader }

    package func download(_ url: RemoteURL, revalidating validators: Validators?) async -> DownloadResult {
        counts.withLock { $0[url.string, default: 0] += 1 }
        return await downloader.download(url, revalidating: validators)
    }

    /// Downloads asked for, by URL.
    package var downloads: [String: Int] { counts.withLock { $0 } }
    package var total: Int { downloads.values.reduce(0, +) }
}

/// A transformer that counts decodes, then asks the real one.
package final class CountingTransformer: Transforming {
    private let transformer: Transformer
    private let count = Locked(0)

    package init(_ transformer: Transformer) { self.transformer = transformer }

    package func inspect(_ bytes: ImageBuffer, format: ImageFormat) async throws -> Inspection {
        try await transformer.inspect(bytes, format: format)
    }

    package func transform(loading source: @escaping @Sendable () throws -> ImageBuffer, format: ImageFormat,
                           job: @escaping @Sendable (SourceInfo) -> TransformJob) async throws -> TransformOutput {
        count.withLock { $0 += 1 }
        return try await transformer.transform(loading: source, format: format, job: job)
    }

    package func readFile(_ path: String) async throws(AtomicFile.ReadError) -> [UInt8] { try await transformer.readFile(path) }

    /// Transforms asked for (each one decode of a source).
    package var transforms: Int { count.withLock { $0 } }
}
