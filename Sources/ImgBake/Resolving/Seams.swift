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

/// Where builds remember the hosts whose names did not resolve, so that the builds of the next few
/// minutes (`fetch.unresolvable_ttl`) ask them nothing: the cache's index (`UnresolvableHostsInCache`).
public protocol UnresolvableHosts: Sendable {
    func rememberUnresolvable(_ host: String, reason: String) async
    func forgetUnresolvable(_ host: String) async
}

/// The memory in the cache's index, stamped with `clock`'s time.
struct UnresolvableHostsInCache: UnresolvableHosts {
    let cache: ImageCache
    let clock: any WallClock

    func rememberUnresolvable(_ host: String, reason: String) async {
        await cache.rememberUnresolvable(host, reason: reason, at: clock.now())
    }

    func forgetUnresolvable(_ host: String) async { await cache.forgetUnresolvable(host) }

    /// What a build starts with: the hosts not resolved within `ttl`, each with the reason its images
    /// fail with ("… 40 s ago; --retry-failed asks again").
    func remembered(within ttl: Duration) async -> [String: String] {
        let now = clock.now()
        return await cache.unresolvableHosts(since: now - Double(ttl.components.seconds)).mapValues { memory in
            "\(memory.reason), \(ImageManager.describeAge(now - memory.failedAt)) ago; --retry-failed asks again"
        }
    }
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
