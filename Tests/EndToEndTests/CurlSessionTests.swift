import Curl
import Foundation
import Testing
import ImgBakeTestSupport

/// How the session hands its slots out, against the loopback origin: these decide how much of a
/// store's or an origin's latency a build waits through.
@Suite struct CurlSessionTests {
    /// With one slot, the queued requests run one after another, each once the one before it ended
    /// (order on the session's own clock, not a duration). That a freed slot goes to the next one at
    /// once, before the owner thread sleeps, is `AdmissionTests`' order.
    @Test func oneSlotRunsTheQueuedRequestsOneAfterAnother() async throws {
        let origin = try Origin(latencyMilliseconds: 300)
        let session = CurlSession(maxConcurrent: 1, maxPerHost: 1)
        let responses = await withTaskGroup(of: TransferResponse?.self) { group in
            for n in 0..<4 {
                group.addTask {
                    guard case .success(let response) = await session.perform(TransferRequest(url: "http://127.0.0.1:\(origin.port)/img/coffee.png?n=\(n)")) else {
                        return nil
                    }
                    return response
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        await session.shutdown()
        let done = responses.compactMap { $0 }.sorted { $0.started < $1.started }
        #expect(done.count == 4 && done.allSatisfy { $0.status == 200 })
        for (before, next) in zip(done, done.dropFirst()) {
            #expect(next.started >= before.started + before.duration, "two transfers ran at once in one slot")
        }
        #expect(try await origin.stats().max_concurrent == 1)
    }

    /// Plain HTTP requests to one host run side by side from the start. With CURLOPT_PIPEWAIT (wait
    /// for a connection that can multiplex) the others waited for the first one's whole answer: a
    /// store's round trip before the first pack of a build. Seen as a count at the origin, not on a
    /// clock: all four are there at once; waiting, the first would be alone and the other three after it.
    @Test func plainHTTPRequestsToOneHostDoNotWaitForTheFirst() async throws {
        // Long enough that a test process slow to hand the requests over still has them all in flight.
        let origin = try Origin(latencyMilliseconds: 2000)
        let session = CurlSession(maxConcurrent: 4, maxPerHost: 4)
        let responses = await withTaskGroup(of: TransferResponse?.self) { group in
            for n in 0..<4 {
                group.addTask {
                    guard case .success(let response) = await session.perform(TransferRequest(url: "http://127.0.0.1:\(origin.port)/img/hubble.jpg?n=\(n)")) else { return nil }
                    return response
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        await session.shutdown()
        #expect(responses.compactMap { $0 }.count == 4 && responses.allSatisfy { $0?.status == 200 })
        let stats = try await origin.stats()
        #expect(stats.requests_total == 4)
        #expect(stats.max_concurrent == 4, "the origin saw at most \(stats.max_concurrent) at once: requests waited for the first")
    }

    /// An upload's body goes with its headers: libcurl asked "Expect: 100-continue" for a body over
    /// 1 MB and held it until the server's go-ahead, a round trip more per original's upload to a
    /// store in another region (the store proxy, like one, sends the go-ahead a delay later and reads
    /// a body sent without waiting at once). Seen as an order at the proxy, not on a clock: the go-ahead
    /// comes 0.7 s after the head, before libcurl's own wait of 1 s would end.
    @Test func aLargeUploadDoesNotWaitForAGoAhead() async throws {
        let milliseconds = 700
        let dav = try await DAVServer()
        let proxy = try await StoreProxy(upstream: "http://127.0.0.1:\(dav.port)", delayMilliseconds: milliseconds)
        let session = CurlSession(maxConcurrent: 1, maxPerHost: 1)
        var request = TransferRequest(url: proxy.url + "/cache/large")
        request.method = .put
        request.body = [UInt8](repeating: 7, count: 3 << 20)
        let result = await session.perform(request)
        await session.shutdown()
        guard case .success(let response) = result else { Issue.record("the upload failed: \(result)"); return }
        #expect((200..<300).contains(response.status), "\(response.status)")
        let stats = try await proxy.stats()
        #expect(stats.expect_continue == 1, "the proxy did not see the case it models")
        // Waiting for the go-ahead, the body would start after it; not waiting, it is whole before it.
        #expect(stats.bodies_before_go_ahead == 1, "the upload waited for the go-ahead")
    }
}
