import CShims.Zlib
import Foundation
import ImgBake
import NIOCore
import NIOHTTP1
import NIOPosix

/// One request and its answer, carried out: the decisions are `ExchangeStateMachine`'s, the sockets,
/// tasks and terminal lines here. An image file is asked of the images path (`ServedSite.image`); the
/// rest of the upstream over a connection of its own (on the browser connection's event loop). A page
/// the build would rewrite is read whole, rewritten off the loop (on the page stage's threads, with
/// its inflation) and answered; anything else streams through as it arrives, the upstream read only as
/// fast as the browser takes it.
final class Exchange {
    private let context: ChannelHandlerContext
    private let proxy: ProxyContext
    private let started = ContinuousClock.now
    private var machine: ExchangeStateMachine
    private var upstream: (any Channel)?

    init(_ head: HTTPRequestHead, context: ChannelHandlerContext, proxy: ProxyContext) {
        self.context = context
        self.proxy = proxy
        let site = proxy.site
        machine = ExchangeStateMachine(head, settings: ExchangeStateMachine.Settings(
            proxy: proxy.settings, imagesPath: site.imagesPath, sitePath: { site.sitePath(urlPath: $0, contentType: $1) }))
    }

    private var loop: any EventLoop { context.eventLoop }

    func begin() { perform(machine.begin()) }

    func requestBody(_ buffer: ByteBuffer) { perform(machine.requestPart(.body(.byteBuffer(buffer)))) }

    func requestEnd() { perform(machine.requestPart(.end(nil))) }

    func upstreamPart(_ part: HTTPClientResponsePart) { perform(machine.upstreamPart(part)) }

    func upstreamClosed() {
        upstream = nil
        perform(machine.upstreamClosed())
    }

    func clientGone() { perform(machine.clientGone()) }

    func clientWritabilityChanged(_ writable: Bool) { perform(machine.clientWritabilityChanged(writable)) }

    // MARK: Carrying out

    private func perform(_ actions: [ExchangeStateMachine.Action]) {
        for action in actions {
            switch action {
            case .askImages(let name): askImages(name)
            case .connect: connect()
            case .sendUpstream(let parts):
                guard let upstream else { continue }
                for part in parts { upstream.write(part, promise: nil) }
                upstream.flush()
            case .write(let part): context.write(NIOAny(part), promise: nil)
            case .forwardBody(let buffer):
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
                if !context.channel.isWritable { upstream?.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in } }
            case .readUpstream(let on): upstream?.setOption(ChannelOptions.autoRead, value: on).whenComplete { _ in }
            case .rewrite(let sitePath, let page, let gzip): rewrite(page, gzip: gzip, sitePath: sitePath)
            case .end(let keepAlive):
                let context = NIOLoopBound(self.context, eventLoop: loop)
                self.context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
                    if !keepAlive { context.value.close(promise: nil) }
                }
            case .closeUpstream:
                upstream?.close(promise: nil)
                upstream = nil
            case .closeClient: context.close(promise: nil)
            case .log(let line): proxy.log.line(line)
            }
        }
    }

    /// The images path's answer, read on the page stage's threads (a blob read blocks).
    private func askImages(_ name: String) {
        let bound = NIOLoopBound(self, eventLoop: loop), site = proxy.site, gate = proxy.loops
        Task {
            let answer = await site.image(named: name)
            gate.execute(on: bound.eventLoop) { bound.value.perform(bound.value.machine.imagesAnswered(answer)) }
        }
    }

    private func connect() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        proxy.upstream.connect(on: loop) { channel in
            try channel.pipeline.syncOperations.addHTTPClientHandlers()
            try channel.pipeline.syncOperations.addHandler(UpstreamHandler(bound.value))
        }.whenComplete { result in bound.value.connected(result) }
    }

    private func connected(_ result: Result<any Channel, any Error>) {
        switch result {
        case .failure(let error):
            perform(machine.connected(error: Self.describe(error)))
        case .success(let channel):
            upstream = channel
            perform(machine.connected(error: nil))
        }
    }

    /// The page rewritten off the loop: its bytes leave as a ByteBuffer (Sendable); inflating and
    /// rewriting them is the page stage's work.
    private func rewrite(_ page: ByteBuffer, gzip: Bool, sitePath: String) {
        let bound = NIOLoopBound(self, eventLoop: loop), site = proxy.site, limit = proxy.settings.maxPageBytes, gate = proxy.loops
        let started = self.started
        Task {
            let outcome: ExchangeStateMachine.Rewritten
            switch await site.onPageThreads({ Exchange.plain(page, gzip: gzip, limit: limit) }) {
            case .success(let bytes):
                let served = await site.page(bytes, sitePath: sitePath)
                outcome = .page(served, milliseconds: ServedSite.milliseconds(since: started))
            case .failure(let why):
                outcome = .undecodable(tooLarge: why == .tooLarge)
            }
            gate.execute(on: bound.eventLoop) { bound.value.perform(bound.value.machine.rewritten(outcome)) }
        }
    }

    /// A page's bytes as sent, inflated when gzipped. Blocking.
    static func plain(_ page: ByteBuffer, gzip: Bool, limit: Int) -> Result<[UInt8], Inflation> {
        let bytes = Array(page.readableBytesView)
        return gzip ? gunzip(bytes, limit: limit) : .success(bytes)
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
