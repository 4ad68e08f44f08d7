import NIOCore
import NIOHTTP1

/// An upgrade request (Hugo's and Eleventy's live reload over a websocket at the proxy's address) is
/// passed to the upstream as it came, and from then on the two connections are glued: bytes both ways,
/// unchanged, until either side closes. The proxy speaks no websocket; whatever the dev server upgrades
/// to works.
enum Tunnel {
    static func isUpgrade(_ head: HTTPRequestHead) -> Bool {
        !head.headers["upgrade"].isEmpty
            && head.headers["connection"].contains { $0.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "upgrade" } }
    }

    /// Connects to the upstream, sends it the request's head, then glues the two connections.
    static func open(_ head: HTTPRequestHead, from context: ChannelHandlerContext, handler: ProxyHandler) {
        let loop = context.eventLoop, upstream = handler.proxy.settings.upstream
        let (browserSide, upstreamSide) = GlueHandler.pair()
        let boundBrowserSide = NIOLoopBound(browserSide, eventLoop: loop), boundUpstreamSide = NIOLoopBound(upstreamSide, eventLoop: loop)
        let boundContext = NIOLoopBound(context, eventLoop: loop), boundHandler = NIOLoopBound(handler, eventLoop: loop)
        handler.proxy.upstream.connect(on: loop) { channel in try channel.pipeline.syncOperations.addHandler(boundUpstreamSide.value) }
            .whenComplete { result in
                let context = boundContext.value, handler = boundHandler.value
                switch result {
                case .failure:
                    handler.proxy.log.line("\(head.uri) · upgrade refused: \(upstream.description) does not answer")
                    var response = HTTPResponseHead(version: head.version, status: .badGateway)
                    response.headers.add(name: "content-length", value: "0")
                    response.headers.add(name: "connection", value: "close")
                    context.write(NIOAny(HTTPServerResponsePart.head(response)), promise: nil)
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in boundContext.value.close(promise: nil) }
                case .success(let channel):
                    channel.writeAndFlush(requestBytes(head, upstream: upstream, allocator: channel.allocator), promise: nil)
                    // The glue goes first in the browser's pipeline: from now on it takes every byte read
                    // and writes straight to the socket, and the HTTP handlers behind it see nothing more
                    // (whatever NIO's server pipeline is made of). A websocket client sends nothing before
                    // the upgrade's answer, so the decoder holds no bytes past the request's head.
                    // The pipelining handler holds reads back until an answer is written, which none will be.
                    do {
                        let pipeline = context.pipeline.syncOperations
                        try pipeline.addHandler(boundBrowserSide.value, position: .first)
                        pipeline.removeHandler(try pipeline.handler(type: HTTPServerPipelineHandler.self), promise: nil)
                    } catch {
                        channel.close(promise: nil)
                        context.close(promise: nil)
                    }
                }
            }
    }

    /// The request's head as bytes, for the dev server's own host.
    static func requestBytes(_ head: HTTPRequestHead, upstream: ProxyServer.Upstream, allocator: ByteBufferAllocator) -> ByteBuffer {
        var text = "\(head.method.rawValue) \(head.uri) HTTP/1.1\r\n"
        for (name, value) in head.headers where name.lowercased() != "host" { text += "\(name): \(value)\r\n" }
        text += "Host: \(upstream.host):\(upstream.port)\r\n\r\n"
        return allocator.buffer(string: text)
    }
}

/// One side of two glued connections: what one reads the other writes; one closing closes the other;
/// each reads only while the other can write.
final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var readPending = false

    static func pair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler(), second = GlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The partner may have asked to read before this side was there to take what it reads.
        if let partner, partner.readPending, context.channel.isWritable {
            partner.readPending = false
            partner.context?.read()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.context?.write(data, promise: nil) }

    func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }

    func channelInactive(context: ChannelHandlerContext) { partner?.context?.close(promise: nil) }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let partner, partner.readPending {
            partner.readPending = false
            partner.context?.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        if partner?.context?.channel.isWritable ?? false { context.read() } else { readPending = true }
    }
}
