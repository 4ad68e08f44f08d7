import Foundation
import Locking

/// What the remote cache did in one build, for the summary line and the report.
public struct RemoteCounters: Sendable, Equatable, Codable {
    /// Packs found and usable, and originals' blobs fetched and verified.
    public var hits = 0
    /// Images the remote did not have (a pack not there, unusable, or for other bytes; an original's
    /// blob missing or not matching its hash). Without layout 2 in the store, known without a request.
    public var misses = 0
    public var bytesDown = 0
    public var bytesUp = 0
    /// Objects written (packs, originals' blobs, the layout marker).
    public var uploads = 0
    /// Packs not written because the remote already held everything this build would put in them.
    public var alreadyThere = 0
    /// Requests that failed (transport errors, refusals, 5xx), after their retries.
    public var failures = 0
    /// Every request: GET, PUT (and retries of those answered 429 or 503).
    public var requests = 0
    /// Requests asked again after a 429 or 503 (S3's SlowDown).
    public var retries = 0
    /// Time spent in remote requests (summed over parallel ones).
    public var seconds = 0.0

    public init() {}
}

/// The remote tier of the cache (layout 2: `RemotePath`): read-through on a local miss, write-back of
/// what a build made, one object per image.
///
/// Reading, an image costs one GET: its pack, verified, then kept in the local cache (records and
/// blobs), so the rest of the build finds it there. Writing, it costs one PUT of its pack, and one of
/// its original's bytes when this build downloaded them and the remote lacks them. Reads never fail a
/// build: a miss, an unusable pack, bytes that do not hash to their name, a slow, unreachable or
/// refusing remote are all misses; the first problem of a kind turns that direction off for the rest of
/// the build and becomes one warning. Uploads run in the background while the build goes on (at most
/// `settings.uploads` at once, one pack at a time per image) and `finishUploads` waits for them.
public final class RemoteCache: Sendable {
    let store: RemoteStore
    /// Where imports go, and where uploads read the bytes they send.
    let local: ImageCache
    /// In `--shard` builds, images found in the local cache are uploaded too: the assembling build
    /// relies on every shard's images being in the remote.
    let uploadsEverythingUsed: Bool
    let maxOriginalBytes: Int
    let state = Locked(RemoteState())
    let queue = Locked(UploadQueue())
    let book = Locked(PackBook())
    /// Each pack read once per build, kept (nil: there is none).
    let fetches = TaskPool<PackKey, PackContents?>()
    private let layoutTask = Locked<Task<LayoutState, Never>?>(nil)
    let markerWrite = Locked<Task<Void, Never>?>(nil)
    let clock: @Sendable () -> Double

    /// A pack used by a build that may write, older than this, is written again (same content, new
    /// time), so that retention by age (time since the last write) spares what builds still use.
    static let refreshAge: Double = 7 * 86_400

    public init(settings: RemoteSettings, local: ImageCache, maxOriginalBytes: Int, uploadsEverythingUsed: Bool = false,
                environment: [String: String] = ProcessInfo.processInfo.environment,
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        let credentials = RemoteCredentials(for: settings.location, environment: environment)
        store = RemoteStore(settings: settings, credentials: credentials, environment: environment, maxBlobBytes: maxOriginalBytes)
        self.local = local
        self.maxOriginalBytes = maxOriginalBytes
        self.uploadsEverythingUsed = uploadsEverythingUsed && settings.write
        clock = now
        if !settings.write { state.withLock { $0.writesOff = .readOnly } }
    }

    public var settings: RemoteSettings { store.settings }
    public var stats: RemoteCounters { state.withLock { $0.counters } }

    /// Waits for the uploads, then ends the transfer thread.
    public func shutdown() async {
        await finishUploads()
        await store.shutdown()
    }

    // MARK: The layout marker

    /// What `layout.json` says, asked once per build (every read and upload waits for it).
    func layout() async -> LayoutState {
        await layoutRequest().value
    }

    /// Asks for the marker now, before any image needs it: a build whose local cache is empty will
    /// need it for its first image, and its answer then comes while the pages are scanned instead of
    /// holding up the first packs by a round trip.
    public func askLayoutAhead() {
        _ = layoutRequest()
    }

    /// Waits for the marker's request if one was made (and its write, if it wrote one).
    func layoutAskedFor() async {
        if let task = layoutTask.withLock({ $0 }) { _ = await task.value }
        if let write = markerWrite.withLock({ $0 }) { await write.value }
    }

