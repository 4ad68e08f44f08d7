import Foundation
import ImgBake
import ImgBakeTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing
@testable import ImgBakeServe

/// The proxy's handlers on NIO's testing channels: the browser's connection with NIO's own server
/// pipeline and `ProxyHandler`, the dev server a second testing channel (`TestingUpstream`). Bytes in,
/// bytes out, no socket; the page is rewritten by a real `ServedSite` on a test site's cache.
@Suite(.hangGuard) struct ProxyHandlerTests {
    /// The dev server as a testing channel on the browser connection's loop; counts the connections asked.
    final class TestingUpstream: UpstreamConnecting {
        let channel: NIOAsyncTestingChannel
        private let asked = Mutex(0)

        init(loop: NIOAsyncTestingEventLoop) { channel = NIOAsyncTestingChannel(loop: loop) }

        var connections: Int { asked.withLock { $0 } }

        func connect(on loop: any EventLoop, _ initialize: @escaping @Sendable (any Channel) throws -> Void) -> EventLoopFuture<any Channel> {
            asked.withLock { $0 += 1 }
            let channel = self.channel
            return loop.submit { try initialize(channel) }
                .flatMap { channel.connect(to: try! SocketAddress(ipAddress: "127.0.0.1", port: 1313)) }
                .map { channel as any Channel }
        }
    }

