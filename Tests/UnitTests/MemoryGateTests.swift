import Foundation
import Testing
import Vips
@testable import ImgBake
import ImgBakeTestSupport

/// The transform stage's memory admission: what it lets run together, in what order, and how it
/// weighs a decode by the source's real header.
@Suite struct MemoryGateTests {
    /// Many tasks of random weights through one gate: never more than the budget at once unless a
    /// piece runs alone, and every piece runs.
    @Test func theBudgetHoldsUnderLoadAndEveryPieceRuns() async {
        let gate = MemoryGate(budget: 100)
        let seen = Tally((over: false, done: 0))
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<200 {
                let weight = [5, 20, 60, 140][n % 4]
                group.addTask {
                    if !gate.take(weight) { await gate.wait(for: weight) }
                    let load = gate.load
                    seen.update { if load.weight > 100 && load.count > 1 { $0.over = true } }
                    try? await Task.sleep(for: .microseconds(200))
                    gate.give(weight)
                    seen.update { $0.done += 1 }
                }
            }
        }
        #expect(seen.value.done == 200 && !seen.value.over)
        #expect(gate.load.weight == 0 && gate.load.count == 0)
    }

    /// A heavy piece waiting for room is passed by light ones only a few times, then goes next.
    @Test func aHeavyPieceIsPassedOnlyAFewTimes() async {
        let gate = MemoryGate(budget: 100)
        #expect(gate.take(60))
        let heavy = Task { await gate.wait(for: 90) }
        while gate.waiting == 0 { try? await Task.sleep(for: .milliseconds(1)) }
        var passed = 0
        while passed < 100, gate.take(10) { passed += 1; gate.give(10) }
        #expect(passed == MemoryGate.maxPasses)
        gate.give(60)
        await heavy.value
        #expect(gate.load.weight == 90 && gate.load.count == 1)
        gate.give(90)
    }

    @Test func oneHeavyPieceRunsAloneRatherThanNever() {
        let gate = MemoryGate(budget: 100)
        #expect(gate.take(500))
        #expect(!gate.take(1))
        gate.give(500)
        #expect(gate.take(1))
    }

    /// With room for no two decodes at once, every transform that finds one running lets go and waits,
    /// then starts again: all of them still end, each with its variants.
    @Test func transformsThatWaitForRoomStillEndWhole() async throws {
        let transformer = try Transformer(threads: 2, limits: .init(maxPixels: 100_000_000), memoryPerThread: 1)
        let names = ["hubble.jpg", "coffee.png", "astronaut.jpg", "hubble-wide.jpg", "deep-field.gif", "astronaut-round.png"]
        let widths = try await withThrowingTaskGroup(of: [Int].self) { group in
            for name in names + names {
                let bytes = Paths.image(name)
                let format = try #require(ImageFormat.sniff(bytes))
                group.addTask {
                    let (_, variants) = try await transformer.variants(of: ImageBuffer(bytes), format: format) { info in
                        [VariantSpec(width: min(100, info.width), format: .webp, quality: 75, effort: 2, animated: false, keepMetadata: [])]
                    }
                    return try variants.map { try VipsImage.open(ImageBuffer($0.bytes)).width }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        await transformer.shutdown()
        #expect(widths.count == 12 && widths.allSatisfy { $0 == 100 })
    }

    /// The header says which JPEGs libjpeg must keep whole (multi-scan), and they weigh most.
    @Test func aProgressiveJPEGWeighsMoreThanABaselineOne() throws {
        let baseline = Paths.image("hubble.jpg")
        let progressive = try VipsImage.open(ImageBuffer(baseline)).encoded(as: .jpeg(quality: 80))
        let limits = Transformer.Limits(maxPixels: 100_000_000)
        let a = try Transformer.inspect(ImageBuffer(baseline), format: .jpeg, limits: limits)
        let b = try Transformer.inspect(ImageBuffer(progressive), format: .jpeg, limits: limits)
        #expect(!a.progressive && b.progressive)
        let job = TransformJob(specs: [])
        #expect(Transformer.expectedMemory(job, b) == 4 * Transformer.expectedMemory(job, a))
        let png = try Transformer.inspect(ImageBuffer(Paths.image("coffee.png")), format: .png, limits: limits)
        #expect(Transformer.expectedMemory(job, png) > 56 << 20)
    }
}

/// A value behind a lock, for the tests' own bookkeeping.
private final class Tally<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
