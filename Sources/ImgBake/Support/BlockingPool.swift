import Foundation

/// A fixed number of threads for blocking work (libvips decoding and encoding, disk and SQLite),
/// so it never occupies Swift's cooperative pool. The thread count is the stage's concurrency limit.
///
///     let pool = BlockingPool(threads: 2, name: "transform")
///     let bytes = try await pool.run { try encode(image) }
public final class BlockingPool: Sendable {
    private let queue: JobQueue

    public init(threads: Int, name: String) {
        queue = JobQueue()
        for index in 0..<max(1, threads) {
            let thread = Thread { [queue] in queue.work() }
            thread.name = "imgbake-\(name)-\(index)"
            thread.stackSize = 8 << 20 // libvips and libheif use deep stacks
            thread.start()
        }
    }

    deinit { queue.close() }

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
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var closed = false

    func push(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func work() {
        while true {
            condition.lock()
            while head == jobs.count && !closed { condition.wait() }
            if head == jobs.count { condition.unlock(); return }
            let job = jobs[head]
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