    /// The marker's request, started by its first caller.
    private func layoutRequest() -> Task<LayoutState, Never> {
        layoutTask.withLock { task in
            if let task { return task }
            let made = Task { await self.readLayout() }
            task = made
            return made
        }
    }

    private func readLayout() async -> LayoutState {
        guard isReadable || isWritable else { return .unusable }
        let (answer, elapsed, retries) = await store.get(RemotePath.layout, limit: 64 << 10)
        account(answer, elapsed, retries, writing: false)
        switch answer {
        case .found(let bytes):
            guard let found = RemoteLayout.parse(bytes) else {
                state.withLock {
                    $0.turnOff(reads: .foreignLayout)
                    $0.turnOff(writes: .foreignLayout)
                }
                return .unusable
            }
            if !found.newer.isEmpty {
                let newer = found.newer.map(String.init).joined(separator: ", ")
                note("the store also holds layout \(newer) of a newer imgbake, which this version neither reads nor writes; it uses layout \(RemoteLayout.version) beside it")
            }
            if found.holdsThisVersion { return .present }
            writeMarker(found.adding)
            return .empty
        case .absent:
            state.withLock { $0.probeLayout1 = true }
            writeMarker(RemoteLayout(layouts: [RemoteLayout.version]))
            return .empty
        case .failed(let why, _):
            // Without the marker nothing can be known about the store: not used for this build.
            state.withLock {
                $0.turnOff(reads: .failing(why))
                $0.turnOff(writes: .failing(why))
            }
            return .unusable
        case .refused(let status), .full(let status):
            // Whatever these credentials may do, nothing is known about the store without its marker.
            state.withLock { $0.turnOff(writes: .refused(status)) }
            return .unusable
        case .stored:
            return .unusable
        }
    }

    /// Adds this version's layout to the marker, in the background; uploads wait for it, so no pack is
    /// written to a store whose marker does not list layout 2.
    private func writeMarker(_ layout: RemoteLayout) {
        guard isWritable else { return }
        markerWrite.withLock {
            $0 = Task {
                // No pack goes to a store whose marker does not say layout 2 is there. Several builds may
                // write the marker at once (shards starting together): when this one's write fails, the
                // marker may still be there, written by another.
                guard !(await self.put(RemotePath.layout, layout.bytes)), self.isWritable else { return }
                let (answer, elapsed, retries) = await self.store.get(RemotePath.layout, limit: 64 << 10)
                self.account(answer, elapsed, retries, writing: false)
                if case .found(let bytes) = answer, RemoteLayout.parse(bytes)?.holdsThisVersion == true { return }
                self.state.withLock { $0.turnOff(writes: .failing("layout.json could not be written")) }
            }
        }
    }

    // MARK: Reading

    /// The pack of `key`, asked for at most once per build and kept in the local cache: its variants and
    /// placeholders, and its original's record when the local cache has none for the key (its bytes
    /// stay in the remote unless they are its output: SVG). What it held, or nil when there is none.
    /// Callers then find it in the local cache.
    func localise(_ key: PackKey) async -> PackContents? {
        await fetches.value(for: key) { Task { await self.fetchAndKeep(key) } }
    }

    private func fetchAndKeep(_ key: PackKey) async -> PackContents? {
        let pack = await fetch(key)
        if let pack { await keep(pack) }
        let contents = pack.map(PackContents.init)
        book.withLock { book in
            book.remote[key] = contents.map { .holds($0) } ?? .absent
        }
        if let pack, isWritable, clock() - pack.written > Self.refreshAge { refresh(key) }
        return contents
    }

    private func fetch(_ key: PackKey) async -> Pack? {
        switch await layout() {
        case .unusable: return nil
        case .empty:
            await probeLayout1(key)
            state.withLock { $0.counters.misses += 1 }
            return nil
        case .present: break
        }
        guard isReadable else { return nil }
        let (answer, elapsed, retries) = await store.get(RemotePath.pack(key))
        account(answer, elapsed, retries, writing: false)
        guard case .found(let bytes) = answer else {
            state.withLock { $0.counters.misses += 1 }
            return nil
        }
        switch Pack.decode(bytes, expected: key, maxOriginalBytes: maxOriginalBytes) {
        case .failure(let why):
            state.withLock { $0.counters.misses += 1 }
            note("the pack of \(key) is unusable (\(why)); ignored, and written again if this build makes it")
            return nil
        case .success(let pack):
            state.withLock { state in
                state.counters.hits += 1
                for bad in pack.badBlobs {
                    state.warnings.append("blob \(bad.hex.prefix(12)) in the pack of \(key) did not match its hash; not used")
                }
            }
            return pack
        }
    }

