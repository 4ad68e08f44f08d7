import CShims.Zlib
import Foundation
import ImgBake
import NIOCore
import NIOHTTP1
import NIOPosix

/// One request and its answer: from the images path (`ServedSite.image`), or from the upstream over a
/// connection of its own (on the browser connection's event loop). A page the build would rewrite is
/// read whole, rewritten off the loop and answered; anything else streams through as it arrives, the
/// upstream read only as fast as the browser takes it.
final class Exchange {
    private let head: HTTPRequestHead
    private let context: ChannelHandlerContext
    private let proxy: ProxyContext
    private let started = ContinuousClock.now
    private var upstream: (any Channel)?
    /// Request parts that arrived before the upstream connection was up.
    private var queued: [HTTPClientRequestPart] = []
    private var state = State.starting
    /// Answered from the images path: the request goes no further.
    private var local = false
    /// The answer's end is the connection's (HTTP/1.0 without a length): it is closed after.
    private var closesAfter = false

    private enum State {
        /// Asking the images path, or connecting, or waiting for the upstream's head.
        case starting
        /// Passing the upstream's answer through.
        case streaming
        /// Reading a page whole (its head, its bytes so far, where it is in the site).
        case reading(HTTPResponseHead, ByteBuffer, sitePath: String)
        /// Rewriting it off the loop.
        case rewriting
        case done
    }

    init(_ head: HTTPRequestHead, context: ChannelHandlerContext, proxy: ProxyContext) {
        self.head = head
        self.context = context
        self.proxy = proxy
    }

    private var loop: any EventLoop { context.eventLoop }
    private var path: String { String(head.uri.prefix { $0 != "?" && $0 != "#" }) }

    func begin() {
        let images = proxy.site.imagesPath
        if head.method == .GET || head.method == .HEAD, images.hasPrefix("/"), path.hasPrefix(images) {
            local = true
            let name = String(path.dropFirst(images.count)).removingPercentEncoding ?? ""
            let bound = NIOLoopBound(self, eventLoop: loop), site = proxy.site, gate = proxy.loops
            Task {
                let answer = await site.image(named: name)
                gate.execute(on: bound.eventLoop) { bound.value.answer(answer) }
            }
        } else {
            connect()
        }
    }

    // MARK: The request

    func requestBody(_ buffer: ByteBuffer) { send(.body(.byteBuffer(buffer))) }

    func requestEnd() { send(.end(nil)) }

    /// A part of the request to the upstream; dropped once the answer is out or when no upstream is asked.
    private func send(_ part: HTTPClientRequestPart) {
        if case .done = state { return }
        if let upstream { upstream.writeAndFlush(part, promise: nil) } else if !local { queued.append(part) }
    }

    // MARK: The images path

