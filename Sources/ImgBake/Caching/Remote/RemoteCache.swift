import Foundation
import Locking

/// What the remote cache did in one build, for the summary line and the report.
public struct RemoteCounters: Sendable, Equatable, Codable {
    /// Records found and usable (their blobs, where they name one, fetched and verified).
    public var hits = 0
    /// Records not there, unusable, or naming a blob that was missing or did not match its hash.
    public var misses = 0
    public var bytesDown = 0
    public var bytesUp = 0
    /// Objects written (blobs and records).
    public var uploads = 0
    /// Blobs not written because the remote already had them (HEAD).
    public var alreadyThere = 0
    /// Requests that failed (transport errors, refusals, 5xx).
    public var failures = 0
    /// Every request: GET, HEAD and PUT.
    public var requests = 0
    /// Time spent in remote requests (summed over parallel ones).
    public var seconds = 0.0

    public init() {}
}

/// The remote tier of the cache: read-through on a local miss, write-back of what a build made.
///
/// Reads never block a build for long and never fail it: a miss, an unusable record, a blob whose
/// bytes do not hash to its name, a slow, unreachable or refusing remote are all misses; the first
/// problem of a kind turns that direction off for the rest of the build and becomes one warning.
/// Uploads run in the background (at most `settings.uploads` at once, blobs the remote has skipped
/// after a HEAD, blobs before the records that name them) and `finishUploads` waits for them.
public final class RemoteCache: Sendable {
    let store: RemoteStore
    /// Where uploads read the bytes they send (what the build stored, or kept in memory).
    let local: ImageCache
    /// In `--shard` builds, images found in the local cache are uploaded too: the assembling build
    /// relies on every shard's images being in the remote.
    let uploadsEverythingUsed: Bool
    private let maxOriginalBytes: Int
    let state = Locked(RemoteState())
    let queue = Locked(UploadQueue())

    public init(settings: RemoteSettings, local: ImageCache, maxOriginalBytes: Int, uploadsEverythingUsed: Bool = false,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        let credentials = RemoteCredentials(for: settings.location, environment: environment)
        store = RemoteStore(settings: settings, credentials: credentials, environment: environment, maxBlobBytes: maxOriginalBytes)
        self.local = local
        self.maxOriginalBytes = maxOriginalBytes
        self.uploadsEverythingUsed = uploadsEverythingUsed && settings.write
        if !settings.write { state.withLock { $0.writesOff = .readOnly } }
    }

    public var settings: RemoteSettings { store.settings }
    public var stats: RemoteCounters { state.withLock { $0.counters } }

    /// Waits for the uploads, then ends the transfer thread.
    public func shutdown() async {
        await finishUploads()
        await store.shutdown()
    }

    // MARK: Reading

    /// The remote's record of the original for `key`, checked against it. The blob is not fetched:
    /// a build that finds every variant needs only the record.
    public func original(_ key: OriginalKey) async -> (OriginalRecord, Credits)? {
        guard let bytes = await record(RemotePath.original(key)) else { return nil }
        guard let entry = RemoteJSON.decode(RemoteOriginalEntry.self, bytes) else { return unusable(key.string, "not a record") }
        switch entry.record(for: key, maxBytes: maxOriginalBytes) {
        case .success(let found):
            state.withLock { $0.counters.hits += 1; $0.fromRemote.insert(key) }
            return found
        case .failure(let why):
            return unusable(key.string, why.description)
        }
    }

    /// Variants of `original` among `keys`, with their blobs fetched and verified (a dropped one has
    /// none), and the placeholder of `kind` if asked for. What is missing or unusable is left out.
    public func variants(_ keys: [VariantKey], of original: BlobID, placeholder kind: String?)
        async -> (variants: [(row: VariantRecord, bytes: [UInt8]?)], placeholder: String?) {
        guard isReadable, !keys.isEmpty || kind != nil else { return ([], nil) }
        return await withTaskGroup(of: Found.self) { group in
            for key in keys { group.addTask { await self.variant(key, of: original) } }
            if let kind { group.addTask { await self.placeholder(kind, of: original) } }
            var variants: [(VariantRecord, [UInt8]?)] = []
            var placeholder: String?
            for await found in group {
                switch found {
                case .variant(let row, let bytes): variants.append((row, bytes))
                case .placeholder(let value): placeholder = value
                case .nothing: break
                }
            }
            return (variants, placeholder)
        }
    }

    enum Found: Sendable {
        case variant(VariantRecord, [UInt8]?)
        case placeholder(String)
        case nothing
    }

    private func variant(_ key: VariantKey, of original: BlobID) async -> Found {
        guard let bytes = await record(RemotePath.variant(key)) else { return .nothing }
        guard let entry = RemoteJSON.decode(RemoteVariantEntry.self, bytes) else { return unusable(key.hex, "not a record") ?? .nothing }
        switch entry.record(for: key, of: original) {
        case .failure(let why): return unusable(key.hex, why.description) ?? .nothing
        case .success(let row):
            guard let blob = row.blob else {
                state.withLock { $0.counters.hits += 1 }
                return .variant(row, nil)
            }
            guard let bytes = await self.blob(blob), bytes.count == row.bytes else {
                state.withLock { $0.counters.misses += 1 }
                return .nothing
            }
            state.withLock { $0.counters.hits += 1 }
            return .variant(row, bytes)
        }
    }