    /// The first build to find no marker asks whether its first image has a layout 1 record, to say
    /// (once) that the store holds objects this version ignores.
    private func probeLayout1(_ key: PackKey) async {
        guard case .original(let original) = key,
              state.withLock({ state in defer { state.probeLayout1 = false }; return state.probeLayout1 }) else { return }
        let (answer, elapsed, retries) = await store.head(RemotePath.layout1Original(original))
        account(answer, elapsed, retries, writing: false)
        if case .found = answer {
            note("the store holds objects of layout 1 (imgbake 0.1.0: cas/, ac/v1/), which this version neither reads nor writes; this build starts layout \(RemoteLayout.version) beside them (`imgbake cache gc --remote --max-age AGE` removes them once they are that old)")
        }
    }

    /// Keeps what `pack` holds in the local cache (everything in it was verified by `Pack.decode`).
    private func keep(_ pack: Pack) async {
        let now = clock()
        if case .original(let key) = pack.key, let found = pack.original, (try? await local.original(key)) == nil {
            await local.storeRemoteOriginal(found.record, credits: found.credits, now: now)
            if found.record.format == .svg, let bytes = pack.blobs[found.record.blob] { await local.storeBlob(bytes, as: found.record.blob) }
        }
        let rows = pack.variants.values.compactMap { row -> (row: VariantRecord, bytes: [UInt8]?)? in
            guard let blob = row.blob else { return (row, nil) }
            return pack.blobs[blob].map { (row, $0) }
        }
        if !rows.isEmpty || !pack.placeholders.isEmpty {
            await local.storeFetchedVariants(rows, of: pack.originalBlob, placeholders: pack.placeholders, now: now)
        }
    }

    /// The bytes of original `id` from the remote, if they hash to `id`. Bytes that do not are a miss
    /// and a warning, never used or stored; missing ones are uploaded by this build if it downloads them.
    public func original(_ id: BlobID) async -> [UInt8]? {
        guard isReadable, await layout() == .present else { return nil }
        let (answer, elapsed, retries) = await store.get(RemotePath.blob(id))
        account(answer, elapsed, retries, writing: false)
        guard case .found(let bytes) = answer, BlobID(of: bytes) == id else {
            state.withLock { state in
                state.counters.misses += 1
                if case .found(let bytes) = answer {
                    state.warnings.append("blob \(id.hex.prefix(12)) did not match its hash (\(bytes.count) bytes); not used")
                }
            }
            book.withLock { _ = $0.missingBlobs.insert(id) }
            return nil
        }
        state.withLock { $0.counters.hits += 1 }
        return bytes
    }

    // MARK: Health

    var isReadable: Bool { state.withLock { $0.readsOff == nil } }
    var isWritable: Bool { state.withLock { $0.writesOff == nil } }

    func note(_ warning: String) { state.withLock { $0.warnings.append(warning) } }

    /// Counts a request and decides, from its answer, whether to go on using the remote.
    func account(_ answer: RemoteAnswer, _ elapsed: Duration, _ retries: Int, writing: Bool, sent: Int = 0) {
        state.withLock { state in
            state.counters.seconds += elapsed.seconds
            state.counters.requests += 1 + retries
            state.counters.retries += retries
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
    /// `layout.json` is there but is not a list of imgbake layouts.
    case foreignLayout

    var description: String {
        switch self {
        case .readOnly: "read only"
        case .refused(let status): "refused (HTTP \(status)); check the credentials and what they may do"
        case .full(let status): "full (HTTP \(status))"
        case .failing(let why): "unavailable (\(why))"
        case .foreignLayout: "its layout.json is not imgbake's list of layouts, so nothing there is read or written"
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
    /// No marker was found: the first image's layout 1 record is asked for.
    var probeLayout1 = false

    mutating func turnOff(reads problem: RemoteProblem) { if readsOff == nil { readsOff = problem } }
    mutating func turnOff(writes problem: RemoteProblem) { if writesOff == nil { writesOff = problem } }
}
