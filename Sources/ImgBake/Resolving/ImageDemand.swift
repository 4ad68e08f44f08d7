/// The resolving stage of a build: every image the pages ask for, resolved through the manager once,
/// `limit` at a time (each holds its bytes while it is downloaded and inspected), in the order pages
/// first ask for them. A page waits for its own images only, so page work and image work overlap.
///
/// An image is resolved with everything asked of it by the time its turn comes (the requests of every
/// page that asked so far, merged), so its source is decoded once however many pages use it. A page that
/// asks later for a width or format not made yet gets it from a second resolution, which makes only
/// what is missing (the rest is in the cache's index).
actor ImageDemand {
    private let manager: ImageManager
    private let limit: Int
    /// `--shard K/N`: only the images whose key falls in this shard are resolved.
    private let shard: Shard?
    private let observe: @Sendable (_ done: Int, _ total: Int) -> Void

    private var entries: [OriginalKey: Entry] = [:]
    /// Keys waiting for a slot, first asked first.
    private var queue: [OriginalKey] = []
    private var head = 0
    private var running = 0
    private var finished = 0
    /// Each URL's key, as worked out.
    private var keys: [ImageSource: OriginalKey] = [:]
    /// What `resolvedSet` reports, gathered as pages ask.
    private var set = ResolvedSet()

    private struct Waiter {
        var request: VariantRequest
        var continuation: CheckedContinuation<Resolution, Never>
    }

    private struct Entry {
        /// The URL fetched: the first one asked under this key.
        var source: ImageSource
        /// What waiting pages ask for beyond what was resolved.
        var wanted: VariantRequest?
        /// What the last resolution covered, and how it went.
        var covered: VariantRequest?
        var result: Resolution?
        var waiters: [Waiter] = []
        var running = false
        var queued = false
        /// The repair made of it, and what it covered.
        var repair: (Task<Resolution, Never>, VariantRequest)?
    }

    init(manager: ImageManager, limit: Int, shard: Shard?, observe: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }) {
        self.manager = manager
        self.limit = max(1, limit)
        self.shard = shard
        self.observe = observe
    }

    /// One image a page asks for: its key, the URL it asks by, and the variants it wants.
    struct Wanted: Sendable {
        var key: OriginalKey
        var source: ImageSource
        var request: VariantRequest
    }

    /// What a page asks for, in one call: each image's key; the images resolved already with what
    /// they ask for (a warm build's pages find all of theirs here); and the others, one per key (URLs
    /// naming one image, differing in ignored query parameters, by the first of them in order with what
    /// all of them ask for), to be awaited with `resolution(of:)`.
    func ask(_ demand: [(ImageSource, VariantRequest)]) -> (keys: [ImageSource: OriginalKey], served: [OriginalKey: Resolution], waiting: [Wanted]) {
        var keys: [ImageSource: OriginalKey] = [:]
        var byKey: [OriginalKey: Wanted] = [:]
        for (source, request) in demand {
            let key = self.key(source)
            keys[source] = key
            if let known = byKey[key] {
                byKey[key] = Wanted(key: key, source: min(known.source, source), request: known.request.union(request))
            } else {
                byKey[key] = Wanted(key: key, source: source, request: request)
            }
        }
        var served: [OriginalKey: Resolution] = [:]
        var waiting: [Wanted] = []
        for image in byKey.values {
            if let entry = entries[image.key], !entry.running, let result = entry.result, Self.serves(result, covering: entry.covered, image.request) {
                note(image)
                served[image.key] = result
            } else {
                waiting.append(image)
            }
        }
        return (keys, served, waiting)
    }

    /// The key of `source`, worked out once per build (the key filter parses the URL's query).
    private func key(_ source: ImageSource) -> OriginalKey {
        if let known = keys[source] { return known }
        let key = manager.key(for: source)
        keys[source] = key
        return key
    }

    /// What `resolvedSet` reports of an image asked for.
    private func note(_ image: Wanted) {
        // An image first resolved for a file no page had asked for yet (`repair`) is the page's now.
        if set.results[image.key] == nil, let result = entries[image.key]?.result { set.results[image.key] = result }
        if let known = set.requests[image.key] {
            if known != image.request { set.requests[image.key] = known.union(image.request) }
        } else {
            set.requests[image.key] = image.request
        }
        // The same URL is reported whatever order pages were read in.
        if let known = set.representative[image.key] {
            if image.source != known && image.source < known { set.representative[image.key] = image.source }
        } else {
            set.representative[image.key] = image.source
        }
    }

    /// The image `source` names, with at least the variants `request` asks for; nil when it is another
    /// shard's.
    func resolution(of wanted: Wanted) async -> Resolution? {
        let key = wanted.key, source = wanted.source, request = wanted.request
        note(wanted)
        if let shard, !shard.includes(key) { return nil }
        var entry = entries[key] ?? Entry(source: source)
        // Of the URLs naming one image, the first in order is fetched while it is still to be.
        if entry.result == nil && !entry.running && source < entry.source { entry.source = source }
        if !entry.running, let result = entry.result, Self.serves(result, covering: entry.covered, request) { return result }
        return await withCheckedContinuation { continuation in
            entry.waiters.append(Waiter(request: request, continuation: continuation))
            entry.wanted = entry.wanted.map { $0.union(request) } ?? request
            if !entry.running && !entry.queued {
                entry.queued = true
                queue.append(key)
            }
            let isNew = entries[key] == nil
            entries[key] = entry
            if isNew { observe(finished, entries.count) }
            startWhatFits()
        }
    }

    /// Resolves an image again after its cached files turned out to be damaged (the cache forgot them),
    /// with everything asked of it so far and what `wanted` asks: once per build however many pages
    /// found it so, unless a page asks for more than that repair made. An image no page asked for (a
    /// file named by a page that was not read) is resolved with what `wanted` asks; it is not among
    /// the images the build reports.
    func repair(_ wanted: Wanted) async -> Resolution? {
        let key = wanted.key
        var entry = entries[key] ?? Entry(source: wanted.source)
        let request = entry.covered.map { $0.union(wanted.request) } ?? wanted.request
        if let (task, covering) = entry.repair, covering.covers(request) {
            return await task.value
        }
        let manager = self.manager, source = entry.source
        let task = Task { await manager.resolve(source, request: request) }
        entry.repair = (task, request)
        entries[key] = entry
        let result = await task.value
        if entries[key]?.running == false {
            // Counted once, by whichever resolution lands first (a queued one that lands later is not).
            if entries[key]?.result == nil { finished += 1 }
            entries[key]?.result = result
            entries[key]?.covered = request
        }
        if set.requests[key] != nil {
            set.add(result, of: key)
        } else if case .resolved(let image, _) = result, image.encoded > 0 {
            // Not an image of the build's pages, but work it did.
            set.encoded[key, default: 0] += image.encoded
        }
        observe(finished, entries.count)
        return result
    }

    /// Every image asked for and how it resolved (after the pages are done).
    func resolvedSet() -> ResolvedSet { set }

    private static func serves(_ result: Resolution, covering covered: VariantRequest?, _ request: VariantRequest) -> Bool {
        if case .failed = result { return true }
        return covered?.covers(request) ?? false
    }

    private func startWhatFits() {
        while running < limit, head < queue.count {
            let key = queue[head]
            head += 1
            guard var entry = entries[key], let wanted = entry.wanted else { continue }
            let request = entry.covered.map { $0.union(wanted) } ?? wanted
            entry.queued = false
            entry.running = true
            entry.wanted = nil
            let waiting = entry.waiters
            entry.waiters = []
            entries[key] = entry
            running += 1
            let manager = self.manager, source = entry.source
            Task { await self.finish(key, request: request, result: await manager.resolve(source, request: request), waiting: waiting) }
        }
        if head > 1024 && head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }

    private func finish(_ key: OriginalKey, request: VariantRequest, result: Resolution, waiting: [Waiter]) {
        running -= 1
        guard var entry = entries[key] else { return }
        if entry.result == nil { finished += 1 }
        entry.running = false
        entry.result = result
        entry.covered = request
        set.add(result, of: key)
        for waiter in waiting { waiter.continuation.resume(returning: result) }
        // Pages that asked while it ran: served if this covered them, else it goes round again.
        let later = entry.waiters
        entry.waiters = []
        entry.wanted = nil
        for waiter in later {
            if Self.serves(result, covering: request, waiter.request) {
                waiter.continuation.resume(returning: result)
            } else {
                entry.waiters.append(waiter)
                entry.wanted = entry.wanted.map { $0.union(waiter.request) } ?? waiter.request
            }
        }
        if !entry.waiters.isEmpty {
            entry.queued = true
            queue.insert(key, at: head)
        }
        entries[key] = entry
        observe(finished, entries.count)
        startWhatFits()
    }
}

