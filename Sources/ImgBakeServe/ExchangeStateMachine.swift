import ImgBake
import NIOCore
import NIOHTTP1

/// One request and its answer, decided: a value whose every event (the browser's request, the images
/// path's answer, the upstream connection and its answer, the rewrite coming back) returns what to do,
/// in the shape swift-nio gives its own protocol state machines. It touches no socket, task or
/// terminal: `Exchange` performs its actions. So every path of the proxy is tested without a socket
/// (`ExchangeStateMachineTests`).
///
///     begin ─▶ askingImages ──(nil)──▶ connecting ─▶ waitingForHead ─┬─▶ streaming ────────────▶ done
///                │                        │                          └─▶ reading ─▶ rewriting ─▶ done
///                └──(file, redirect, 404) └──(refused: 502) ─────────────────────────────────────▶ done
struct ExchangeStateMachine {
    /// What the decisions need of the proxy.
    struct Settings {
        /// The upstream, its command, `build.max_page_size` (a larger page is passed through as it is).
        var proxy: ProxyServer.Settings
        /// Where image files are asked for (`ServedSite.imagesPath`).
        var imagesPath: String
        /// Where an answer is in the site, when it is a page a build would rewrite (`ServedSite.sitePath`).
        var sitePath: (_ urlPath: String, _ contentType: String) -> String?

        var upstream: ProxyServer.Upstream { proxy.upstream }
        var maxPageBytes: Int { proxy.maxPageBytes }
    }

    /// What the exchange does, in order.
    enum Action: Equatable {
        /// Ask the images path for this file (off the event loop); its answer is `imagesAnswered`.
        case askImages(name: String)
        /// Open a connection to the upstream; its outcome is `connected`.
        case connect
        /// Write these parts to the upstream, and flush.
        case sendUpstream([HTTPClientRequestPart])
        /// Write this part to the browser (flushed at the end or by `forwardBody`).
        case write(HTTPServerResponsePart)
        /// Write and flush a body part from the upstream; stop reading the upstream while the browser's
        /// connection is full.
        case forwardBody(ByteBuffer)
        /// Read the upstream again (or not) as the browser's connection drains (or fills).
        case readUpstream(Bool)
        /// Rewrite the page off the loop; its outcome is `rewritten`.
        case rewrite(sitePath: String, page: ByteBuffer, gzip: Bool)
        /// Write the answer's end and flush; then close the browser's connection unless `keepAlive`.
        case end(keepAlive: Bool)
        case closeUpstream
        case closeClient
        case log(String)
    }

    /// What became of a page sent off to be rewritten.
    enum Rewritten {
        case page(ServedPage, milliseconds: Int)
        /// Its gzip encoding did not decode, or it inflated past `build.max_page_size`.
        case undecodable(tooLarge: Bool)
    }

    private enum State {
        /// The images path is asked; request parts wait, for the upstream if it is asked after all.
        case askingImages(queued: [HTTPClientRequestPart])
        case connecting(queued: [HTTPClientRequestPart])
        /// The request is with the upstream.
        case waitingForHead
        /// The upstream's answer goes through as it comes.
        case streaming
        /// A page read whole: its head, its bytes so far, where it is in the site.
        case reading(HTTPResponseHead, ByteBuffer, sitePath: String)
        /// Being rewritten: the head and bytes it came with, answered as they are if the rewrite fails.
        case rewriting(HTTPResponseHead, ByteBuffer)
        case done
    }

    let head: HTTPRequestHead
    private let settings: Settings
    private var state: State
    /// The answer's end is the connection's (HTTP/1.0 without a length): it is closed after.
    private var closesAfter = false

    init(_ head: HTTPRequestHead, settings: Settings) {
        self.head = head
        self.settings = settings
        state = .connecting(queued: [])
    }

    /// The request's path, without its query or fragment.
    var path: String { String(head.uri.prefix { $0 != "?" && $0 != "#" }) }

    // MARK: The request

    /// The request's head arrived: a file of the images path is asked there, anything else upstream.
    mutating func begin() -> [Action] {
        let images = settings.imagesPath
        if head.method == .GET || head.method == .HEAD, images.hasPrefix("/"), path.hasPrefix(images) {
            state = .askingImages(queued: [])
            return [.askImages(name: String(path.dropFirst(images.count)).removingPercentEncoding ?? "")]
        }
        state = .connecting(queued: [])
        return [.connect]
    }

    /// A part of the request's body, or its end: sent on, held until the upstream is up, or dropped
    /// once there is no upstream to take it.
    mutating func requestPart(_ part: HTTPClientRequestPart) -> [Action] {
        switch state {
        case .askingImages(var queued):
            queued.append(part)
            state = .askingImages(queued: queued)
            return []
        case .connecting(var queued):
            queued.append(part)
            state = .connecting(queued: queued)
            return []
        case .waitingForHead, .streaming, .reading:
            return [.sendUpstream([part])]
        case .rewriting, .done:
            return []
        }
    }

