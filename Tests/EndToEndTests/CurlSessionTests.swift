import Curl
import Foundation
import Testing
import ImgBakeTestSupport

/// How the session hands its slots out, against the loopback origin: these decide how much of a
/// store's or an origin's latency a build waits through.
@Suite struct CurlSessionTests {
    /// A finished transfer's slot goes to the next queued request at once. It used to wait for the
    /// next socket event to wake the loop: with nothing else running that was the poll's whole second,
    /// and with a remote store's latency a slot stood empty for part of each round trip.
    @Test func aFreedSlotGoesToTheNextQueuedRequestAtOnce() async throws {
        let origin = try Origin(latencyMilliseconds: 50)
        let session = CurlSession(maxConcurrent: 1, maxPerHost: 1)
        let started = ContinuousClock.now
        let statuses = await withTaskGroup(of: Int.self) { group in
            for n in 0..<8 {
                group.addTask {
                    guard case .success(let response) = await session.perform(TransferRequest(url: "http://127.0.0.1:\(origin.port)/img/coffee.png?n=\(n)")) else { return 0 }
                    return response.status
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - started
        #expect(statuses == Array(repeating: 200, count: 8))
        // 8 × 50 ms one after another; waiting for the poll's timeout between them took about 7 s.
        #expect(elapsed < .seconds(3), "\(elapsed)")
        #expect(try await origin.stats().max_concurrent == 1)
        await session.shutdown()
    }

    /// Plain HTTP requests to one host run side by side from the start. With CURLOPT_PIPEWAIT (wait
    /// for a connection that can multiplex) the others waited for the first one's whole answer: a
    /// store's round trip before the first pack of a build.
    @Test func plainHTTPRequestsToOneHostDoNotWaitForTheFirst() async throws {
        let origin = try Origin(latencyMilliseconds: 400)
        let session = CurlSession(maxConcurrent: 4, maxPerHost: 4)
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<4 {
                group.addTask { _ = await session.perform(TransferRequest(url: "http://127.0.0.1:\(origin.port)/img/hubble.jpg?n=\(n)")) }
            }
        }
        let stats = try await origin.stats()
        #expect(stats.requests_total == 4)
        // All four were in the origin's hands at once (one at a time, they would never overlap).
        #expect(stats.max_concurrent == 4, "\(stats.max_concurrent)")
        await session.shutdown()
    }
}
