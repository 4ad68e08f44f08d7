import Foundation
import SQLite
import Locking

/// The SQLite index of the cache: URL key → original blob and validators; variant key → variant blob;
/// remembered failures. WAL mode and a busy timeout let several builds share one cache; every write
/// is a short transaction.
public final class CacheIndex: Sendable {
    /// The connection; every use holds the mutex for one short statement or transaction.
    let database: Locked<Database>
    static let schemaVersion = 8

    /// Opens the index, creating or migrating it. With `readOnly`, an existing index is opened as an
    /// immutable file and used as it is, and a missing one is an empty index in memory.
    public init(path: String, readOnly: Bool = false) throws {
        if readOnly && FileManager.default.fileExists(atPath: path) {
            database = Locked(try Database(path: path, immutable: true))
            return
        }
        let db = try Database(path: readOnly ? ":memory:" : path)
        // Two builds creating one cache at the same moment: switching to WAL can answer SQLITE_BUSY
        // without waiting in the busy handler, so setting up is retried for a while.
        try Self.retryingWhileBusy {
            if try db.query("PRAGMA journal_mode").first?.first?.string?.lowercased() != "wal" {
                try db.execute("PRAGMA journal_mode=WAL")
            }
            try db.execute("PRAGMA synchronous=NORMAL")
            try db.transaction {
                let version = try db.query("PRAGMA user_version").first?.first?.int ?? 0
                if version < 1 { try Self.createVersion1(db) }
                if version < 2 { try Self.migrateToVersion2(db) }
                if version < 3 { try Self.migrateToVersion3(db) }
                if version < 4 { try Self.migrateToVersion4(db) }
                if version < 5 { try Self.migrateToVersion5(db) }
                if version < 6 { try Self.migrateToVersion6(db) }
                if version < 7 { try Self.migrateToVersion7(db) }
                if version < 8 { try Self.migrateToVersion8(db) }
                if version < 9 { try Self.migrateToVersion9(db) }
                if version < 10 { try Self.migrateToVersion10(db) }
            }
        }
        database = Locked(db)
    }