    // MARK: The images path

    /// The images path's answer: a file, a redirect or a 404 answered here; nil sends the request upstream.
    mutating func imagesAnswered(_ answer: ServedImage?) -> [Action] {
        guard case .askingImages(let queued) = state else { return [] }
        var headers = HTTPHeaders()
        switch answer {
        case nil:
            state = .connecting(queued: queued)
            return [.connect]
        case .file(let bytes, let contentType, let immutable)?:
            headers.add(name: "content-type", value: contentType)
            headers.add(name: "cache-control", value: immutable ? "public, max-age=31536000, immutable" : "no-cache")
            return respond(.ok, headers, body: bytes)
        case .redirect(let url)?:
            headers.add(name: "location", value: url)
            headers.add(name: "cache-control", value: "no-store")
            return respond(.found, headers, body: [])
        case .missing(let why)?:
            headers.add(name: "content-type", value: "text/plain; charset=utf-8")
            return [.log("warning: \(why)")] + respond(.notFound, headers, body: Array((why + "\n").utf8))
        }
    }

    // MARK: The upstream

    /// The upstream connection is up (`error` nil) or could not be made.
    mutating func connected(error: String?) -> [Action] {
        guard case .connecting(let queued) = state else {
            // The browser left meanwhile: the new connection goes.
            return error == nil ? [.closeUpstream] : []
        }
        if let error {
            return [.log("\(head.method.rawValue) \(head.uri) · 502: \(settings.upstream.description) does not answer (\(error))")]
                + badGateway("does not answer (\(error))")
        }
        state = .waitingForHead
        return [.sendUpstream([.head(upstreamHead())] + queued)]
    }

    /// The request as the dev server is asked it: for its own host, for what the proxy can decode
    /// (gzip or nothing: a page is rewritten whatever it comes as), on a connection of its own.
    func upstreamHead() -> HTTPRequestHead {
        var headers = HopByHop.removed(from: head.headers)
        let upstream = settings.upstream
        let client = headers["host"].first
        headers.replaceOrAdd(name: "host", value: "\(upstream.host):\(upstream.port)")
        let gzip = head.headers["accept-encoding"].contains { $0.lowercased().contains("gzip") }
        headers.replaceOrAdd(name: "accept-encoding", value: gzip ? "gzip" : "identity")
        headers.replaceOrAdd(name: "connection", value: "close")
        if let client { headers.replaceOrAdd(name: "x-forwarded-host", value: client) }
        headers.replaceOrAdd(name: "x-forwarded-proto", value: "http")
        return HTTPRequestHead(version: .http1_1, method: head.method, uri: head.uri, headers: headers)
    }

    /// A part of the upstream's answer.
    mutating func upstreamPart(_ part: HTTPClientResponsePart) -> [Action] {
        switch (part, state) {
        case (.head(let response), .waitingForHead):
            let (sitePath, warning) = pageToRewrite(response)
            if let sitePath {
                state = .reading(response, ByteBuffer(), sitePath: sitePath)
                return []
            }
            state = .streaming
            return (warning.map { [Action.log($0)] } ?? []) + [.write(.head(passedOn(response)))]
        case (.body(let buffer), .streaming):
            return [.forwardBody(buffer)]
        case (.body(var buffer), .reading(let response, var page, let sitePath)):
            guard page.readableBytes + buffer.readableBytes <= settings.maxPageBytes else {
                state = .streaming
                return [.log(tooLarge), .write(.head(passedOn(response))), .write(.body(.byteBuffer(page))), .forwardBody(buffer)]
            }
            page.writeBuffer(&buffer)
            state = .reading(response, page, sitePath: sitePath)
            return []
        case (.end, .streaming):
            return finish()
        case (.end, .reading(let response, let page, let sitePath)):
            state = .rewriting(response, page)
            let gzip = response.headers["content-encoding"].first?.lowercased() == "gzip"
            return [.closeUpstream, .rewrite(sitePath: sitePath, page: page, gzip: gzip)]
        default:
            return []
        }
    }

    /// The upstream connection closed.
    mutating func upstreamClosed() -> [Action] {
        switch state {
        case .waitingForHead:
            return badGateway("closed the connection without answering")
        case .streaming, .reading:
            // Part of an answer is out: the browser can only be told by the connection closing.
            state = .done
            return [.closeClient]
        case .askingImages, .connecting, .rewriting, .done:
            return []
        }
    }

    /// The browser's connection closed: nothing more is answered.
    mutating func clientGone() -> [Action] {
        state = .done
        return [.closeUpstream]
    }