    private func placeholder(_ kind: String, of original: BlobID) async -> Found {
        guard let bytes = await record(RemotePath.placeholder(kind, of: original)) else { return .nothing }
        guard let entry = RemoteJSON.decode(RemotePlaceholderEntry.self, bytes), entry.version == 1,
              entry.kind == kind, entry.original == original.hex, entry.value.utf8.count < 64 << 10 else {
            return unusable("placeholder of \(original.hex.prefix(12))", "not a record for it") ?? .nothing
        }
        state.withLock { $0.counters.hits += 1 }
        return .placeholder(entry.value)
    }

    /// The bytes of blob `id` from the remote, if they hash to `id`. A blob that does not is a miss
    /// and a warning, is never used or stored, and is written over when this build uploads it.
    public func blob(_ id: BlobID) async -> [UInt8]? {
        guard isReadable else { return nil }
        let (answer, elapsed) = await store.get(RemotePath.blob(id))
        account(answer, elapsed, writing: false)
        guard case .found(let bytes) = answer else { return nil }
        guard BlobID(of: bytes) == id else {
            state.withLock { state in
                state.badBlobs.insert(id)
                state.present.remove(id)
                state.warnings.append("blob \(id.hex.prefix(12)) did not match its hash (\(bytes.count) bytes); not used")
            }
            return nil
        }
        return bytes
    }

    /// A small object's bytes; nil (a miss, counted) when it is not there or the remote is off.
    private func record(_ path: String) async -> [UInt8]? {
        guard isReadable else { return nil }
        let (answer, elapsed) = await store.get(path, limit: 1 << 20)
        account(answer, elapsed, writing: false)
        guard case .found(let bytes) = answer else {
            state.withLock { $0.counters.misses += 1 }
            return nil
        }
        return bytes
    }

    private func unusable<T>(_ what: String, _ why: String) -> T? {
        state.withLock { state in
            state.counters.misses += 1
            state.warnings.append("record for \(what) is unusable (\(why)); ignored")
        }
        return nil
    }

    /// Whether this build fetched the original of `key` from the remote (it need not go back up).
    func cameFromRemote(_ key: OriginalKey) -> Bool { state.withLock { $0.fromRemote.contains(key) } }

    // MARK: Health

    var isReadable: Bool { state.withLock { $0.readsOff == nil } }
    var isWritable: Bool { state.withLock { $0.writesOff == nil } }

    /// Counts a request and decides, from its answer, whether to go on using the remote.
    func account(_ answer: RemoteAnswer, _ elapsed: Duration, writing: Bool, sent: Int = 0) {
        state.withLock { state in
            state.counters.seconds += elapsed.seconds
            state.counters.requests += 1
            switch answer {
            case .found(let bytes):
                state.counters.bytesDown += bytes.count
                state.consecutiveFailures = 0
            case .stored:
                state.counters.bytesUp += sent
                state.counters.uploads += 1
                state.consecutiveFailures = 0
            case .absent:
                state.consecutiveFailures = 0
            case .refused(let status):
                state.counters.failures += 1
                if writing { state.turnOff(writes: .refused(status)) } else { state.turnOff(reads: .refused(status)) }
            case .full(let status):
                state.counters.failures += 1
                state.turnOff(writes: .full(status))
            case .failed(let why, let unreachable):
                state.counters.failures += 1
                state.consecutiveFailures += 1
                if unreachable || state.consecutiveFailures >= RemoteState.failuresTolerated {
                    let problem = RemoteProblem.failing(why)
                    state.turnOff(reads: problem)
                    state.turnOff(writes: problem)
                }
            }
        }
    }

    /// One warning per problem, for the end of the build; nothing about credentials.
    public func diagnostics() -> [Diagnostic] {
        let location = store.settings.location.description
        let dropped = queue.withLock { $0.dropped }
        return state.withLock { state in
            var messages: [String] = []
            let notDone = dropped > 0 ? "; \(dropped) upload(s) not done" : ""
            switch (state.readsOff, state.writesOff) {
            case (let reads?, let writes?) where reads == writes:
                messages.append("\(reads): the build went on without it\(notDone)")
            default:
                if let reads = state.readsOff { messages.append("\(reads): not read from for the rest of the build") }
                if let writes = state.writesOff, writes != .readOnly { messages.append("\(writes): nothing more uploaded\(notDone)") }
            }
            messages += state.warnings
            return messages.map { Diagnostic(.warning, "remote cache \(location): \($0)") }
        }
    }
}

/// Why the remote is not used (any more) for reading or writing.
enum RemoteProblem: Equatable, CustomStringConvertible {
    case readOnly
    case refused(Int)
    case full(Int)
    case failing(String)

    var description: String {
        switch self {
        case .readOnly: "read only"
        case .refused(let status): "refused (HTTP \(status)); check the credentials and what they may do"
        case .full(let status): "full (HTTP \(status))"
        case .failing(let why): "unavailable (\(why))"
        }
    }
}

struct RemoteState: Sendable {
    /// Failed requests in a row (not misses) after which the remote is given up on for the build.
    static let failuresTolerated = 3

    var counters = RemoteCounters()
    var readsOff: RemoteProblem?
    var writesOff: RemoteProblem?
    var consecutiveFailures = 0
    var warnings: [String] = []
    /// Blobs known to be in the remote (uploaded or seen by HEAD this build).
    var present: Set<BlobID> = []
    /// Blobs whose remote copy did not match its hash: written over, never skipped after a HEAD.
    var badBlobs: Set<BlobID> = []
    var fromRemote: Set<OriginalKey> = []

    mutating func turnOff(reads problem: RemoteProblem) { if readsOff == nil { readsOff = problem } }
    mutating func turnOff(writes problem: RemoteProblem) { if writesOff == nil { writesOff = problem } }
}