    private func answer(_ answer: ServedImage?) {
        guard case .starting = state else { return }
        switch answer {
        case nil:
            local = false
            connect()
        case .file(let bytes, let contentType, let immutable)?:
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: contentType)
            headers.add(name: "cache-control", value: immutable ? "public, max-age=31536000, immutable" : "no-cache")
            respond(.ok, headers, body: bytes)
        case .redirect(let url)?:
            var headers = HTTPHeaders()
            headers.add(name: "location", value: url)
            headers.add(name: "cache-control", value: "no-store")
            respond(.found, headers, body: [])
        case .missing(let why)?:
            proxy.log.line("warning: \(why)")
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: "text/plain; charset=utf-8")
            respond(.notFound, headers, body: Array((why + "\n").utf8))
        }
    }

    // MARK: The upstream

    private func connect() {
        let bound = NIOLoopBound(self, eventLoop: loop), upstream = proxy.settings.upstream
        ClientBootstrap(group: loop)
            .connectTimeout(.seconds(3))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(UpstreamHandler(bound.value))
                }
            }
            .connect(host: upstream.host, port: upstream.port)
            .whenComplete { result in bound.value.connected(result) }
    }

    private func connected(_ result: Result<any Channel, any Error>) {
        switch result {
        case .failure(let error):
            guard case .starting = state else { return }
            proxy.log.line("\(head.method.rawValue) \(head.uri) · 502: \(proxy.settings.upstream.description) does not answer (\(error))")
            badGateway("does not answer (\(Self.describe(error)))")
        case .success(let channel):
            guard case .starting = state, context.channel.isActive else {
                channel.close(promise: nil)
                return
            }
            upstream = channel
            channel.write(HTTPClientRequestPart.head(upstreamHead()), promise: nil)
            for part in queued { channel.write(part, promise: nil) }
            queued = []
            channel.flush()
        }
    }

    /// The request as the dev server is asked it: for its own host, for what the proxy can decode
    /// (gzip or nothing: a page is rewritten whatever it comes as), on a connection of its own.
    private func upstreamHead() -> HTTPRequestHead {
        var headers = HopByHop.removed(from: head.headers)
        let upstream = proxy.settings.upstream
        let client = headers["host"].first
        headers.replaceOrAdd(name: "host", value: "\(upstream.host):\(upstream.port)")
        let gzip = head.headers["accept-encoding"].contains { $0.lowercased().contains("gzip") }
        headers.replaceOrAdd(name: "accept-encoding", value: gzip ? "gzip" : "identity")
        headers.replaceOrAdd(name: "connection", value: "close")
        if let client { headers.replaceOrAdd(name: "x-forwarded-host", value: client) }
        headers.replaceOrAdd(name: "x-forwarded-proto", value: "http")
        return HTTPRequestHead(version: .http1_1, method: head.method, uri: head.uri, headers: headers)
    }

    func upstreamPart(_ part: HTTPClientResponsePart) {
        switch (part, state) {
        case (.head(let response), .starting):
            if let sitePath = pageToRewrite(response) {
                state = .reading(response, context.channel.allocator.buffer(capacity: 0), sitePath: sitePath)
            } else {
                state = .streaming
                write(.head(passedOn(response)))
            }
        case (.body(let buffer), .streaming):
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
            if !context.channel.isWritable { upstream?.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in } }
        case (.body(var buffer), .reading(let response, var page, let sitePath)):
            if page.readableBytes + buffer.readableBytes > proxy.settings.maxPageBytes {
                proxy.log.line("warning: \(path): larger than build.max_page_size (\(proxy.settings.maxPageBytes) bytes); passed through as it is")
                state = .streaming
                write(.head(passedOn(response)))
                write(.body(.byteBuffer(page)))
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
            } else {
                page.writeBuffer(&buffer)
                state = .reading(response, page, sitePath: sitePath)
            }
        case (.end, .streaming):
            finish()
        case (.end, .reading(let response, let page, let sitePath)):
            rewrite(response, page, sitePath: sitePath)
        default:
            break
        }
    }

    func upstreamClosed() {
        upstream = nil
        switch state {
        case .starting:
            badGateway("closed the connection without answering")
        case .streaming, .reading:
            // Part of an answer is out: the browser can only be told by the connection closing.
            state = .done
            context.close(promise: nil)
        case .rewriting, .done:
            break
        }
    }

    func clientGone() {
        state = .done
        upstream?.close(promise: nil)
        upstream = nil
    }

    func clientWritabilityChanged(_ writable: Bool) {
        upstream?.setOption(ChannelOptions.autoRead, value: writable).whenComplete { _ in }
    }

    // MARK: Pages

    /// Where the answer is in the site when it is a page a build would rewrite: a GET answered 200,
    /// HTML, CSS or a feed, in an encoding the proxy reads, no larger than `build.max_page_size`.
    private func pageToRewrite(_ response: HTTPResponseHead) -> String? {
        guard head.method == .GET, response.status == .ok, let type = response.headers["content-type"].first,
              let sitePath = proxy.site.sitePath(urlPath: path, contentType: type) else { return nil }
        let encoding = response.headers["content-encoding"].first?.lowercased() ?? "identity"
        guard encoding == "identity" || encoding == "gzip" else {
            proxy.log.line("warning: \(path): sent as \(encoding), which imgbake does not read; passed through as it is")
            return nil
        }
        if let length = response.headers["content-length"].first.flatMap(Int.init), length > proxy.settings.maxPageBytes {
            proxy.log.line("warning: \(path): larger than build.max_page_size (\(proxy.settings.maxPageBytes) bytes); passed through as it is")
            return nil
        }
        return sitePath
    }

    private func rewrite(_ response: HTTPResponseHead, _ page: ByteBuffer, sitePath: String) {
        state = .rewriting
        upstream?.close(promise: nil)
        let bound = NIOLoopBound(self, eventLoop: loop), site = proxy.site, limit = proxy.settings.maxPageBytes, gate = proxy.loops
        let gzip = response.headers["content-encoding"].first?.lowercased() == "gzip"
        // The page moves off the loop as bytes (a ByteBuffer is Sendable; the decoding is the page stage's).
        Task {
            let served = await Exchange.served(page, gzip: gzip, limit: limit, site: site, sitePath: sitePath)
            gate.execute(on: bound.eventLoop) { bound.value.rewritten(response, original: page, served) }
        }
    }

    private func rewritten(_ response: HTTPResponseHead, original: ByteBuffer, _ served: Result<ServedPage, Inflation>) {
        guard case .rewriting = state else { return }
        let milliseconds = ServedSite.milliseconds(since: started)
        let page: ServedPage
        switch served {
        case .success(let rewritten): page = rewritten
        case .failure(let why):
            proxy.log.line("warning: \(path): " + (why == .tooLarge ? "larger than build.max_page_size (\(proxy.settings.maxPageBytes) bytes) once inflated"
                                                                       : "its gzip encoding did not decode") + "; passed through as it is")
            respond(passedOn(response), body: original)
            return
        }
        for diagnostic in page.diagnostics { proxy.log.line(diagnostic.description) }
        var summary = "\(head.method.rawValue) \(head.uri) · \(page.references) reference\(page.references == 1 ? "" : "s")"
        if page.images.cached > 0 { summary += " · \(page.images.cached) cached" }
        if page.images.pending > 0 { summary += " · \(page.images.pending) to make" }
        if page.images.failed > 0 { summary += " · \(page.images.failed) failed" }
        if page.remembered { summary += " · as before" }
        proxy.log.line(summary + " · \(milliseconds) ms")
        guard let bytes = page.bytes else {
            respond(passedOn(response), body: original)
            return
        }
        var headers = passedOn(response).headers
        for name in ["content-length", "content-encoding", "etag", "last-modified", "content-md5", "digest"] { headers.remove(name: name) }
        headers.replaceOrAdd(name: "cache-control", value: "no-cache")
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        respond(HTTPResponseHead(version: head.version, status: response.status, headers: headers), body: buffer)
    }

    // MARK: Answers

    /// The upstream's answer as the browser gets it: without what described the upstream connection,
    /// and with a redirect to the dev server's own address made one to the proxy.
    private func passedOn(_ response: HTTPResponseHead) -> HTTPResponseHead {
        var headers = HopByHop.removed(from: response.headers)
        if let location = headers["location"].first {
            for origin in proxy.settings.upstream.origins where location.hasPrefix(origin) {
                let rest = String(location.dropFirst(origin.count))
                headers.replaceOrAdd(name: "location", value: rest.isEmpty ? "/" : rest)
                break
            }
        }
        // Without a length, NIO's encoder frames the body as chunks again; for an HTTP/1.0 browser the
        // connection's end is the body's.
        if head.version.major == 1 && head.version.minor == 0 && headers["content-length"].isEmpty && head.method != .HEAD {
            closesAfter = true
        }
        return HTTPResponseHead(version: head.version, status: response.status, headers: headers)
    }

    private func badGateway(_ why: String) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/html; charset=utf-8")
        headers.add(name: "cache-control", value: "no-store")
        respond(.badGateway, headers, body: Array(UpstreamErrorPage.html(proxy.settings, why: why).utf8))
    }

    private func respond(_ status: HTTPResponseStatus, _ headers: HTTPHeaders, body: [UInt8]) {
        var buffer = context.channel.allocator.buffer(capacity: body.count)
        buffer.writeBytes(body)
        respond(HTTPResponseHead(version: head.version, status: status, headers: headers), body: buffer)
    }

    private func respond(_ response: HTTPResponseHead, body: ByteBuffer) {
        var response = response
        response.headers.replaceOrAdd(name: "content-length", value: String(body.readableBytes))
        write(.head(response))
        if head.method != .HEAD && body.readableBytes > 0 { write(.body(.byteBuffer(body))) }
        finish()
    }

    private func write(_ part: HTTPServerResponsePart) {
        context.write(NIOAny(part), promise: nil)
    }

    /// The answer is out: the upstream connection closed, the browser's kept for its next request unless
    /// it asked otherwise.
    private func finish() {
        state = .done
        upstream?.close(promise: nil)
        upstream = nil
        let keepAlive = head.isKeepAlive && !closesAfter, context = NIOLoopBound(self.context, eventLoop: loop)
        self.context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
            if !keepAlive { context.value.close(promise: nil) }
        }
    }

    /// The page rewritten, or why a gzipped one was not.
    private static func served(_ page: ByteBuffer, gzip: Bool, limit: Int, site: ServedSite, sitePath: String) async -> Result<ServedPage, Inflation> {
        let bytes = Array(page.readableBytesView)
        let plain = gzip ? gunzip(bytes, limit: limit) : .success(bytes)
        switch plain {
        case .success(let bytes): return .success(await site.page(bytes, sitePath: sitePath))
        case .failure(let why): return .failure(why)
        }
    }

    enum Inflation: Error {
        case damaged, tooLarge
    }

    /// A gzipped page's bytes: not a whole gzip stream, or more than `limit` bytes, is a failure.
    static func gunzip(_ compressed: [UInt8], limit: Int) -> Result<[UInt8], Inflation> {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = imgbake_gunzip(compressed, compressed.count, limit, &out, &length)
        guard status == 0, let out else { return .failure(status == -2 ? .tooLarge : .damaged) }
        defer { free(out) }
        return .success(Array(UnsafeBufferPointer(start: out, count: length)))
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first { return "\(first.error)" }
        return "\(error)"
    }
}

/// The upstream's side of an exchange: its answer handed to the exchange as it comes.
final class UpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let exchange: Exchange

    init(_ exchange: Exchange) { self.exchange = exchange }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        exchange.upstreamPart(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        exchange.upstreamClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
