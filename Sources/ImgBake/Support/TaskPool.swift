import Locking

/// One task per key: the first to ask for a key starts its task, everyone who asks while it runs (or,
/// kept for the build, after it ended) gets the same task, so a piece of work is done once however
/// many callers want it. The one coalescing mechanism of a build (Nuke's `TaskPool` has the same
/// part): the manager's originals and variant sets, the image files written, the missing files
/// looked for and the page copies kept ahead all go through one, each with the keeping it needs.
///
///     let originals = TaskPool<OriginalKey, OriginalOutcome>(keeping: .forTheBuild)
///     let outcome = await originals.value(for: key) { Task { await load(key) } }
///
/// Its own lock, not its owner's isolation, guards the tasks, so actors and plain types use it alike
/// and a caller can await a task without holding anything.
final class TaskPool<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// How long a task stays joinable.
    enum Keeping: Sendable {
        /// Until it ends: the next ask after that starts the work again (a result kept elsewhere, or
        /// work that must see the latest state).
        case untilDone
        /// For the pool's life, a build: its result is the answer from then on (small results).
        case forTheBuild
    }

    let keeping: Keeping
    private let tasks = Locked([Key: Task<Value, Never>]())

    init(keeping: Keeping) {
        self.keeping = keeping
    }

    /// The task for `key`, joined or started with `start` (which makes the task, on the executor it
    /// should run on), and whether this call started it.
    func task(for key: Key, start: () -> Task<Value, Never>) -> (task: Task<Value, Never>, started: Bool) {
        tasks.withLock { tasks in
            if let task = tasks[key] { return (task, false) }
            let task = start()
            tasks[key] = task
            return (task, true)
        }
    }

    /// The value of `key`'s task, joined or started; kept or forgotten after as the pool keeps.
    func value(for key: Key, start: @Sendable () -> Task<Value, Never>) async -> Value {
        let (task, _) = self.task(for: key, start: start)
        let value = await task.value
        if keeping == .untilDone { forget(key, ifStill: task) }
        return value
    }

    /// The task for `key` now, if there is one (running, or kept).
    func current(_ key: Key) -> Task<Value, Never>? {
        tasks.withLock { $0[key] }
    }

    /// Puts `task` in `key`'s place, whatever was there: later asks get it (work done again on
    /// purpose, an answer settled from outside).
    func replace(_ key: Key, with task: Task<Value, Never>) {
        tasks.withLock { $0[key] = task }
    }

    /// Forgets `key` if `task` is still its task (a result that must not be reused, such as a blob
    /// found damaged), so the next ask starts again; a task put in its place since stays.
    func forget(_ key: Key, ifStill task: Task<Value, Never>) {
        tasks.withLock { tasks in
            if tasks[key] == task { tasks[key] = nil }
        }
    }

    /// Takes `key`'s task out of the pool (work started ahead, now claimed by the one who needed it).
    func take(_ key: Key) -> Task<Value, Never>? {
        tasks.withLock { $0.removeValue(forKey: key) }
    }

    /// Cancels every task the pool holds (a build stopping early).
    func cancelAll() {
        for task in tasks.withLock({ Array($0.values) }) { task.cancel() }
    }
}
