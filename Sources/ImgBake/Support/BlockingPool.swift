import Foundation

/// A fixed number of threads for blocking work (libvips decoding and encoding, disk and SQLite),
/// so it never occupies Swift's cooperative pool. The thread count is the stage's concurrency limit.
///
///     let pool = BlockingPool(threads: 2, name: "transform")
///     let bytes = try await pool.run { try encode(image) }
public final class BlockingPool: Sendable {
    private let queue: JobQueue

    public init(threads: Int, name: String) {
        let count = max(1, threads)
        queue = JobQueue(threads: count)
        for index in 0..<count {
            let thread = Thread { [queue] in queue.work() }
            thread.name = "imgbake-\(name)-\(index)"
            thread.stackSize = 8 << 20 // libvips and libheif use deep stacks
            thread.start()
        }
    }

    /// Without `shutdown`, the threads still end (after the queued work) when the pool goes away.
    deinit { queue.close() }

    /// Runs the work queued so far, then ends the threads and returns once every one has ended.
    public func shutdown() async {
        await withCheckedContinuation { continuation in queue.close(whenDone: continuation) }
    }

    /// Runs `work` on one of the pool's threads and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.push { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Same, for work that cannot fail.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.push { continuation.resume(returning: work()) }
        }
    }
}

/// FIFO of jobs shared by the pool's threads; a condition variable parks idle threads.
private final class JobQueue: @unchecked Sendable {
    // All mutable state is guarded by `condition`.
    private let condition = NSCondition()
    /// A taken job's slot is emptied at once: a job's closure holds what it captured (an original's
    /// bytes, encoded variants), which must not outlive the job; slots kept until a batch of jobs had
    /// run would hold every original and variant of a cold build until its end, and memory would grow
    /// with the site.
    private var jobs: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var closed = false
    private var running: Int
    private var joiners: [CheckedContinuation<Void, Never>] = []

    init(threads: Int) { running = threads }

    func push(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func close(whenDone joiner: CheckedContinuation<Void, Never>? = nil) {
        condition.lock()
        closed = true
        let ended = running == 0
        if let joiner, !ended { joiners.append(joiner) }
        condition.broadcast()
        condition.unlock()
        if ended { joiner?.resume() }
    }

    func work() {
        while true {
            condition.lock()
            while head == jobs.count && !closed { condition.wait() }
            if head == jobs.count {
                running -= 1
                let waiting = running == 0 ? joiners : []
                if running == 0 { joiners = [] }
                condition.unlock()
                for joiner in waiting { joiner.resume() }
                return
            }
            let job = jobs[head]!
            jobs[head] = nil
            head += 1
            if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}