/// Every unique image of a build and how it resolved.
struct ResolvedSet: Sendable {
    /// The smallest URL asked under each key (what reports name).
    var representative: [OriginalKey: ImageSource] = [:]
    /// The union of what the references to each image ask for.
    var requests: [OriginalKey: VariantRequest] = [:]
    var results: [OriginalKey: Resolution] = [:]
    /// The variants encoded for each image, over every resolution of it in this build: a page asking
    /// later for more than the first resolution covered has it resolved again, and `results` keeps only
    /// the last, which made only what was missing.
    var encoded: [OriginalKey: Int] = [:]

    /// One resolution of the image `key`: its result now, and what it encoded.
    mutating func add(_ result: Resolution, of key: OriginalKey) {
        results[key] = result
        if case .resolved(let image, _) = result, image.encoded > 0 { encoded[key, default: 0] += image.encoded }
    }

    /// Each image's notes (a repair, a stale copy used), once.
    var notes: [Diagnostic] {
        results.flatMap { key, result -> [Diagnostic] in
            guard case .resolved(_, let notes) = result, let url = representative[key] else { return [] }
            return notes.map { Diagnostic(.warning, "\(url): \($0)") }
        }
    }

    /// URLs that `--offline`/`--frozen` could not serve from the cache.
    var missing: [String] {
        results.compactMap { key, result in
            guard case .failed(let failure) = result, failure.kind == .offlineMiss else { return nil }
            return representative[key]?.description
        }.sorted()
    }
}
