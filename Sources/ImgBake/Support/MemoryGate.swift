import Locking

/// Admits work by weight (the memory it is expected to use) while the weights admitted add up to no
/// more than the budget; one piece is always admitted when nothing else is, however heavy, so nothing
/// waits forever. Waiting takes no thread. Lighter work that fits may go ahead of the first waiter
/// (so the other threads keep busy while a heavy decode waits for room), but only `maxPasses`
/// times: then the first waiter goes next.
///
///     if !gate.take(weight) { await gate.wait(for: weight) }
///     defer { gate.give(weight) }
final class MemoryGate: Sendable {
    static let maxPasses = 4

    private struct Waiter {
        var weight: Int
        var resume: CheckedContinuation<Void, Never>
        var passedBy = 0
    }

    private struct State {
        let budget: Int
        var inUse = 0
        var admitted = 0
        var waiters: [Waiter] = []

        func fits(_ weight: Int) -> Bool { admitted == 0 || inUse + weight <= budget }

        /// Whether work of `weight` not first in line may be admitted now.
        func mayPass(_ weight: Int) -> Bool { fits(weight) && (waiters.first?.passedBy ?? 0) < MemoryGate.maxPasses }

        mutating func admit(_ weight: Int) {
            inUse += weight
            admitted += 1
        }
    }

    private let state: Locked<State>

    init(budget: Int) {
        state = Locked(State(budget: budget))
    }

    /// Takes `weight` if it may go now; false otherwise (then `wait(for:)`).
    func take(_ weight: Int) -> Bool {
        state.withLock { state in
            guard state.mayPass(weight) else { return false }
            if !state.waiters.isEmpty { state.waiters[0].passedBy += 1 }
            state.admit(weight)
            return true
        }
    }

    /// Returns once `weight` has been taken for the caller.
    func wait(for weight: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.mayPass(weight) else {
                    state.waiters.append(Waiter(weight: weight, resume: continuation))
                    return false
                }
                if !state.waiters.isEmpty { state.waiters[0].passedBy += 1 }
                state.admit(weight)
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Gives back what `take` or `wait(for:)` took, and admits the waiters that may go now: the first
    /// when it fits, then others that fit while it may still be passed.
    func give(_ weight: Int) {
        let admitted = state.withLock { state in
            state.inUse -= weight
            state.admitted -= 1
            var admitted: [CheckedContinuation<Void, Never>] = []
            var index = 0
            while index < state.waiters.count {
                let waiter = state.waiters[index]
                let may = index == 0 ? state.fits(waiter.weight) : state.mayPass(waiter.weight)
                guard may else { index += 1; continue }
                if index > 0 { state.waiters[0].passedBy += 1 }
                state.waiters.remove(at: index)
                state.admit(waiter.weight)
                admitted.append(waiter.resume)
            }
            return admitted
        }
        for continuation in admitted { continuation.resume() }
    }

    /// What is admitted now: the weights' sum and how many.
    var load: (weight: Int, count: Int) { state.withLock { ($0.inUse, $0.admitted) } }
    /// How many wait.
    var waiting: Int { state.withLock { $0.waiters.count } }
}
