import Foundation
import ImgBake
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The HTTP proxy `imgbake serve` runs in front of a generator's dev server (docs/serve.md):
///
///     browser ─▶ ProxyHandler ─┬─ <images path>NAME ─▶ ServedSite.image (the cache; pending images made now)
///                              ├─ Upgrade (live reload's websocket) ─▶ Tunnel: bytes both ways, unchanged
///                              └─ anything else ─▶ Exchange ─▶ upstream ─┬─ a page (HTML, CSS, feed): whole,
///                                                                        │  ServedSite.page, then answered
///                                                                        └─ the rest: streamed through
///
/// One event loop per connection carries both sides of it (the browser's and the upstream's), so an
/// exchange is never shared between threads and the upstream is read only as fast as the browser takes
/// what it is sent. Rewriting a page runs on the library's page threads, off the loop.
public final class ProxyServer: Sendable {
    public struct Settings: Sendable {
        public var host = "127.0.0.1"
        public var port = 8080
        public var upstream: Upstream
        /// The command that starts the dev server, named on the error page when it does not answer.
        public var command: [String] = []
        /// Pages larger than this are streamed through unchanged (`build.max_page_size`).
        public var maxPageBytes = 16 << 20

        public init(upstream: Upstream) { self.upstream = upstream }
    }

    /// The dev server, as the proxy connects to it.
    public struct Upstream: Sendable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// As URLs the dev server writes name it (in a redirect's `Location`, say).
        var origins: [String] { ServedSite.names(ofHost: host).map { "http://\($0):\(port)" } }
        var description: String { "http://\(host):\(port)" }
    }

    let settings: Settings
    let site: ServedSite
    let log: ServeLog
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let gate: LoopGate

    /// Starts listening; `stop` ends it.
    public init(_ settings: Settings, site: ServedSite, log: ServeLog) async throws {
        self.settings = settings
        self.site = site
        self.log = log
        // Two loops: the proxy's work per request is small next to the dev server's and libvips'.
        group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let context = ProxyContext(settings: settings, site: site, log: log, loops: LoopGate(),
                                   upstream: TCPUpstream(settings.upstream))
        gate = context.loops
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // NIO's own server pipeline: its decoder tells its encoder which requests were HEADs,
                        // whose answers carry no body, however the upstream framed them.
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: false)
                        try pipeline.addHandler(ProxyHandler(context))
                    }
                }
                .bind(host: settings.host, port: settings.port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// The port the proxy listens on (the one asked for, or the one given for port 0).
    public var port: Int { channel.localAddress?.port ?? settings.port }

    public func stop() async {
        try? await channel.close()
        gate.close()
        try? await group.shutdownGracefully()
    }
}

/// What every connection's handler shares.
struct ProxyContext: Sendable {
    let settings: ProxyServer.Settings
    let site: ServedSite
    let log: ServeLog
    let loops: LoopGate
    let upstream: any UpstreamConnecting
}

/// How an exchange reaches the dev server: a connection of its own on the browser connection's event
/// loop, its pipeline made by `initialize` on that loop. A seam, so the handlers are tested on NIO's
/// testing channels (a bootstrap needs a real loop).
protocol UpstreamConnecting: Sendable {
    func connect(on loop: any EventLoop, _ initialize: @escaping @Sendable (any Channel) throws -> Void) -> EventLoopFuture<any Channel>
}

/// The dev server over TCP.
struct TCPUpstream: UpstreamConnecting {
    let address: ProxyServer.Upstream

    init(_ address: ProxyServer.Upstream) { self.address = address }

    func connect(on loop: any EventLoop, _ initialize: @escaping @Sendable (any Channel) throws -> Void) -> EventLoopFuture<any Channel> {
        ClientBootstrap(group: loop)
            .connectTimeout(.seconds(3))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try initialize(channel) } }
            .connect(host: address.host, port: address.port)
    }
}

/// The way back onto an event loop for work done off it (an image made, a page rewritten), closed
/// before the loops shut down: what finishes after that is dropped, as its connection is gone, rather
/// than scheduled on a loop that has stopped (which NIO reports, and will refuse).
final class LoopGate: Sendable {
    private let open = Mutex(true)

    func execute(on loop: any EventLoop, _ work: @escaping @Sendable () -> Void) {
        open.withLock { open in if open { loop.execute(work) } }
    }

    func close() { open.withLock { $0 = false } }
}

/// Lines for the terminal, one per page or image made, each written whole.
public struct ServeLog: Sendable {
    private let write: @Sendable (String) -> Void

    public init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

    public func line(_ text: String) { write(text) }
}
