import Foundation

/// What the last build knew about one page, so the next one can leave it alone: an unchanged page
/// whose images were all localised is neither read again nor rewritten.
struct PageState: Sendable, Equatable {
    var path: String
    /// Fingerprint of every setting that changes what a page or an image becomes.
    var fingerprint: String
    /// SHA-256 of the source as it is now (in place: as imgbake wrote it).
    var sourceHash: String
    var size: Int
    /// Modification time in nanoseconds: with `size`, lets an unchanged file be recognised without
    /// reading it.
    var modified: Int64
    /// With `--out`: the written page's size and modification time (nil when it is a mirrored copy).
    var output: FileStamp?
    /// With `--out`: the cache blob holding the page as it was written, so that a lost output (a fresh
    /// checkout in CI with the cache restored, a wiped `--out`) is written again from the cache instead
    /// of reading, scanning and rewriting the page.
    var rendered: BlobID? = nil
    /// Every remote reference was localised (nothing failed, nothing was left).
    var complete: Bool
    /// Original keys of the remote images the page refers to (to check their freshness).
    var keys: [String]
    /// Files in the images folder the page refers to, as it is in the output: the references of
    /// every build that localised it, not only the last one's (these files are kept; the others go).
    var images: [String]
    /// False when the page could not be read, so `images` may miss some: no image file is removed then.
    var imagesKnown: Bool = true
    /// The references, for reports of pages that were not read again. Nil when not loaded (only reports
    /// load them: a large site's states are mostly their references): written back, the stored ones stay.
    var references: RecordedReferences?
}

/// A page state's references, kept as the lines the state stores them in (`PageStateCodec`): reports
/// are their only reader, and making a value of each for every unchanged page was a third of reading
/// the states of a large site.
struct RecordedReferences: Sendable, Equatable {
    /// One line per reference: line, column, kind and escaped URL, separated by tabs.
    let lines: String
    let count: Int

    init(_ references: [RecordedReference]) {
        lines = references.map(PageStateCodec.line(of:)).joined(separator: "\n")
        count = references.count
    }

    /// Lines already checked by `PageStateCodec.isReference`.
    init(checked lines: String, count: Int) {
        self.lines = lines
        self.count = count
    }

    /// The lines as the index stores them; nil when one is not a reference (a damaged row).
    init?(stored lines: String) {
        var lines = lines
        guard let count = lines.withUTF8({ bytes -> Int? in
            guard !bytes.isEmpty else { return 0 }
            var count = 0
            for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                guard PageStateCodec.isReference(line) else { return nil }
                count += 1
            }
            return count
        }) else { return nil }
        self.init(checked: lines, count: count)
    }

    var all: [RecordedReference] {
        guard count > 0 else { return [] }
        return lines.split(separator: "\n", omittingEmptySubsequences: false).compactMap(PageStateCodec.reference(in:))
    }
}

/// A reference as reports show it.
struct RecordedReference: Sendable, Equatable {
    var line: Int
    var column: Int
    var kind: ImageReference.Kind
    var url: String
}

/// Where per-site state lives in the cache index: pages, and the files imgbake placed in the output
/// (only those may ever be removed by it).
extension CacheIndex {
    /// `withReferences`: for reports; a build needs only the rest.
    func pageStates(root: String, withReferences: Bool = false) throws -> [String: PageState] {
        let columns = withReferences ? "path, state, refs" : "path, state"
        let rows = try database.withLock { db in try db.query("SELECT \(columns) FROM pages WHERE root = ?", [.text(root)]) }
        // Decoded on every core, outside the lock: on a large unchanged site this is a fifth of the build.
        // The names and keys of one slice's states share their storage (a site's pages use a few
        // hundred images between them).
        let decoded = rows.mapOnEveryCore(slice: 512) { slice in
            var strings = Interner()
            return slice.compactMap { row -> PageState? in
                guard let path = row[0].string, let text = row[1].string, var state = PageStateCodec.decode(text, interning: &strings),
                      state.path == path else { return nil }
                if withReferences {
                    guard let references = RecordedReferences(stored: row[2].string ?? "") else { return nil }
                    state.references = references
                }
                return state
            }
        }
        var states: [String: PageState] = [:]
        states.reserveCapacity(decoded.count)
        for state in decoded { states[state.path] = state }
        return states
    }

    func putPageStates(_ states: [PageState], removing removed: [String], root: String) throws {
        try database.withLock { db in
            try db.transaction {
                // A state without its references in memory keeps the stored ones.
                for state in states {
                    try db.query("""
                        INSERT INTO pages (root, path, state, blob, refs) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (root, path) DO UPDATE SET state = excluded.state, blob = excluded.blob,
                            refs = coalesce(excluded.refs, pages.refs)
                        """,
                                 [.text(root), .text(state.path), .text(PageStateCodec.encode(state)),
                                  state.rendered.map { .text($0.hex) } ?? .null, state.references.map { .text($0.lines) } ?? .null])
                }
                for path in removed { try db.query("DELETE FROM pages WHERE root = ? AND path = ?", [.text(root), .text(path)]) }
            }
        }
    }

    /// Files imgbake placed under an output root: `image` (in the images folder) or `mirror`.
    func placedFiles(root: String) throws -> [String: String] {
        try database.withLock { db in
            var files: [String: String] = [:]
            for row in try db.query("SELECT path, kind FROM placed WHERE root = ?", [.text(root)]) {
                if let path = row[0].string, let kind = row[1].string { files[path] = kind }
            }
            return files
        }
    }

    func recordPlaced(_ added: [String: String], removed: [String], root: String) throws {
        try database.withLock { db in
            try db.transaction {
                for (path, kind) in added {
                    try db.query("INSERT OR REPLACE INTO placed (root, path, kind) VALUES (?, ?, ?)", [.text(root), .text(path), .text(kind)])
                }
                for path in removed { try db.query("DELETE FROM placed WHERE root = ? AND path = ?", [.text(root), .text(path)]) }
            }
        }
    }
}

/// A file a build wrote into an images folder: which blob it holds and which image it came from.
struct OutputRecord: Sendable, Equatable {
    var name: String
    var blob: BlobID
    var key: OriginalKey
    var url: String
}

extension CacheIndex {
    func recordOutputs(_ records: [OutputRecord]) throws {
        try database.withLock { db in
            try db.transaction {
                for r in records {
                    try db.query("INSERT OR REPLACE INTO outputs (name, blob, key, url) VALUES (?, ?, ?, ?)",
                                 [.text(r.name), .text(r.blob.hex), .text(r.key.string), .text(r.url)])
                }
            }
        }
    }

    func output(named name: String) throws -> OutputRecord? {
        try database.withLock { db in
            guard let row = try db.query("SELECT name, blob, key, url FROM outputs WHERE name = ?", [.text(name)]).first,
                  let blob = row[1].string.flatMap(BlobID.init(hex:)), let key = row[2].string, let url = row[3].string
            else { return nil }
            return OutputRecord(name: name, blob: blob, key: OriginalKey(key), url: url)
        }
    }
}
