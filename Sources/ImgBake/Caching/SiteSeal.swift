import Foundation
import SQLite

/// What a build that left a site and its output settled says about them: a digest of every file's
/// stamp in the site and the output as the build left them (checked against the page states it
/// recorded), with the images its pages use. While the digest still holds and the images are fresh,
/// the next build is known to have nothing to do, without reading ten thousand page states.
///
/// A build that may change anything removes the seal before it starts and seals again only when it
/// ends settled, so a build killed half-way leaves no seal behind. Anything else that changes what is
/// recorded about the site's pages or placed files (`cache clean`, an imgbake from before seals, a
/// hand edit of the index) removes it too: triggers in the index do, whoever writes.
struct SiteSeal: Sendable, Codable, Equatable {
    /// `SealStamps.digest` of the site and output.
    var digest: String
    /// Original keys of every image the pages use, to check their freshness.
    var keys: [OriginalKey]
    /// Which original bytes those keys had (`SourceDigest` over them all), in hexadecimal: JSON numbers
    /// are doubles to many readers, and this needs all 64 bits.
    var sources: String
    /// Files in the images folder the pages refer to.
    var images: [String]
}

extension CacheIndex {
    /// Version 7: one seal per site and output, removed by any change to the site's page states or
    /// placed files, by whichever program makes it: the seal says they are as a settled build left them.
    static func migrateToVersion7(_ db: Database) throws {
        var statements = ["CREATE TABLE IF NOT EXISTS seals (root TEXT PRIMARY KEY, seal TEXT NOT NULL);"]
        for table in ["pages", "placed"] {
            for (event, rows) in [("INSERT", ["NEW"]), ("UPDATE", ["OLD", "NEW"]), ("DELETE", ["OLD"])] {
                let deletes = rows.map { "DELETE FROM seals WHERE root = \($0).root;" }.joined(separator: " ")
                statements.append("CREATE TRIGGER IF NOT EXISTS unseal_\(table)_\(event.lowercased()) AFTER \(event) ON \(table) BEGIN \(deletes) END;")
            }
        }
        statements.append("PRAGMA user_version = 7;")
        try db.execute(statements.joined(separator: "\n"))
    }

    /// The seal of `root`; nil when there is none or it cannot be read (then it holds nothing).
    func seal(root: String) throws -> SiteSeal? {
        let text = try database.withLock { db in try db.query("SELECT seal FROM seals WHERE root = ?", [.text(root)]).first?.first?.string }
        return text.flatMap { try? JSONDecoder().decode(SiteSeal.self, from: Data($0.utf8)) }
    }

    func putSeal(_ seal: SiteSeal?, root: String) throws {
        let text = try seal.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try database.withLock { db in
            if let text {
                _ = try db.query("INSERT OR REPLACE INTO seals (root, seal) VALUES (?, ?)", [.text(root), .text(text)])
            } else {
                _ = try db.query("DELETE FROM seals WHERE root = ?", [.text(root)])
            }
        }
    }

    func pageStateCount(root: String) throws -> Int {
        try database.withLock { db in try db.query("SELECT count(*) FROM pages WHERE root = ?", [.text(root)]).first?.first?.int ?? 0 }
    }
}