    /// Version 3: per-site state for incremental builds (pages, and the files imgbake placed in an
    /// output, which are the only ones it may remove).
    private static func migrateToVersion3(_ db: Database) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS pages (
                root TEXT NOT NULL, path TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (root, path));
            CREATE TABLE IF NOT EXISTS placed (
                root TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL, PRIMARY KEY (root, path));
            PRAGMA user_version = 3;
            """)
    }

    /// Version 8: a page's references in a column of their own, read only for reports: a build of a
    /// large site needs every page's state but not its references, which are most of it (states of the
    /// S2 form, which held them, read as no state: those pages are read once more).
    private static func migrateToVersion8(_ db: Database) throws {
        try db.execute("""
            ALTER TABLE pages ADD COLUMN refs TEXT;
            PRAGMA user_version = 8;
            """)
    }

    /// Version 9: pages found by their path whatever the root, so that a page built for one output can
    /// be written for another from the copy kept of it (`SiteStateStore.builtElsewhere`).
    private static func migrateToVersion9(_ db: Database) throws {
        try db.execute("""
            CREATE INDEX IF NOT EXISTS pages_by_path ON pages(path);
            PRAGMA user_version = 9;
            """)
    }

    /// Version 10: hosts whose names did not resolve, for the builds of the next few minutes
    /// (`fetch.unresolvable_ttl`): a dev server's rebuilds without network ask them nothing.
    private static func migrateToVersion10(_ db: Database) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS unresolvable_hosts (host TEXT PRIMARY KEY, reason TEXT NOT NULL, failed_at REAL NOT NULL);
            PRAGMA user_version = 10;
            """)
    }

    /// Version 4: every file a build wrote into an images folder, by name, with the blob it holds and
    /// the image it came from, so that a page whose image file went missing can have it written again.
    private static func migrateToVersion4(_ db: Database) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS outputs (
                name TEXT PRIMARY KEY, blob TEXT NOT NULL, key TEXT NOT NULL, url TEXT NOT NULL);
            PRAGMA user_version = 4;
            """)
    }

    /// Moves what the write-ahead log holds into the database file, so that a copy of the cache (CI
    /// saving it, a read-only mount of it) has everything in one file. Best effort: another build
    /// reading at the same moment leaves it for later.
    func checkpoint() {
        try? database.withLock { db in try db.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// Version 5: blobs of originals whose rows came from a remote cache and whose bytes may still
    /// be only there (fetched when a transform needs them): not "missing" for `cache verify`.
    private static func migrateToVersion5(_ db: Database) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS remote_blobs (blob TEXT PRIMARY KEY);
            PRAGMA user_version = 5;
            """)
    }

    /// Version 6: the blob holding each page as a build wrote it under `--out` (also in the page's state),
    /// as a column so that garbage collection keeps those blobs without decoding every state.
    private static func migrateToVersion6(_ db: Database) throws {
        try db.execute("""
            ALTER TABLE pages ADD COLUMN blob TEXT;
            PRAGMA user_version = 6;
            """)
    }

    /// Runs `body` again while SQLite says another connection holds the lock (up to about 30 s).
    static func retryingWhileBusy(_ body: () throws -> Void) throws {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.isBusy && attempt < 300 {
                attempt += 1
                usleep(UInt32.random(in: 50_000...150_000))
            }
        }
    }

    private static func createVersion1(_ db: Database) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS originals (
                key TEXT PRIMARY KEY, url TEXT NOT NULL, blob TEXT NOT NULL, format TEXT NOT NULL,
                width INTEGER NOT NULL, height INTEGER NOT NULL, pages INTEGER NOT NULL, bytes INTEGER NOT NULL,
                etag TEXT, last_modified TEXT, cache_control TEXT, expires TEXT, content_type TEXT,
                fetched_at REAL NOT NULL, used_at REAL NOT NULL);
            CREATE TABLE IF NOT EXISTS variants (
                key TEXT PRIMARY KEY, original_blob TEXT NOT NULL, spec TEXT NOT NULL, blob TEXT NOT NULL,
                format TEXT NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL, bytes INTEGER NOT NULL,
                created_at REAL NOT NULL, used_at REAL NOT NULL);
            CREATE INDEX IF NOT EXISTS variants_by_original ON variants(original_blob);
            CREATE TABLE IF NOT EXISTS failures (
                key TEXT PRIMARY KEY, url TEXT NOT NULL, reason TEXT NOT NULL, failed_at REAL NOT NULL);
            PRAGMA user_version = 1;
            """)
    }

    /// Version 2: variants can be recorded as dropped (larger than the fallback at the same width: no
    /// blob, but remembered so they are not encoded again), and facts read from an original's bytes
    /// (credits, placeholders) are kept per blob.
    private static func migrateToVersion2(_ db: Database) throws {
        try db.execute("""
            ALTER TABLE variants ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE IF NOT EXISTS credits (
                blob TEXT PRIMARY KEY, copyright TEXT, artist TEXT, captured TEXT);
            CREATE TABLE IF NOT EXISTS placeholders (
                blob TEXT NOT NULL, kind TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (blob, kind));
            PRAGMA user_version = 2;
            """)
    }

    // MARK: Originals

    /// Nothing is recorded, neither an original nor a page: a cache no build has used (or one emptied).
    public func isUnused() throws -> Bool {
        try database.withLock { db in
            try db.query("SELECT 1 FROM originals LIMIT 1").isEmpty && db.query("SELECT 1 FROM pages LIMIT 1").isEmpty
        }
    }

    public func original(_ key: OriginalKey) throws -> OriginalRecord? {
        try database.withLock { db in
            try db.query("""
                SELECT key, url, blob, format, width, height, pages, bytes, etag, last_modified, cache_control,
                       expires, content_type, fetched_at FROM originals WHERE key = ?
                """, [.text(key.string)]).first.flatMap(Self.originalRecord)
        }
    }

    public func putOriginal(_ record: OriginalRecord, now: Double) throws {
        let v = record.validators
        try database.withLock { db in
            _ = try db.query("""
                INSERT OR REPLACE INTO originals (key, url, blob, format, width, height, pages, bytes, etag,
                    last_modified, cache_control, expires, content_type, fetched_at, used_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(record.key.string), .text(record.url), .text(record.blob.hex), .text(record.format.rawValue),
                      .integer(record.width), .integer(record.height), .integer(record.pages), .integer(record.bytes),
                      .optional(v.etag), .optional(v.lastModified), .optional(v.cacheControl), .optional(v.expires),
                      .optional(v.contentType), .real(record.fetchedAt), .real(now)])
        }
    }

    /// Removes an original whose blob is gone or corrupt.
    public func removeOriginal(_ key: OriginalKey) throws {
        try database.withLock { db in _ = try db.query("DELETE FROM originals WHERE key = ?", [.text(key.string)]) }
    }

    // MARK: Variants

    public func variants(_ keys: [VariantKey]) throws -> [VariantKey: VariantRecord] {
        try database.withLock { db in
            var found: [VariantKey: VariantRecord] = [:]
            for key in keys {
                if let row = try db.query("""
                    SELECT key, original_blob, spec, blob, format, width, height, bytes, dropped FROM variants WHERE key = ?
                    """, [.text(key.hex)]).first, let record = Self.variantRecord(row) {
                    found[key] = record
                }
            }
            return found
        }
    }

    public func putVariants(_ records: [VariantRecord], now: Double) throws {
        try database.withLock { db in
            try db.transaction {
                for r in records {
                    _ = try db.query("""
                        INSERT OR REPLACE INTO variants (key, original_blob, spec, blob, format, width, height, bytes,
                            created_at, used_at, dropped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, [.text(r.key.hex), .text(r.originalBlob.hex), .text(r.spec), .text(r.blob?.hex ?? ""),
                              .text(r.format.rawValue), .integer(r.width), .integer(r.height), .integer(r.bytes),
                              .real(now), .real(now), .integer(r.blob == nil ? 1 : 0)])
                }
            }
        }
    }

    // MARK: Facts about an original's bytes

    public func credits(_ blob: BlobID) throws -> Credits? {
        try database.withLock { db in
            guard let row = try db.query("SELECT copyright, artist, captured FROM credits WHERE blob = ?", [.text(blob.hex)]).first
            else { return nil }
            return Credits(copyright: row[0].string, artist: row[1].string, captured: row[2].string)
        }
    }

    public func putCredits(_ credits: Credits, for blob: BlobID) throws {
        try database.withLock { db in
            _ = try db.query("INSERT OR REPLACE INTO credits (blob, copyright, artist, captured) VALUES (?, ?, ?, ?)",
                             [.text(blob.hex), .optional(credits.copyright), .optional(credits.artist), .optional(credits.captured)])
        }
    }

    public func placeholder(_ kind: String, for blob: BlobID) throws -> String? {
        try database.withLock { db in
            try db.query("SELECT value FROM placeholders WHERE blob = ? AND kind = ?", [.text(blob.hex), .text(kind)]).first?.first?.string
        }
    }

    public func putPlaceholder(_ value: String, kind: String, for blob: BlobID) throws {
        try database.withLock { db in
            _ = try db.query("INSERT OR REPLACE INTO placeholders (blob, kind, value) VALUES (?, ?, ?)",
                             [.text(blob.hex), .text(kind), .text(value)])
        }
    }

    // MARK: Failures

    public func failure(_ key: OriginalKey) throws -> FailureRecord? {
        try database.withLock { db in
            guard let row = try db.query("SELECT key, url, reason, failed_at FROM failures WHERE key = ?",
                                         [.text(key.string)]).first,
                  let k = row[0].string, let url = row[1].string, let reason = row[2].string, let at = row[3].double
            else { return nil }
            return FailureRecord(key: OriginalKey(k), url: url, reason: reason, failedAt: at)
        }
    }

    public func putFailure(_ record: FailureRecord) throws {
        try database.withLock { db in
            _ = try db.query("INSERT OR REPLACE INTO failures (key, url, reason, failed_at) VALUES (?, ?, ?, ?)",
                         [.text(record.key.string), .text(record.url), .text(record.reason), .real(record.failedAt)])
        }
    }

    public func removeFailure(_ key: OriginalKey) throws {
        try database.withLock { db in _ = try db.query("DELETE FROM failures WHERE key = ?", [.text(key.string)]) }
    }

    // MARK: Unresolvable hosts

    /// The hosts remembered as unresolvable since `since` (seconds since 1970): reason and when.
    public func unresolvableHosts(since: Double) throws -> [String: (reason: String, failedAt: Double)] {
        try database.withLock { db in
            var hosts: [String: (reason: String, failedAt: Double)] = [:]
            for row in try db.query("SELECT host, reason, failed_at FROM unresolvable_hosts WHERE failed_at >= ?", [.real(since)]) {
                if let host = row[0].string, let reason = row[1].string, let at = row[2].double { hosts[host] = (reason, at) }
            }
            return hosts
        }
    }

    public func putUnresolvableHost(_ host: String, reason: String, at: Double) throws {
        try database.withLock { db in
            _ = try db.query("INSERT OR REPLACE INTO unresolvable_hosts (host, reason, failed_at) VALUES (?, ?, ?)",
                             [.text(host), .text(reason), .real(at)])
        }
    }

    public func removeUnresolvableHost(_ host: String) throws {
        try database.withLock { db in _ = try db.query("DELETE FROM unresolvable_hosts WHERE host = ?", [.text(host)]) }
    }

    // MARK: Rows

    private static func originalRecord(_ row: [SQLValue]) -> OriginalRecord? {
        guard let key = row[0].string, let url = row[1].string, let blob = row[2].string.flatMap(BlobID.init(hex:)),
              let format = row[3].string.flatMap(ImageFormat.init(rawValue:)), let width = row[4].int,
              let height = row[5].int, let pages = row[6].int, let bytes = row[7].int, let fetchedAt = row[13].double
        else { return nil }
        return OriginalRecord(
            key: OriginalKey(key), url: url, blob: blob, format: format, width: width, height: height, pages: pages,
            bytes: bytes,
            validators: Validators(etag: row[8].string, lastModified: row[9].string, cacheControl: row[10].string,
                                   expires: row[11].string, contentType: row[12].string),
            fetchedAt: fetchedAt)
    }

    private static func variantRecord(_ row: [SQLValue]) -> VariantRecord? {
        guard let key = row[0].string, let original = row[1].string.flatMap(BlobID.init(hex:)), let spec = row[2].string,
              let format = row[4].string.flatMap(ImageFormat.init(rawValue:)),
              let width = row[5].int, let height = row[6].int, let bytes = row[7].int
        else { return nil }
        let blob = row[8].int == 1 ? nil : row[3].string.flatMap(BlobID.init(hex:))
        guard row[8].int == 1 || blob != nil else { return nil }
        return VariantRecord(key: VariantKey(hex: key), originalBlob: original, spec: spec, blob: blob, format: format,
                             width: width, height: height, bytes: bytes)
    }
}

extension SQLValue {
    static func optional(_ text: String?) -> SQLValue { text.map { .text($0) } ?? .null }
}