    /// The browser's connection filled up (or drained): the upstream is read only as fast as it takes it.
    func clientWritabilityChanged(_ writable: Bool) -> [Action] {
        switch state {
        case .waitingForHead, .streaming, .reading: [.readUpstream(writable)]
        default: []
        }
    }

    // MARK: Pages

    /// Where the answer is in the site when it is a page a build would rewrite: a GET answered 200,
    /// HTML, CSS or a feed, in an encoding the proxy reads, no larger than `build.max_page_size`; and
    /// the warning when it would be but cannot be.
    func pageToRewrite(_ response: HTTPResponseHead) -> (sitePath: String?, warning: String?) {
        guard head.method == .GET, response.status == .ok, let type = response.headers["content-type"].first,
              let sitePath = settings.sitePath(path, type) else { return (nil, nil) }
        let encoding = response.headers["content-encoding"].first?.lowercased() ?? "identity"
        guard encoding == "identity" || encoding == "gzip" else {
            return (nil, "warning: \(path): sent as \(encoding), which imgbake does not read; passed through as it is")
        }
        if let length = response.headers["content-length"].first.flatMap(Int.init), length > settings.maxPageBytes {
            return (nil, tooLarge)
        }
        return (sitePath, nil)
    }

    private var tooLarge: String {
        "warning: \(path): larger than build.max_page_size (\(settings.maxPageBytes) bytes); passed through as it is"
    }

    /// The rewrite came back: the page as rewritten, or (nothing to change, or undecodable) as it came.
    mutating func rewritten(_ outcome: Rewritten) -> [Action] {
        guard case .rewriting(let response, let original) = state else { return [] }
        switch outcome {
        case .undecodable(let tooLarge):
            let why = tooLarge ? "larger than build.max_page_size (\(settings.maxPageBytes) bytes) once inflated" : "its gzip encoding did not decode"
            return [.log("warning: \(path): \(why); passed through as it is")] + respond(passedOn(response), body: original)
        case .page(let page, let milliseconds):
            let logs = page.diagnostics.map { Action.log($0.description) } + [.log(summary(page, milliseconds: milliseconds))]
            guard let bytes = page.bytes else { return logs + respond(passedOn(response), body: original) }
            var headers = passedOn(response).headers
            for name in ["content-length", "content-encoding", "etag", "last-modified", "content-md5", "digest"] { headers.remove(name: name) }
            headers.replaceOrAdd(name: "cache-control", value: "no-cache")
            return logs + respond(HTTPResponseHead(version: head.version, status: response.status, headers: headers), body: ByteBuffer(bytes: bytes))
        }
    }

    /// The terminal's line for a page served.
    func summary(_ page: ServedPage, milliseconds: Int) -> String {
        var summary = "\(head.method.rawValue) \(head.uri) · \(page.references) reference\(page.references == 1 ? "" : "s")"
        if page.images.cached > 0 { summary += " · \(page.images.cached) cached" }
        if page.images.pending > 0 { summary += " · \(page.images.pending) to make" }
        if page.images.failed > 0 { summary += " · \(page.images.failed) failed" }
        if page.remembered { summary += " · as before" }
        return summary + " · \(milliseconds) ms"
    }

    // MARK: Answers

    /// The upstream's answer as the browser gets it: without what described the upstream connection,
    /// and with a redirect to the dev server's own address made one to the proxy.
    mutating func passedOn(_ response: HTTPResponseHead) -> HTTPResponseHead {
        var headers = HopByHop.removed(from: response.headers)
        if let location = headers["location"].first {
            for origin in settings.upstream.origins where location.hasPrefix(origin) {
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

    private mutating func badGateway(_ why: String) -> [Action] {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/html; charset=utf-8")
        headers.add(name: "cache-control", value: "no-store")
        return respond(.badGateway, headers, body: Array(UpstreamErrorPage.html(settings.proxy, why: why).utf8))
    }

    private mutating func respond(_ status: HTTPResponseStatus, _ headers: HTTPHeaders, body: [UInt8]) -> [Action] {
        respond(HTTPResponseHead(version: head.version, status: status, headers: headers), body: ByteBuffer(bytes: body))
    }

    /// A whole answer: its head with its length, its body (none for HEAD), its end.
    private mutating func respond(_ response: HTTPResponseHead, body: ByteBuffer) -> [Action] {
        var response = response
        response.headers.replaceOrAdd(name: "content-length", value: String(body.readableBytes))
        var actions: [Action] = [.write(.head(response))]
        if head.method != .HEAD && body.readableBytes > 0 { actions.append(.write(.body(.byteBuffer(body)))) }
        return actions + finish()
    }

    /// The answer is out: the upstream connection closed, the browser's kept for its next request unless
    /// it asked otherwise.
    private mutating func finish() -> [Action] {
        state = .done
        return [.closeUpstream, .end(keepAlive: head.isKeepAlive && !closesAfter)]
    }
}
