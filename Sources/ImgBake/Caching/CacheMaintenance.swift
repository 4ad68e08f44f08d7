import Foundation

/// `imgbake cache stats | verify | gc | clean`: what the cache holds, re-hashing it, keeping it under
/// a size budget, emptying it. Everything but `stats` must run under the exclusive cache lock.
public enum CacheMaintenance {
    public struct Stats: Sendable, Equatable {
        public var originals = 0
        public var variants = 0
        public var failures = 0
        /// Bytes of blob files referenced by originals and by variants (a blob shared by both counts in both).
        public var originalBytes = 0
        public var variantBytes = 0
        /// Every blob file on disk, referenced or not.
        public var blobFiles = 0
        public var blobBytes = 0
        /// Last-used times (Unix seconds) of the least and most recently used entries.
        public var oldest: Double?
        public var newest: Double?
    }

    public static func stats(_ cache: ImageCache) throws -> Stats {
        var stats = Stats()
        let entries = try cache.index.entries()
        for entry in entries {
            if entry.kind == .original {
                stats.originals += 1
                stats.originalBytes += entry.bytes
            } else {
                stats.variants += 1
                stats.variantBytes += entry.bytes
            }
        }
        stats.failures = try cache.index.failureCount()
        stats.oldest = entries.map(\.usedAt).min()
        stats.newest = entries.map(\.usedAt).max()
        for (_, size) in blobFiles(cache.blobs) {
            stats.blobFiles += 1
            stats.blobBytes += size
        }
        return stats
    }

    public struct VerifyReport: Sendable, Equatable {
        public var checked = 0
        /// Blob files whose bytes did not hash to their name (removed, with their rows).
        public var corrupt: [BlobID] = []
        /// Blobs the index refers to that are not on disk (their rows removed).
        public var missing: [BlobID] = []
        /// Temporary files of writes a killed process never finished (removed).
        public var temporariesRemoved = 0
        public var isClean: Bool { corrupt.isEmpty && missing.isEmpty }
    }

    /// Re-hashes every blob; drops corrupt blobs and every row pointing at a corrupt or missing one.
    public static func verify(_ cache: ImageCache) throws -> VerifyReport {
        var report = VerifyReport()
        report.temporariesRemoved = sweepTemporaries(cache.blobs)
        var present = Set<BlobID>()
        for (id, _) in blobFiles(cache.blobs) {
            report.checked += 1
            switch cache.blobs.read(id) {
            case .found: present.insert(id)
            case .corrupt, .missing:
                report.corrupt.append(id)
                try cache.index.removeAll(withBlob: id)
            }
        }
        // An original whose row came from a remote cache may have its bytes only there, by design.
        let remote = try cache.index.remoteBlobs()
        for blob in Set(try cache.index.entries().map(\.blob)) where !present.contains(blob) && !report.corrupt.contains(blob)
            && !remote.contains(blob) {
            report.missing.append(blob)
            try cache.index.removeAll(withBlob: blob)
        }
        report.corrupt.sort()
        report.missing.sort()
        return report
    }

    public struct GCReport: Sendable, Equatable {
        public var removedEntries = 0
        public var removedFiles = 0
        public var freedBytes = 0
        public var remainingBytes = 0
        /// True when the budget could not be met without touching protected entries.
        public var overBudget = false
    }

    /// Evicts least recently used entries until the blob files fit in `maxBytes`. Blob files no row
    /// refers to go first, then pages as written; entries used at or after `protectedSince` (by the
    /// running build) never go.
    public static func collect(_ cache: ImageCache, maxBytes: Int, protectedSince: Double? = nil) throws -> GCReport {
        var report = GCReport()
        sweepTemporaries(cache.blobs)
        var sizes = Dictionary(uniqueKeysWithValues: blobFiles(cache.blobs))
        var total = sizes.values.reduce(0, +)
        let entries = try cache.index.entries()
        var references: [BlobID: Int] = [:]
        for entry in entries { references[entry.blob, default: 0] += 1 }
        func drop(_ blob: BlobID) {
            guard let size = sizes[blob] else { return }
            cache.blobs.remove(blob)
            sizes[blob] = nil
            total -= size
            report.removedFiles += 1
            report.freedBytes += size
        }
        // A page's blob (`PageState.rendered`) is kept while a state names it, but it is the first to
        // go over budget: without it the page is rewritten from its source, with no request.
        let pageBlobs = try cache.index.pageBlobs()
        for blob in sizes.keys.filter({ references[$0] == nil && !pageBlobs.contains($0) }) { drop(blob) }
        for blob in pageBlobs.sorted() where total > maxBytes && references[blob] == nil { drop(blob) }
        let candidates = entries.filter { protectedSince == nil || $0.usedAt < protectedSince! }.sorted {
            ($0.usedAt, $0.key) < ($1.usedAt, $1.key)
        }
        for entry in candidates where total > maxBytes {
            try cache.index.remove(entry)
            report.removedEntries += 1
            references[entry.blob, default: 1] -= 1
            if references[entry.blob] == 0 { drop(entry.blob) }
        }
        report.remainingBytes = total
        report.overBudget = total > maxBytes
        return report
    }

    /// Forgets the page states, placed files and seal of every site whose folder or output folder is
    /// gone (`cache gc`): a CI runner building into a new temporary folder each time left one set of
    /// rows per run, each holding its pages' blobs, for ever. Nothing can be lost by it: a site made
    /// again at the same place has its pages read again, and files imgbake has no record of placing
    /// are never removed by it. Returns how many sites were forgotten.
    public static func forgetSitesGone(_ cache: ImageCache, exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) throws -> Int {
        var forgotten = 0
        for root in try cache.index.stateRoots() {
            let folders = root.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard folders.count == 2, !folders.allSatisfy(exists) else { continue }
            try cache.index.forget(root: root)
            forgotten += 1
        }
        return forgotten
    }

    /// Removes every blob and row.
    /// Empties the cache of images (see `CacheIndex.removeEverything` for what stays).
    public static func clean(_ cache: ImageCache) throws {
        try cache.index.removeEverything()
        for (blob, _) in blobFiles(cache.blobs) { cache.blobs.remove(blob) }
    }

    /// Removes the temporary files of writes a killed process never finished (`.<blob>.tmp-<pid>-…`
    /// of processes that no longer run). Returns how many.
    @discardableResult
    static func sweepTemporaries(_ blobs: BlobStore) -> Int {
        var removed = 0
        for prefix in (try? FileManager.default.contentsOfDirectory(atPath: blobs.root)) ?? [] where prefix.count == 2 {
            removed += StaleTemporaries.remove(in: blobs.root + "/" + prefix)
        }
        return removed
    }

    /// Every well-named blob file and its size.
    static func blobFiles(_ blobs: BlobStore) -> [(BlobID, Int)] {
        let manager = FileManager.default
        var files: [(BlobID, Int)] = []
        for prefix in (try? manager.contentsOfDirectory(atPath: blobs.root)) ?? [] where prefix.count == 2 {
            for name in (try? manager.contentsOfDirectory(atPath: blobs.root + "/" + prefix)) ?? [] {
                guard let id = BlobID(hex: name), let size = blobs.size(id) else { continue }
                files.append((id, size))
            }
        }
        return files.sorted { $0.0 < $1.0 }
    }
}

