import Locking

/// One task per key: the first to ask for a key starts its task, everyone who asks while it runs or
/// after it ended gets the same task, until it is forgotten, so a piece of work is done once however
/// many callers want it. The one coalescing mechanism of a build (Nuke's `TaskPool` has the same
/// part): the manager's originals and variant sets, the image files written, the missing files
/// looked for, the page copies kept ahead and the remote's packs all go through one. A task is kept
/// for the pool's life (a build) unless its owner forgets it: the manager forgets a variant set's task
/// once it ended (the demand remembers what it resolved to).
///
///     let originals = TaskPool<OriginalKey, OriginalOutcome>()
///     let outcome = await originals.value(for: key) { Task { await load(key) } }
///
/// Its own lock, not its owner's isolation, guards the tasks, so actors and plain types use it alike
/// and a caller can await a task without holding anything.
final class TaskPool<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let tasks = Locked([Key: Task<Value, Never>]())

    init() {}

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

    /// The value of `key`'s task, joined or started.
    func value(for key: Key, start: @Sendable () -> Task<Value, Never>) async -> Value {
        await self.task(for: key, start: start).task.value
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
