import NIOHTTP1
import Testing
@testable import ImgBakeServe

/// The proxy's small decisions: the dev server's port from its command, the headers it never passes on,
/// which requests become a tunnel.
@Suite struct ServeProxyTests {
    @Test func theDevServersPortComesFromItsCommandOrItsGenerator() {
        #expect(DevServerPort.of(["hugo", "server", "--port", "1400"]) == 1400)
        #expect(DevServerPort.of(["hugo", "server", "-p", "1401"]) == 1401)
        #expect(DevServerPort.of(["hugo", "server", "--port=1402"]) == 1402)
        #expect(DevServerPort.of(["mkdocs", "serve", "-a", "127.0.0.1:8100"]) == 8100)
        #expect(DevServerPort.of(["mkdocs", "serve", "--dev-addr=localhost:8101"]) == 8101)
        #expect(DevServerPort.of(["hugo", "server"]) == 1313)
        #expect(DevServerPort.of(["/usr/bin/jekyll", "serve", "--livereload"]) == 4000)
        #expect(DevServerPort.of(["npx", "@11ty/eleventy", "--serve"]) == 8080)
        #expect(DevServerPort.of(["zola", "serve"]) == 1111)
        #expect(DevServerPort.of(["jekyll", "serve", "-P", "4001", "-p", "_plugins"]) == 4001)
        #expect(DevServerPort.of(["zola", "serve", "--interface", "[::1]:1112"]) == 1112)
        #expect(DevServerPort.of(["zola", "serve", "--interface", "::1"]) == 1111, "an address alone names no port")
        #expect(DevServerPort.of(["make", "dev"]) == nil)
    }

    @Test func headersOfOneConnectionAreNotPassedOn() {
        let headers = HTTPHeaders([("Connection", "keep-alive, X-Private"), ("Keep-Alive", "timeout=5"), ("X-Private", "1"),
                                   ("Transfer-Encoding", "chunked"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Content-Type", "text/html")])
        let kept = HopByHop.removed(from: headers)
        #expect(kept["set-cookie"] == ["a=1", "b=2"] && kept["content-type"] == ["text/html"])
        #expect(kept["connection"].isEmpty && kept["keep-alive"].isEmpty && kept["x-private"].isEmpty && kept["transfer-encoding"].isEmpty)
    }

    @Test func anUpgradeRequestBecomesATunnel() {
        let websocket = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/livereload",
                                        headers: HTTPHeaders([("Connection", "keep-alive, Upgrade"), ("Upgrade", "websocket")]))
        let plain = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: HTTPHeaders([("Connection", "keep-alive")]))
        #expect(Tunnel.isUpgrade(websocket) && !Tunnel.isUpgrade(plain))
        let bytes = Tunnel.requestBytes(websocket, upstream: .init(host: "127.0.0.1", port: 1313), allocator: .init())
        #expect(String(buffer: bytes) == "GET /livereload HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nHost: 127.0.0.1:1313\r\n\r\n")
    }

    /// A gzipped page inflates with the stack's zlib; a damaged or too large one does not.
    @Test func aGzippedPageInflates() throws {
        let gzipped: [UInt8] = [31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 179, 41, 176, 203, 72, 205, 201, 201, 215, 81, 40, 72, 76, 79, 181, 209,
                                47, 176, 3, 0, 220, 53, 77, 55, 18, 0, 0, 0]
        #expect(Exchange.gunzip(gzipped, limit: 1 << 20) == .success(Array("<p>hello, page</p>".utf8)))
        #expect(Exchange.gunzip(gzipped, limit: 10) == .failure(.tooLarge), "more than the limit")
        #expect(Exchange.gunzip(Array(gzipped.prefix(20)), limit: 1 << 20) == .failure(.damaged), "cut short")
        #expect(Exchange.gunzip(gzipped + gzipped, limit: 1 << 20) == .failure(.damaged), "two members")
        #expect(Exchange.gunzip(Array("<p>not gzip</p>".utf8), limit: 1 << 20) == .failure(.damaged))
    }
}
