import Foundation
import ImgBake
import NIOCore
import NIOHTTP1

/// The browser's side of one connection: each request becomes an exchange with the upstream (or an
/// answer from the images path), one at a time (`HTTPServerPipelineHandler` holds pipelined ones back),
/// and an upgrade request (a live reload's websocket) makes the connection a tunnel.
final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let proxy: ProxyContext
    private var exchange: Exchange?
    /// The connection is becoming a tunnel: what is left of the upgrade request is not forwarded.
    private var tunnelling = false

    init(_ proxy: ProxyContext) { self.proxy = proxy }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !tunnelling else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if Tunnel.isUpgrade(head) {
                tunnelling = true
                Tunnel.open(head, from: context, handler: self)
                return
            }
            let exchange = Exchange(head, context: context, proxy: proxy)
            self.exchange = exchange
            exchange.begin()
        case .body(let buffer):
            exchange?.requestBody(buffer)
        case .end:
            exchange?.requestEnd()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        exchange?.clientGone()
        exchange = nil
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        exchange?.clientWritabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A request that does not parse is answered 400 by nobody: the connection is closed.
        context.close(promise: nil)
    }
}

/// Headers that describe one connection, not the message: never passed on (RFC 9110, 7.6.1).
enum HopByHop {
    static let names: Set<String> = ["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
                                     "te", "trailer", "transfer-encoding", "upgrade"]

    static func removed(from headers: HTTPHeaders) -> HTTPHeaders {
        // And whatever `Connection` names.
        let named = Set(headers["connection"].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        var kept = HTTPHeaders()
        for (name, value) in headers where !names.contains(name.lowercased()) && !named.contains(name.lowercased()) {
            kept.add(name: name, value: value)
        }
        return kept
    }
}

/// The answer when the dev server cannot be reached: what the proxy tried, and how to start it. It asks
/// again every second, so the page appears by itself once the dev server is up.
enum UpstreamErrorPage {
    static func html(_ settings: ProxyServer.Settings, why: String) -> String {
        let command = settings.command.isEmpty
            ? "<p>Start your generator's dev server there (for Hugo: <code>hugo server --port \(settings.upstream.port)</code>), or let imgbake start it: <code>imgbake serve -- hugo server</code>.</p>"
            : "<p>It is started by <code>\(escape(settings.command.joined(separator: " ")))</code>; its output is in the terminal.</p>"
        return """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="1">\
        <title>imgbake serve: the dev server does not answer</title></head><body>\
        <h1>502: the dev server does not answer</h1>\
        <p>imgbake serve passes this site through from <code>\(escape(settings.upstream.description))</code>, which \(escape(why)).</p>\
        \(command)<p>This page tries again every second.</p></body></html>
        """
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