    /// A browser connection to a proxy in front of `upstream`, for a site served from `site`'s cache.
    private func browser(_ served: ServedSite, _ upstream: TestingUpstream, loop: NIOAsyncTestingEventLoop) async throws -> NIOAsyncTestingChannel {
        var settings = ProxyServer.Settings(upstream: .init(host: "127.0.0.1", port: 1313))
        settings.maxPageBytes = 1 << 20
        let context = ProxyContext(settings: settings, site: served, log: ServeLog { _ in }, loops: LoopGate(), upstream: upstream)
        let channel = NIOAsyncTestingChannel(loop: loop)
        try await loop.executeInContext {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: false)
            try channel.pipeline.syncOperations.addHandler(ProxyHandler(context))
        }
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 50000))
        return channel
    }

    /// What `channel` wrote, up to and including one whole HTTP message (its head, and a body of the
    /// length its head says). Read as the writes come, with a short sleep between looks, not with
    /// `waitForOutboundWrite`, which does not end when the test is cancelled: a message that never
    /// comes whole fails the test at the suite's hang guard rather than holding the run.
    private func message(from channel: NIOAsyncTestingChannel) async throws -> (head: String, body: String) {
        var bytes: [UInt8] = []
        while true {
            // What the handlers scheduled on the loop from within it runs when the loop is run.
            await channel.testingEventLoop.run()
            guard let write = try await channel.readOutbound(as: IOData.self) else {
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            guard case .byteBuffer(let buffer) = write else { throw Unexpected.fileRegion }
            bytes += Array(buffer.readableBytesView)
            let text = String(decoding: bytes, as: UTF8.self)
            guard let split = text.range(of: "\r\n\r\n") else { continue }
            let head = String(text[..<split.lowerBound]), body = String(text[split.upperBound...])
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            if body.utf8.count >= length { return (head, body) }
        }
    }

    private enum Unexpected: Error { case fileRegion }

    /// A browser connection to a proxy for an empty site, and the dev server's channel behind it;
    /// the browser's connection is closed after `body`, if `body` has not closed it.
    private func proxy(_ body: @Sendable (_ browser: NIOAsyncTestingChannel, _ upstream: TestingUpstream) async throws -> Void) async throws {
        try await served { served in
            let loop = NIOAsyncTestingEventLoop()
            let upstream = TestingUpstream(loop: loop)
            let browser = try await browser(served, upstream, loop: loop)
            try await body(browser, upstream)
            if browser.isActive { try await browser.close() }
        }
    }

    private func served<T: Sendable>(_ body: @Sendable (ServedSite) async throws -> T) async throws -> T {
        let site = TestSite()
        try FileManager.default.createDirectory(atPath: site.site, withIntermediateDirectories: true)
        let upstream = try #require(RemoteURL.resolve("http://127.0.0.1:1313/"))
        var config = site.configuration(origin: nil)
        // A page's image not in the cache is resolved at once: to a closed loopback port, not a DNS lookup.
        config.fetch.connectTo = ["images.test:80:127.0.0.1:9"]
        return try await ServedSite.using(config, upstream: upstream, body)
    }

    /// A script passes through: the request goes to the dev server as the browser sent it, less the
    /// headers of its connection, and the answer comes back with its bytes.
    @Test func anAssetPassesThroughBothWays() async throws {
        try await proxy { browser, upstream in
            try await browser.writeInbound(ByteBuffer(string: "GET /app.js?v=2 HTTP/1.1\r\nHost: 127.0.0.1:8089\r\nKeep-Alive: timeout=5\r\nAccept: */*\r\n\r\n"))
            let request = try await message(from: upstream.channel)
            #expect(request.head.hasPrefix("GET /app.js?v=2 HTTP/1.1\r\n"))
            #expect(request.head.contains("Accept: */*") && !request.head.lowercased().contains("keep-alive: timeout"))
            try await upstream.channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nContent-Length: 14\r\nX-Generator: hugo\r\n\r\nconsole.log(1)"))
            let answer = try await message(from: browser)
            #expect(answer.head.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.head.contains("X-Generator: hugo"))
            #expect(answer.body == "console.log(1)")
            #expect(upstream.connections == 1)
        }
    }

    /// A page is read whole, rewritten off the loop and answered with its new length: its remote image
    /// is not in the cache, so it is named by a pending URL of the images path.
    @Test func aPageIsAnsweredRewritten() async throws {
        try await proxy { browser, upstream in
            try await browser.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: 127.0.0.1:8089\r\n\r\n"))
            _ = try await message(from: upstream.channel)
            let page = "<!doctype html><html><body><img src=\"http://images.test/img/hubble.jpg\" alt=\"A\"></body></html>"
            try await upstream.channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(page.utf8.count)\r\n\r\n"))
            try await upstream.channel.writeInbound(ByteBuffer(string: page))
            let answer = try await message(from: browser)
            #expect(answer.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(answer.body.contains("/_img/pending/") && !answer.body.contains("images.test"), "\(answer.body)")
            #expect(answer.head.lowercased().contains("content-length: \(answer.body.utf8.count)"))
        }
    }

    /// A name under the images path that the cache does not know is the dev server's to answer (a
    /// file of the site's own folder of that name).
    @Test func anImagesPathNameTheCacheLacksGoesToTheDevServer() async throws {
        try await proxy { browser, upstream in
            try await browser.writeInbound(ByteBuffer(string: "GET /_img/none-0123456789-10.webp HTTP/1.1\r\nHost: 127.0.0.1:8089\r\n\r\n"))
            let request = try await message(from: upstream.channel)
            #expect(request.head.hasPrefix("GET /_img/none-0123456789-10.webp HTTP/1.1\r\n"))
            try await upstream.channel.writeInbound(ByteBuffer(string: "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"))
            let answer = try await message(from: browser)
            #expect(answer.head.hasPrefix("HTTP/1.1 404") && answer.body == "not found")
        }
    }

    /// The browser going away mid-answer closes the dev server's connection too.
    @Test func aBrowserGoneClosesTheUpstream() async throws {
        try await proxy { browser, upstream in
            try await browser.writeInbound(ByteBuffer(string: "GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:8089\r\n\r\n"))
            _ = try await message(from: upstream.channel)
            try await upstream.channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\nabc"))
            #expect(upstream.channel.isActive)
            try await browser.close()
            await browser.testingEventLoop.run()
            #expect(!upstream.channel.isActive)
        }
    }
}
