@testable import ImgBake
import Locking
import Testing

/// The one coalescing mechanism: one task per key, joined by everyone who asks while it runs, kept or
/// forgotten after as the pool keeps. Counted by how many times the work ran, not by time.
@Suite struct TaskPoolTests {
    /// Work that counts its runs and ends only when the test lets it (so askers are known to overlap).
    final class Work: Sendable {
        let runs = Locked(0)
        let gate = Locked<[CheckedContinuation<Void, Never>]>([])
        let started = Locked(0)

        func run(_ value: Int) async -> Int {
            runs.withLock { $0 += 1 }
            await withCheckedContinuation { continuation in
                gate.withLock { $0.append(continuation) }
                started.withLock { $0 += 1 }
            }
            return value
        }

        /// Waits until `count` runs are parked at the gate, then lets them all go.
        func release(after count: Int) async {
            while started.withLock({ $0 }) < count { await Task.yield() }
            for continuation in gate.withLock({ gate in defer { gate = [] }; return gate }) { continuation.resume() }
        }
    }

    @Test func askersOfOneKeyShareOneRun() async {
        let pool = TaskPool<String, Int>(), work = Work()
        async let a = pool.value(for: "k") { Task { await work.run(1) } }
        async let b = pool.value(for: "k") { Task { await work.run(2) } }
        async let c = pool.value(for: "k") { Task { await work.run(3) } }
        // Only one run ever parks: if each asker started its own, three would.
        await work.release(after: 1)
        let values = await [a, b, c]
        #expect(work.runs.withLock { $0 } == 1)
        #expect(Set(values).count == 1)
    }

    @Test func differentKeysRunApart() async {
        let pool = TaskPool<String, Int>(), work = Work()
        async let a = pool.value(for: "a") { Task { await work.run(1) } }
        async let b = pool.value(for: "b") { Task { await work.run(2) } }
        await work.release(after: 2)
        #expect(await [a, b] == [1, 2])
        #expect(work.runs.withLock { $0 } == 2)
    }

    /// As the manager uses it for variant sets: the result kept elsewhere, the task forgotten once it
    /// ended, so the next ask starts the work again.
    @Test func aTaskForgottenAfterItsRunStartsAgain() async {
        let pool = TaskPool<String, Int>()
        let runs = Locked(0)
        for expected in 1...3 {
            let (task, _) = pool.task(for: "k") { Task { runs.withLock { $0 += 1; return $0 } } }
            #expect(await task.value == expected)
            pool.forget("k", ifStill: task)
        }
        #expect(pool.current("k") == nil)
    }

    @Test func aKeptTaskKeepsTheFirstAnswer() async {
        let pool = TaskPool<String, Int>()
        let runs = Locked(0)
        for _ in 1...3 {
            #expect(await pool.value(for: "k") { Task { runs.withLock { $0 += 1; return $0 } } } == 1)
        }
        #expect(runs.withLock { $0 } == 1)
    }

    @Test func taskSaysWhoStartedIt() {
        let pool = TaskPool<String, Int>()
        let first = pool.task(for: "k") { Task { 1 } }
        let second = pool.task(for: "k") { Task { 2 } }
        #expect(first.started && !second.started && first.task == second.task)
    }

    @Test func forgetOnlyRemovesTheTaskItWasGiven() async {
        let pool = TaskPool<String, Int>()
        let (old, _) = pool.task(for: "k") { Task { 1 } }
        let replacement = Task<Int, Never> { 2 }
        pool.replace("k", with: replacement)
        pool.forget("k", ifStill: old)
        #expect(pool.current("k") == replacement)
        pool.forget("k", ifStill: replacement)
        #expect(pool.current("k") == nil)
        #expect(await pool.value(for: "k") { Task { 3 } } == 3)
    }

    @Test func takeHandsTheTaskOverOnce() async {
        let pool = TaskPool<String, Int>()
        pool.replace("page", with: Task { 7 })
        #expect(await pool.take("page")?.value == 7)
        #expect(pool.take("page") == nil)
    }

    @Test func cancelAllReachesRunningTasks() async {
        let pool = TaskPool<String, Bool>()
        let (task, _) = pool.task(for: "k") {
            Task {
                while !Task.isCancelled { await Task.yield() }
                return Task.isCancelled
            }
        }
        pool.cancelAll()
        #expect(await task.value)
    }
}
