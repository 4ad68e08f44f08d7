import SQLite

/// One row of the index that holds a blob, for statistics and eviction.
public struct CacheEntry: Sendable, Equatable {
    public enum Kind: String, Sendable { case original, variant }
    public var kind: Kind
    public var key: String
    public var blob: BlobID
    public var bytes: Int
    /// Unix seconds of the last build that used it.
    public var usedAt: Double
}

extension CacheIndex {
    /// Every original and variant row.
    public func entries() throws -> [CacheEntry] {
        try database.withLock { db in
            let originals = try db.query("SELECT key, blob, bytes, used_at FROM originals").compactMap { row in
                Self.entry(.original, row)
            }
            let variants = try db.query("SELECT key, blob, bytes, used_at FROM variants WHERE dropped = 0").compactMap { row in
                Self.entry(.variant, row)
            }
            return originals + variants
        }
    }

    /// Remembers that `blob` is in the remote cache (its original's row is here, its bytes maybe not).
    public func putRemoteBlob(_ blob: BlobID) throws {
        try database.withLock { db in _ = try db.query("INSERT OR IGNORE INTO remote_blobs (blob) VALUES (?)", [.text(blob.hex)]) }
    }

    public func remoteBlobs() throws -> Set<BlobID> {
        try database.withLock { db in
            Set(try db.query("SELECT blob FROM remote_blobs").compactMap { $0[0].string.flatMap(BlobID.init(hex:)) })
        }
    }

    /// Blobs holding pages as builds wrote them (`PageState.rendered`): kept while a page state names them.
    public func pageBlobs() throws -> Set<BlobID> {
        try database.withLock { db in
            Set(try db.query("SELECT blob FROM pages WHERE blob IS NOT NULL").compactMap { $0[0].string.flatMap(BlobID.init(hex:)) })
        }
    }

    /// Every site and output with something recorded (`BuildPlan.stateRoot`: the two paths on two lines).
    func stateRoots() throws -> [String] {
        try database.withLock { db in
            try db.query("SELECT root FROM pages UNION SELECT root FROM placed UNION SELECT root FROM seals").compactMap { $0[0].string }
        }
    }

    /// Removes what is recorded about one site and output: page states, placed files, seal.
    func forget(root: String) throws {
        try database.withLock { db in
            try db.transaction {
                for table in ["pages", "placed", "seals"] { try db.query("DELETE FROM \(table) WHERE root = ?", [.text(root)]) }
            }
        }
    }

    public func failureCount() throws -> Int {
        try database.withLock { db in try db.query("SELECT COUNT(*) FROM failures").first?.first?.int ?? 0 }
    }

    /// Marks what a build used, so eviction is least recently used first.
    public func touch(originals: [OriginalKey], variants: [VariantKey], now: Double) throws {
        try database.withLock { db in
            try db.transaction {
                for key in originals { try db.query("UPDATE originals SET used_at = ? WHERE key = ?", [.real(now), .text(key.string)]) }
                for key in variants { try db.query("UPDATE variants SET used_at = ? WHERE key = ?", [.real(now), .text(key.hex)]) }
            }
        }
    }

    /// Removes one entry's row.
    public func remove(_ entry: CacheEntry) throws {
        let table = entry.kind == .original ? "originals" : "variants"
        try database.withLock { db in _ = try db.query("DELETE FROM \(table) WHERE key = ?", [.text(entry.key)]) }
    }

    /// Removes every row that stores `blob` (found damaged or missing).
    public func removeAll(withBlob blob: BlobID) throws {
        try database.withLock { db in
            try db.transaction {
                try db.query("DELETE FROM originals WHERE blob = ?", [.text(blob.hex)])
                try db.query("DELETE FROM variants WHERE blob = ?", [.text(blob.hex)])
            }
        }
    }

    /// Removes every cached image, failure and page state. What builds placed in their outputs
    /// (`placed`, `outputs`) stays: it is what lets the next build remove the files no page uses any
    /// more, and write again a file a page still uses; without it those files would stay for ever.
    public func removeEverything() throws {
        try database.withLock { db in
            try db.execute("DELETE FROM originals; DELETE FROM variants; DELETE FROM failures; DELETE FROM credits; DELETE FROM placeholders; DELETE FROM pages; DELETE FROM seals; DELETE FROM remote_blobs; DELETE FROM unresolvable_hosts;")
        }
    }

    private static func entry(_ kind: CacheEntry.Kind, _ row: [SQLValue]) -> CacheEntry? {
        guard let key = row[0].string, let blob = row[1].string.flatMap(BlobID.init(hex:)), let bytes = row[2].int,
              let usedAt = row[3].double else { return nil }
        return CacheEntry(kind: kind, key: key, blob: blob, bytes: bytes, usedAt: usedAt)
    }
}
