import Foundation

/// The resolving stage of a build: every unique image resolved through the manager once, with a
/// bounded number in flight (each holds its bytes while it is downloaded and inspected).
struct Resolver: Sendable {
    let cache: ImageCache
    let manager: ImageManager
    let inFlightLimit: Int
    /// `--shard K/N`: only the images whose key falls in this shard are resolved.
    var shard: Shard? = nil

    /// Resolves every unique image once, with the union of what its references ask for (so each
    /// source is decoded at most once).
    /// `observe(done, total)` is called as images finish (for a progress display).
    func resolveAll(_ wanted: [(ImageSource, VariantRequest)], observe: @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }) async -> ResolvedSet {
        var set = ResolvedSet()
        for (url, request) in wanted {
            let key: OriginalKey
            if let known = set.keyOf[url] { key = known } else {
                key = await manager.key(for: url)
                set.keyOf[url] = key
            }
            set.requests[key] = set.requests[key].map { $0.union(request) } ?? request
            // The same URL is fetched whatever order pages were scanned in.
            if let current = set.representative[key], current <= url { continue }
            set.representative[key] = url
        }
        let work = set.representative.sorted { $0.key < $1.key }.filter { shard?.includes($0.key) ?? true }
            .map { ($0.key, $0.value, set.requests[$0.key]!) }
        observe(0, work.count)
        let manager = self.manager
        await withTaskGroup(of: (OriginalKey, Resolution).self) { group in
            var next = 0
            func submit() {
                let (key, url, request) = work[next]
                group.addTask { (key, await manager.resolve(url, request: request)) }
                next += 1
            }
            while next < min(work.count, inFlightLimit) { submit() }
            while let (key, resolution) = await group.next() {
                set.results[key] = resolution
                observe(set.results.count, work.count)
                if next < work.count { submit() }
            }
        }
        return set
    }

    /// Records what this build used (for least-recently-used eviction).
    func finish(_ set: ResolvedSet, now: Double) async {
        var originals: [OriginalKey] = []
        var variants: [VariantKey] = []
        for case .resolved(let image, _) in set.results.values {
            originals.append(image.key)
            variants += image.variants.map(\.key)
        }
        await cache.touch(originals: originals, variants: variants, now: now)
    }

    /// Resolves `keys` again after their cached files turned out to be damaged.
    func reload(_ keys: Set<OriginalKey>, into set: inout ResolvedSet) async {
        for key in keys.sorted() {
            guard let url = set.representative[key] else { continue }
            set.results[key] = await manager.reload(url, request: set.requests[key])
        }
    }
}

/// Every unique image of the build and how it resolved.
struct ResolvedSet: Sendable {
    var keyOf: [ImageSource: OriginalKey] = [:]
    var representative: [OriginalKey: ImageSource] = [:]
    /// The union of what the references to each image ask for.
    var requests: [OriginalKey: VariantRequest] = [:]
    var results: [OriginalKey: Resolution] = [:]

    func image(for url: ImageSource) -> ResolvedImage? {
        guard let key = keyOf[url], case .resolved(let image, _)? = results[key] else { return nil }
        return image
    }

    /// A warning at every reference of an image that failed.
    func failureWarnings(for scans: [PageScan]) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for scan in scans {
            for reference in scan.references {
                guard let key = keyOf[reference.source], case .failed(let failure)? = results[key] else { continue }
                diagnostics.append(Diagnostic(.warning, "\(reference.source): \(failure.reason)", at: reference.location,
                                              kept: failure.kind == .offlineMiss ? .notInCache : .imageFailed))
            }
        }
        return diagnostics
    }

    /// Each image's notes (a repair, a stale copy used), once.
    var notes: [Diagnostic] {
        results.flatMap { key, result -> [Diagnostic] in
            guard case .resolved(_, let notes) = result, let url = representative[key] else { return [] }
            return notes.map { Diagnostic(.warning, "\(url): \($0)") }
        }
    }

    /// Why the image behind `url` is not available, if it is not.
    func failure(for url: ImageSource) -> String? {
        guard let key = keyOf[url], case .failed(let failure)? = results[key] else { return nil }
        return failure.reason
    }

    /// URLs that `--offline`/`--frozen` could not serve from the cache.
    var missing: [String] {
        results.compactMap { key, result in
            guard case .failed(let failure) = result, failure.kind == .offlineMiss else { return nil }
            return representative[key]?.description
        }.sorted()
    }
}
