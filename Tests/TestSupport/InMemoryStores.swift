import Foundation
import Locking
@testable import ImgBake

// Doubles at the page stage's seams (`SiteStates`, `BlobFiles`, `RemoteCaching`): what builds keep,
// in memory, so that the journal's effects and their order are tested without a cache folder, and
// without members in the product that exist for tests.

/// The site state store in memory. Every call that changes it is logged, in order, with what the test's
/// `observe` saw at that moment (the disk, say): how tests prove that a record comes before or after
/// the write it describes.
package final class InMemorySiteStates: SiteStates {
    package enum Change: Sendable, Equatable {
        case pages([String]), removedPages([String]), placed([OutputPath]), removed([OutputPath]), outputs([String]), seal(Bool), kept
    }

    package struct Contents: Sendable {
        package var pages: [String: PageState] = [:]
        package var placed: [OutputPath: PlacedFile] = [:]
        package var seal: SiteSeal?
        package var outputs: [String: OutputRecord] = [:]
        package var kept: [BlobID: [UInt8]] = [:]
        /// What builds for other outputs left, by page.
        package var elsewhere: [String: [PageState]] = [:]
        /// Each change, with what `observe` returned when it was made.
        package var log: [(change: Change, seen: String)] = []
        /// Copies it refuses to keep (a full cache).
        package var refusesCopies = false

        package init() {}
    }

    private let contents: Locked<Contents>
    private let observe: @Sendable (Change) -> String

    package init(_ contents: Contents = Contents(), observe: @escaping @Sendable (Change) -> String = { _ in "" }) {
        self.contents = Locked(contents)
        self.observe = observe
    }

    package var now: Contents { contents.withLock { $0 } }

    private func log(_ change: Change) {
        let seen = observe(change)
        contents.withLock { $0.log.append((change, seen)) }
    }

    package func pageStates(withReferences: Bool) async -> [String: PageState] {
        contents.withLock { state in
            withReferences ? state.pages : state.pages.mapValues { var page = $0; page.references = nil; return page }
        }
    }

    package func anyBuiltElsewhere() async -> Bool { contents.withLock { !$0.elsewhere.isEmpty } }
    package func builtElsewhere(path: String) -> [PageState] { contents.withLock { $0.elsewhere[path] ?? [] } }
    package func pageStateCount() async -> Int? { contents.withLock { $0.pages.count } }
    package func seal() async -> SiteSeal? { contents.withLock { $0.seal } }

    package func putSeal(_ seal: SiteSeal?) async {
        log(.seal(seal != nil))
        contents.withLock { $0.seal = seal }
    }

    package func placedFiles() async throws -> [OutputPath: PlacedFile] { contents.withLock { $0.placed } }

    package func record(pages: [PageState], removingPages gone: [String], placed: [OutputPath: PlacedFile], removed: [OutputPath]) async {
        if !pages.isEmpty { log(.pages(pages.map(\.path))) }
        if !gone.isEmpty { log(.removedPages(gone)) }
        if !placed.isEmpty { log(.placed(placed.keys.sorted())) }
        if !removed.isEmpty { log(.removed(removed.sorted())) }
        contents.withLock { state in
            for page in pages {
                var page = page
                // A state without its references keeps the stored ones, as the index does.
                if page.references == nil { page.references = state.pages[page.path]?.references }
                state.pages[page.path] = page
            }
            for path in gone { state.pages[path] = nil }
            state.placed.merge(placed) { $1 }
            for path in removed { state.placed[path] = nil }
        }
    }

    package func recordOutputs(_ records: [OutputRecord]) async {
        guard !records.isEmpty else { return }
        log(.outputs(records.map(\.name)))
        contents.withLock { for record in records { $0.outputs[record.name] = record } }
    }

    package func outputRecords(named names: [String]) async -> [OutputRecord] {
        contents.withLock { state in names.compactMap { state.outputs[$0] } }
    }

    package func keepPage(_ bytes: [UInt8], as id: BlobID) -> BlobID? {
        guard !contents.withLock({ $0.refusesCopies }) else { return nil }
        log(.kept)
        contents.withLock { $0.kept[id] = bytes }
        return id
    }

    package func keptPage(_ id: BlobID) -> [UInt8]? { contents.withLock { $0.kept[id] } }
}

