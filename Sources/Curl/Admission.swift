/// Which waiting requests run, and when the session's owner thread may sleep: at most `maxConcurrent`
/// at once and `maxPerHost` per host, first asked first, and a request whose host is full does not
/// hold up those behind it. A value the loop consults, so its order is tested without sockets.
struct Admission<Item> {
    let maxConcurrent: Int
    let maxPerHost: Int
    private var waiting: [(host: String, item: Item)] = []
    private var perHost: [String: Int] = [:]
    private var running = 0

    init(maxConcurrent: Int, maxPerHost: Int) {
        self.maxConcurrent = max(1, maxConcurrent)
        self.maxPerHost = max(1, maxPerHost)
    }

    /// A request asks to run.
    mutating func ask(_ item: Item, host: String) {
        waiting.append((host, item))
    }

    /// The next request that may start now, counted as running from here; nil when none may.
    mutating func next() -> (host: String, item: Item)? {
        guard running < maxConcurrent, let index = waiting.firstIndex(where: { fits($0.host) }) else { return nil }
        let chosen = waiting.remove(at: index)
        running += 1
        perHost[chosen.host, default: 0] += 1
        return chosen
    }

    /// A running request ended, or could not start: its slot is free.
    mutating func ended(host: String) {
        running -= 1
        perHost[host, default: 1] -= 1
    }

    /// Whether the loop may sleep until a socket, a timer or a new request wakes it: only when no
    /// waiting request may start. A slot that a transfer just freed goes to the next request at once;
    /// slept on, it stood empty until something else woke the loop (with nothing else running, the
    /// poll's whole cap), and with a store's latency, for part of each round trip.
    var maySleep: Bool {
        running >= maxConcurrent || !waiting.contains { fits($0.host) }
    }

    /// Everything still waiting, taken out in the order asked (the session is stopping).
    mutating func drain() -> [Item] {
        defer { waiting.removeAll() }
        return waiting.map(\.item)
    }

    private func fits(_ host: String) -> Bool { perHost[host, default: 0] < maxPerHost }
}
