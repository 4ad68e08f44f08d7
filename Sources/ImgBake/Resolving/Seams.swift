import Foundation
import Vips

// The seams of the image manager: what it downloads with, what it decodes and encodes with, and the
// time it judges freshness and failure memory by. The build uses `Downloader`, `Transformer` and
// `SystemClock`; tests put their own doubles here (a counting downloader, a clock they move), from
// the tests' support library, so no product type carries members that exist only for tests.

/// Fetches remote originals (with retries, conditional requests and the address policy).
protocol Downloading: Sendable {
    func download(_ url: RemoteURL, revalidating validators: Validators?) async -> DownloadResult
}

/// Reads, inspects and transforms images on threads of its own.
protocol Transforming: Sendable {
    /// Reads the header and EXIF only, checking the pixel and frame budgets.
    func inspect(_ bytes: ImageBuffer, format: ImageFormat) async throws -> Inspection
    /// Decodes the source `source` gives and makes what `job` asks for, given its header.
    func transform(loading source: @escaping @Sendable () throws -> ImageBuffer, format: ImageFormat,
                   job: @escaping @Sendable (SourceInfo) -> TransformJob) async throws -> TransformOutput
    /// Reads a file of the site (a local image), off Swift's cooperative threads.
    func readFile(_ path: String) async throws(AtomicFile.ReadError) -> [UInt8]
}

/// Wall-clock time in Unix seconds: what freshness and failure memory are judged by.
public protocol WallClock: Sendable {
    func now() -> Double
}

/// The system's clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Double { Date().timeIntervalSince1970 }
}

extension Downloader: Downloading {}
extension Transformer: Transforming {}