/// The image cache's blobs in memory: written to files as the cache writes them (verified, by a
/// temporary name and a rename), and a blob can be damaged on purpose.
package final class InMemoryBlobs: BlobFiles {
    private let blobs: Locked<[BlobID: [UInt8]]>
    private let copies = Locked(0)

    package init(_ blobs: [[UInt8]] = []) {
        self.blobs = Locked(Dictionary(blobs.map { (BlobID(of: $0), $0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Stores `bytes` and returns their id.
    @discardableResult
    package func add(_ bytes: [UInt8]) -> BlobID {
        let id = BlobID(of: bytes)
        blobs.withLock { $0[id] = bytes }
        return id
    }

    /// Replaces a blob's bytes with others: it no longer matches its id.
    package func damage(_ id: BlobID) { blobs.withLock { $0[id] = Array("damaged".utf8) } }

    /// Files written from blobs.
    package var copied: Int { copies.withLock { $0 } }

    package func copyBlob(_ id: BlobID, to path: String) async -> ImageCache.CopyOutcome {
        guard case .found(let bytes) = readBlobHere(id) else { return .damaged("blob \(id.hex.prefix(12)) did not match its hash") }
        do { try AtomicFile.write(bytes, to: path, durable: false) } catch { return .failed(error.description) }
        copies.withLock { $0 += 1 }
        return .written
    }

    package func checkBlob(_ id: BlobID) async -> Bool { if case .found = readBlobHere(id) { true } else { false } }

    package func readBlobHere(_ id: BlobID) -> BlobStore.ReadResult {
        guard let bytes = blobs.withLock({ $0[id] }) else { return .missing }
        return BlobID(of: bytes) == id ? .found(bytes) : .corrupt
    }

    package func originals(_ keys: some Sequence<OriginalKey> & Sendable) async throws -> [OriginalKey: OriginalRecord] { [:] }
}

/// A shared cache that has nothing: every image misses it, and what the build would upload is counted.
package final class EmptyRemote: RemoteCaching {
    private let noted = Locked((originals: 0, variants: 0, done: 0))

    package init() {}

    package let uploadsEverythingUsed = false
    package func localise(_ key: PackKey) async -> PackContents? { nil }
    package func original(_ id: BlobID) async -> [UInt8]? { nil }
    package func noteOriginal(_ record: OriginalRecord, credits: Credits, downloaded: Bool) { noted.withLock { $0.originals += 1 } }
    package func noteVariants(_ rows: [VariantRecord], placeholder: (kind: String, value: String)?, of record: OriginalRecord) {
        noted.withLock { $0.variants += rows.count }
    }
    package func imageDone(_ record: OriginalRecord, credits: Credits) { noted.withLock { $0.done += 1 } }
    package func askLayoutAhead() {}
    package func finishUploads() async {}
    package func diagnostics() -> [Diagnostic] { [] }
    package var stats: RemoteCounters { RemoteCounters() }
    package func shutdown() async {}

    /// Originals, variants and whole images the build told the remote about.
    package var notes: (originals: Int, variants: Int, done: Int) { noted.withLock { $0 } }
}

/// An image stage that makes nothing again: what the images folder asks of it is counted, and answered
/// with nil (not this build's to make), so a file whose blob is damaged is unavailable.
package final class NoRepairs: ImageRepairing {
    package let asked = Locked<[OriginalKey]>([])

    package init() {}

    package func repair(_ wanted: ImageDemand.Wanted) async -> Resolution? {
        asked.withLock { $0.append(wanted.key) }
        return nil
    }
}
