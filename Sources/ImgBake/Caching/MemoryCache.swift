/// The build's memory layer (SDWebImage's memory cache): values with a cost, least recently used
/// evicted first once the total cost passes the limit. A value type; its owner (an actor) serialises
/// access.
struct MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let costLimit: Int
    private var entries: [Key: (value: Value, cost: Int, used: UInt64)] = [:]
    private var clock: UInt64 = 0
    private(set) var totalCost = 0

    init(costLimit: Int) { self.costLimit = max(0, costLimit) }

    var count: Int { entries.count }

    mutating func value(for key: Key) -> Value? {
        guard let entry = entries[key] else { return nil }
        clock += 1
        entries[key]!.used = clock
        return entry.value
    }

    mutating func set(_ value: Value, for key: Key, cost: Int) {
        clock += 1
        if let old = entries[key] { totalCost -= old.cost }
        entries[key] = (value, cost, clock)
        totalCost += cost
        guard totalCost > costLimit else { return }
        // Evict down to 90 % of the limit at once, so a full cache does not sort on every insert.
        let target = costLimit - costLimit / 10
        for (key, entry) in entries.sorted(by: { $0.value.used < $1.value.used }) where totalCost > target {
            entries[key] = nil
            totalCost -= entry.cost
        }
    }

    mutating func remove(_ key: Key) {
        if let old = entries.removeValue(forKey: key) { totalCost -= old.cost }
    }
}
