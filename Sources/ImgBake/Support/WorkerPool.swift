import Foundation
import Locking

/// A fixed number of threads that run Swift tasks: a task executor for blocking work (libvips
/// decoding and encoding, page and blob files, gumbo, SQLite), so that it never occupies Swift's
/// cooperative pool, whose threads must not block. The thread count is the stage's concurrency limit.
///
///     let pool = WorkerPool(threads: 2, name: "transform")
///     let bytes = try await pool.run { try encode(image) }              // one call on the pool
///     group.addTask(executorPreference: pool) { await page.gather() }   // a whole task on it
///
/// A task that prefers the pool runs its nonisolated code on the pool's threads; where it awaits
/// (an actor, another pool) it lets its thread go, and comes back to the pool after. This is the
/// build's one way of running blocking work: structured tasks, each stage on an executor of its own.
public final class WorkerPool: TaskExecutor, Sendable {
    public let name: String
    private let threads: Threads

    public init(threads count: Int, name: String, stackSize: Int = 8 << 20) {
        self.name = name
        threads = Threads(count: max(1, count))
        for index in 0..<threads.count {
            // The threads hold what they share, not the pool: a pool no one holds any more (a task that
            // prefers it holds it) ends its threads, as `shutdown` does.
            let thread = Thread { [threads, unowned self] in threads.work { self.asUnownedTaskExecutor() } }
            thread.name = "imgbake-\(name)-\(index)"
            thread.stackSize = stackSize // libvips and libheif use deep stacks
            thread.start()
        }
    }

    deinit { threads.close(nil) }

    public func enqueue(_ job: consuming ExecutorJob) { threads.push(UnownedJob(job)) }

    /// Runs `work` on one of the pool's threads and returns its result.
    public func run<T: Sendable, E: Error>(_ work: () throws(E) -> T) async throws(E) -> T {
        try await withTaskExecutorPreference(self) { () async throws(E) -> T in try work() }
    }

    /// Runs the work queued so far, then ends the threads; returns once every one has ended. Nothing
    /// may be given to the pool after.
    public func shutdown() async {
        await withCheckedContinuation { (joiner: CheckedContinuation<Void, Never>) in threads.close(joiner) }
    }
}

/// The pool's threads and the queue they share.
private final class Threads: Sendable {
    let count: Int
    private let queue: Locked<JobQueue>
    /// One signal per job queued, and one per thread when the pool closes: an idle thread parks here.
    private let ready = DispatchSemaphore(value: 0)

    init(count: Int) {
        self.count = count
        queue = Locked(JobQueue(threads: count))
    }

    func push(_ job: UnownedJob) {
        queue.withLock { $0.push(job) }
        ready.signal()
    }

    /// A thread's life: each job queued run on the executor `executor` gives, until the pool closes.
    func work(_ executor: () -> UnownedTaskExecutor) {
        while true {
            ready.wait()
            switch queue.withLock({ $0.take() }) {
            case .job(let job): job.runSynchronously(on: executor())
            case .closed(let joiners):
                for joiner in joiners { joiner.resume() }
                return
            case .none: continue
            }
        }
    }

    /// Closes the queue: the threads end once the work queued is done, the last one resuming `joiner`
    /// (at once when they have ended already).
    func close(_ joiner: CheckedContinuation<Void, Never>?) {
        if queue.withLock({ $0.close(joiner) }) {
            joiner?.resume()
            return
        }
        for _ in 0..<count { ready.signal() }
    }
}

/// The jobs waiting for a thread, first come first served.
private struct JobQueue {
    /// A taken job's slot is emptied at once: a job holds what its task holds (an original's bytes,
    /// encoded variants), which must not outlive it.
    private var jobs: [UnownedJob?] = []
    private var head = 0
    private var closed = false
    /// Threads still running; the last to end wakes those waiting for the shutdown.
    private var running: Int
    private var joiners: [CheckedContinuation<Void, Never>] = []

    init(threads: Int) { running = threads }

    enum Taken {
        case job(UnownedJob)
        /// The pool is closed and its work done: the thread ends, the last one waking the joiners.
        case closed([CheckedContinuation<Void, Never>])
        case none
    }

    mutating func push(_ job: UnownedJob) { jobs.append(job) }

    /// True when every thread has ended already.
    mutating func close(_ joiner: CheckedContinuation<Void, Never>?) -> Bool {
        closed = true
        guard running > 0 else { return true }
        if let joiner { joiners.append(joiner) }
        return false
    }

    mutating func take() -> Taken {
        if head < jobs.count {
            let job = jobs[head]!
            jobs[head] = nil
            head += 1
            if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return .job(job)
        }
        guard closed else { return .none }
        running -= 1
        guard running == 0 else { return .closed([]) }
        defer { joiners = [] }
        return .closed(joiners)
    }
}
