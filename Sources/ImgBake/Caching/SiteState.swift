import Foundation

/// What the last build knew about one page, so the next one can leave it alone: a page whose source,
/// settings, images and outputs are all as they were is neither read again nor rewritten.
///
/// A page's state names every source the page was built from: its own bytes (`sourceHash`) and each
/// image's original (`keys`, with `sources` fingerprinting which original bytes each key had). When any
/// of them changes — an edit, a replaced local image, an upstream image past its freshness that comes
/// back different — the page is built again, in place as with `--out`.
///
/// Made in one place, `PagePlan` (the state a page will be in once its plan is carried out); the
/// journal settles what only carrying it out tells (the written file's stamp, a copy the cache could
/// not keep), and `unsettled` is what a page that could not be settled keeps of its last state.
struct PageState: Sendable, Equatable {
    var path: String
    /// Fingerprint of every setting that changes what a page or an image becomes.
    var fingerprint: String
    /// SHA-256 of the page as its generator wrote it (not as imgbake rewrote it); nil when the page
    /// was never read.
    var sourceHash: BlobID?
    /// The site file's size and modification time as the build left it (the source's, or in place the
    /// page imgbake wrote over it): lets an unchanged file be recognised without reading it.
    /// `FileStamp.unknown` when it is not known.
    var stamp: FileStamp
    /// What the cache keeps of the page and what stands in the site or the output for it.
    var copy: PageCopy
    /// Every reference was localised (nothing failed, nothing was left).
    var complete: Bool
    /// Original keys of the images the page refers to (to check their freshness).
    var keys: [OriginalKey]
    /// Which original bytes those keys had when the page was built.
    var sources: SourceDigest
    /// Files in the images folder the page refers to, as it is in the output (`PageModel.uses`): these
    /// files are kept; the others go.
    var images: [String]
    /// False when the page could not be read or settled, so `images` may miss some: no image file is
    /// removed then.
    var imagesKnown: Bool
    /// With `output.originals = "referenced"`: the names of the site's image files the page mentions as
    /// written (those files are copied to the output).
    var mentions: [String]
    /// The references, for reports of pages that were not read again. Nil when not loaded (only reports
    /// load them: a large site's states are mostly their references): written back, the stored ones stay.
    var references: [RecordedReference]?

    /// The state of a page that was read but not settled this build (unreadable, changed while the
    /// build ran, its copy damaged): its last state, read again next time; what it uses is not known for
    /// sure, so no image file is removed.
    static func unsettled(_ path: String, previous: PageState?, fingerprint: String) -> PageState {
        var state = previous ?? PageState(path: path, fingerprint: fingerprint, sourceHash: nil, stamp: .unknown, copy: .none,
                                          complete: false, keys: [], sources: SourceDigest(), images: [], imagesKnown: false,
                                          mentions: [], references: [])
        state.complete = false
        state.imagesKnown = false
        return state
    }

    /// The copy the cache keeps: in place the source, with `--out` the page as written.
    var kept: BlobID? {
        switch copy {
        case .none: nil
        case .rewritten(let source, _): source
        case .written(let kept, _): kept
        }
    }

    /// With `--out`: the written page's stamp in the output (nil when the output is a plain copy of the source).
    var output: FileStamp? {
        if case .written(_, let output) = copy { return output }
        return nil
    }

    /// In place: the hashes of the rewrites that stand for the kept source.
    var written: [BlobID] {
        if case .rewritten(_, let rewrites) = copy { return rewrites }
        return []
    }

    /// In place, the site file is imgbake's rewrite of the kept source.
    var isRewrittenInPlace: Bool { !written.isEmpty }
}

/// What the cache keeps of a page, and what stands for it, by where the build writes.
enum PageCopy: Sendable, Equatable {
    /// Nothing kept: the page stands as its source (nothing to localise; with `--out`, a plain copy).
    case none
    /// In place: the site file is imgbake's rewrite of `source`, which the cache keeps so that the page
    /// can be built again from it when an image changes (the site file no longer holds the original
    /// references). `rewrites` are the SHA-256s of the rewrites that stand for it: the last one written,
    /// and while a build is writing, the one it is about to write. A site file with one of them is
    /// imgbake's rewrite, not a new source.
    case rewritten(source: BlobID, rewrites: [BlobID])
    /// With `--out`: the page as written, kept (nil when the cache could not) so that a lost output is
    /// written again from the cache, and the written file's stamp in the output.
    case written(kept: BlobID?, output: FileStamp?)
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

/// A reference as reports show it.
struct RecordedReference: Sendable, Equatable {
    var line: Int
    var column: Int
    var kind: ImageReference.Kind
    var url: String
}

/// A page's state as the index holds it: its encoded state and, when asked for, its references.
struct StoredPageState: Sendable {
    var path: String
    var state: String
    var references: String?
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
    /// The stored states of `root`'s pages, to decode (`PageStateCodec.decode(_:interning:)`);
    /// `withReferences`: for reports, a build needs only the rest.
    func pageStateRows(root: String, withReferences: Bool = false) throws -> [StoredPageState] {
        let columns = withReferences ? "path, state, refs" : "path, state"
        let rows = try database.withLock { db in try db.query("SELECT \(columns) FROM pages WHERE root = ?", [.text(root)]) }
        return rows.compactMap { row in
            guard let path = row[0].string, let state = row[1].string else { return nil }
            return StoredPageState(path: path, state: state, references: withReferences ? row[2].string ?? "" : nil)
        }
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
            state.references = PageStateCodec.references(stored: row[1].string ?? "")
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
                                  state.kept.map { .text($0.hex) } ?? .null, state.references.map { .text(PageStateCodec.lines(of: $0)) } ?? .null])
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
