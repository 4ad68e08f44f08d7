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
    private let queue: Locked<JobQueue>
    /// One signal per job queued, and one per thread when the pool closes: an idle thread parks here.
    private let ready = DispatchSemaphore(value: 0)
    private let threads: Int

    public init(threads: Int, name: String, stackSize: Int = 8 << 20) {
        self.name = name
        self.threads = max(1, threads)
        queue = Locked(JobQueue(threads: self.threads))
        for index in 0..<self.threads {
            let thread = Thread { [self] in work() }
            thread.name = "imgbake-\(name)-\(index)"
            thread.stackSize = stackSize // libvips and libheif use deep stacks
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.push(job) }
        ready.signal()
    }

    private func work() {
        while true {
            ready.wait()
            switch queue.withLock({ $0.take() }) {
            case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
            case .closed(let joiners):
                for joiner in joiners { joiner.resume() }
                return
            case .none: continue
            }
        }
    }

    /// Runs `work` on one of the pool's threads and returns its result.
    public func run<T: Sendable, E: Error>(_ work: () throws(E) -> T) async throws(E) -> T {
        try await withTaskExecutorPreference(self) { () async throws(E) -> T in try work() }
    }

    /// Runs the work queued so far, then ends the threads; returns once every one has ended. Nothing
    /// may be given to the pool after.
    public func shutdown() async {
        await withCheckedContinuation { (joiner: CheckedContinuation<Void, Never>) in
            queue.withLock { $0.close(joiner) }
            for _ in 0..<threads { ready.signal() }
        }
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

    mutating func close(_ joiner: CheckedContinuation<Void, Never>) {
        closed = true
        joiners.append(joiner)
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
