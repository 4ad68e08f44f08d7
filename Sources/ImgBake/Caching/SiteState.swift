import Foundation

/// What the last build knew about one page, so the next one can leave it alone: a page whose source,
/// settings, images and outputs are all as they were is neither read again nor rewritten.
///
/// A page's state names every source the page was built from: its own bytes (`sourceHash`) and each
/// image's original (`keys`, with `sources` fingerprinting which original bytes each key had). When any
/// of them changes — an edit, a replaced local image, an upstream image past its freshness that comes
/// back different — the page is built again, in place as with `--out`.
struct PageState: Sendable, Equatable {
    var path: String
    /// Fingerprint of every setting that changes what a page or an image becomes.
    var fingerprint: String
    /// SHA-256 of the page as its generator wrote it (not as imgbake rewrote it); nil when the page
    /// was never read.
    var sourceHash: BlobID?
    /// The site file's size and modification time as the build left it: the source's, or in place the
    /// page imgbake wrote over it. With `size`, lets an unchanged file be recognised without reading it.
    var size: Int
    /// Nanoseconds.
    var modified: Int64
    /// With `--out`: the written page's stamp (nil when the output is a plain copy of the source).
    var output: FileStamp?
    /// In place: the SHA-256 of each page imgbake wrote over the source that still stands for it —
    /// the last one, and while a build is writing, the one it is about to write. A site file with one
    /// of these hashes is imgbake's rewrite of `kept`, not a new source.
    var written: [BlobID] = []
    /// A copy of the page in the cache. With `--out`: the page as written, so that a lost output is
    /// written again from the cache. In place: the source as the generator wrote it, so that the page
    /// is built again from it when one of its images changes (the site file no longer holds the
    /// original references).
    var kept: BlobID? = nil
    /// Every reference was localised (nothing failed, nothing was left).
    var complete: Bool
    /// Original keys of the images the page refers to (to check their freshness).
    var keys: [OriginalKey]
    /// Which original bytes those keys had when the page was built.
    var sources: SourceDigest = SourceDigest()
    /// Files in the images folder the page refers to, as it is in the output (`PageModel.uses`): these
    /// files are kept; the others go.
    var images: [String]
    /// False when the page could not be read or settled, so `images` may miss some: no image file is
    /// removed then.
    var imagesKnown: Bool = true
    /// With `output.originals = "referenced"`: the names of the site's image files the page mentions as
    /// written (those files are copied to the output).
    var mentions: [String] = []
    /// The references, for reports of pages that were not read again. Nil when not loaded (only reports
    /// load them: a large site's states are mostly their references): written back, the stored ones stay.
    var references: RecordedReferences?

    var stamp: FileStamp { FileStamp(size: size, modified: modified) }

    /// In place, the site file is imgbake's rewrite of the kept source.
    var isRewrittenInPlace: Bool { !written.isEmpty }
}

/// Which original (by the SHA-256 of its bytes) each of a page's image keys had, folded into 64 bits
/// that do not depend on order: equal while every key has the bytes it had, different (but for a
/// 2⁻⁶⁴ chance) as soon as one has others.
struct SourceDigest: Sendable, Hashable {
    var value: UInt64 = 0

    /// One key and its original.
    static func term(_ key: OriginalKey, _ blob: BlobID) -> UInt64 {
        // FNV-1a over both, then a SplitMix64 finaliser so that sums of terms do not cancel.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.string.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ 0xFF) &* 0x100_0000_01b3
        for byte in blob.hex.utf8.prefix(32) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }

    mutating func add(_ term: UInt64) { value &+= term }

    static func of(_ pairs: some Sequence<(OriginalKey, BlobID)>) -> SourceDigest {
        var digest = SourceDigest()
        for (key, blob) in pairs { digest.add(term(key, blob)) }
        return digest
    }
}

/// A page state's references, kept as the lines the state stores them in (`PageStateCodec`): reports
/// are their only reader, and making a value of each for every unchanged page would cost reading the
/// states of a large site much more than the rest of them.
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

/// What imgbake placed under an output root: the only files it may ever remove there.
enum PlacedFile: String, Sendable, Equatable {
    /// A file of the images folder.
    case image
    /// With `--out`: a page or another site file written or copied into the output.
    case mirror
}

/// A path under an output root, `/`-separated.
typealias OutputPath = String

/// A file a build wrote into an images folder: which blob it holds and which image it came from.
struct OutputRecord: Sendable, Equatable {
    var name: String
    var blob: BlobID
    var key: OriginalKey
    var url: String
}

/// Where per-site state lives in the cache index: pages, and the files imgbake placed in the output
/// (only those may ever be removed by it). Reached through `SiteStateStore`.
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

    /// Whether a build of any root but `root` kept a copy of a page: asked once per build, so that a
    /// site built for one output only does not look each page up.
    func hasPageCopies(otherThan root: String) throws -> Bool {
        try database.withLock { db in
            try !db.query("SELECT 1 FROM pages WHERE root != ? AND blob IS NOT NULL LIMIT 1", [.text(root)]).isEmpty
        }
    }

    /// The states of the page at `path` in every root but `root` whose build kept a copy of it.
    func pageStatesWithCopies(path: String, otherThan root: String) throws -> [PageState] {
        let rows = try database.withLock { db in
            try db.query("SELECT state, refs FROM pages WHERE path = ? AND root != ? AND blob IS NOT NULL", [.text(path), .text(root)])
        }
        return rows.compactMap { row in
            guard let text = row[0].string, var state = PageStateCodec.decode(text) else { return nil }
            state.references = RecordedReferences(stored: row[1].string ?? "")
            return state
        }
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
                                  state.kept.map { .text($0.hex) } ?? .null, state.references.map { .text($0.lines) } ?? .null])
                }
                for path in removed { try db.query("DELETE FROM pages WHERE root = ? AND path = ?", [.text(root), .text(path)]) }
            }
        }
    }

    /// Files imgbake placed under an output root.
    func placedFiles(root: String) throws -> [OutputPath: PlacedFile] {
        try database.withLock { db in
            var files: [OutputPath: PlacedFile] = [:]
            for row in try db.query("SELECT path, kind FROM placed WHERE root = ?", [.text(root)]) {
                if let path = row[0].string, let kind = row[1].string.flatMap(PlacedFile.init(rawValue:)) { files[path] = kind }
            }
            return files
        }
    }

    func recordPlaced(_ added: [OutputPath: PlacedFile], removed: [OutputPath], root: String) throws {
        try database.withLock { db in
            try db.transaction {
                for (path, kind) in added {
                    try db.query("INSERT OR REPLACE INTO placed (root, path, kind) VALUES (?, ?, ?)", [.text(root), .text(path), .text(kind.rawValue)])
                }
                for path in removed { try db.query("DELETE FROM placed WHERE root = ? AND path = ?", [.text(root), .text(path)]) }
            }
        }
    }

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
