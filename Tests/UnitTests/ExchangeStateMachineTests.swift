@testable import ImgBake
import NIOCore
import NIOHTTP1
import Testing
@testable import ImgBakeServe

/// The proxy's decisions for one request, event by event, without a socket: what is asked where, what
/// the browser is sent, when each connection closes, what the terminal is told.
@Suite struct ExchangeStateMachineTests {
    typealias Machine = ExchangeStateMachine
    typealias Action = ExchangeStateMachine.Action

    static func machine(_ method: HTTPMethod = .GET, _ uri: String = "/posts/a/", version: HTTPVersion = .http1_1,
                        headers: [(String, String)] = [("host", "localhost:8080"), ("accept-encoding", "gzip, br")],
                        maxPageBytes: Int = 1000) -> Machine {
        var settings = ProxyServer.Settings(upstream: ProxyServer.Upstream(host: "127.0.0.1", port: 1313))
        settings.maxPageBytes = maxPageBytes
        let head = HTTPRequestHead(version: version, method: method, uri: uri, headers: HTTPHeaders(headers))
        return Machine(head, settings: Machine.Settings(proxy: settings, imagesPath: "/_img/", sitePath: { path, type in
            type.hasPrefix("text/html") ? (path.hasSuffix("/") ? String(path.dropFirst()) + "index.html" : String(path.dropFirst())) : nil
        }))
    }

    /// A machine whose request is with the upstream (connected, its head sent).
    static func upstreamAsked(_ method: HTTPMethod = .GET, _ uri: String = "/posts/a/", version: HTTPVersion = .http1_1,
                              maxPageBytes: Int = 1000) -> Machine {
        var machine = machine(method, uri, version: version, maxPageBytes: maxPageBytes)
        _ = machine.begin()
        _ = machine.connected(error: nil)
        return machine
    }

    static func response(_ headers: [(String, String)], status: HTTPResponseStatus = .ok) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(headers))
    }

    static func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// The head the browser was sent, from a list of actions.
    static func sentHead(_ actions: [Action]) -> HTTPResponseHead? {
        for case .write(.head(let head)) in actions { return head }
        return nil
    }

    static func page(_ bytes: String?, references: Int = 1) -> ServedPage {
        var page = ServedPage()
        page.bytes = bytes.map { Array($0.utf8) }
        page.references = references
        return page
    }

    // MARK: Where a request goes

    @Test func anImageFileIsAskedOfTheImagesPath() {
        var machine = Self.machine(.GET, "/_img/coffee-0123456789-640.webp?v=1")
        #expect(machine.begin() == [.askImages(name: "coffee-0123456789-640.webp")])
    }

    @Test func anImageNameIsPercentDecoded() {
        var machine = Self.machine(.HEAD, "/_img/caf%C3%A9-0123456789-640.webp")
        #expect(machine.begin() == [.askImages(name: "café-0123456789-640.webp")])
    }

    @Test func aPostToTheImagesPathGoesUpstream() {
        var machine = Self.machine(.POST, "/_img/form")
        #expect(machine.begin() == [.connect])
    }

    @Test func anythingElseGoesUpstream() {
        var machine = Self.machine(.GET, "/posts/a/")
        #expect(machine.begin() == [.connect])
    }

    @Test func anImageThePathDoesNotHaveGoesUpstreamWithTheRequestsEnd() {
        var machine = Self.machine(.GET, "/_img/theirs.png")
        _ = machine.begin()
        #expect(machine.requestPart(.end(nil)) == [], "held while the images path is asked")
        #expect(machine.imagesAnswered(nil) == [.connect])
        let actions = machine.connected(error: nil)
        guard case .sendUpstream(let parts)? = actions.first, actions.count == 1 else { Issue.record("\(actions)"); return }
        #expect(parts.count == 2 && parts.last == .end(nil))
    }

    // MARK: Answers from the images path

    @Test func aFileIsAnsweredWholeAndKeptForAYear() {
        var machine = Self.machine(.GET, "/_img/a-0123456789-640.webp")
        _ = machine.begin()
        let actions = machine.imagesAnswered(.file(bytes: [1, 2, 3], contentType: "image/webp", immutable: true))
        let head = Self.sentHead(actions)
        #expect(head?.status == .ok && head?.headers["content-length"] == ["3"] && head?.headers["content-type"] == ["image/webp"])
        #expect(head?.headers["cache-control"] == ["public, max-age=31536000, immutable"])
        #expect(actions.contains(.write(.body(.byteBuffer(ByteBuffer(bytes: [1, 2, 3]))))))
        #expect(actions.suffix(2) == [.closeUpstream, .end(keepAlive: true)])
        // The exchange is over: a request part after the answer goes nowhere.
        #expect(machine.requestPart(.end(nil)) == [])
    }

    @Test func aPendingImageIsNotKeptByTheBrowser() {
        var machine = Self.machine(.GET, "/_img/pending/abc")
        _ = machine.begin()
        let head = Self.sentHead(machine.imagesAnswered(.file(bytes: [1], contentType: "image/jpeg", immutable: false)))
        #expect(head?.headers["cache-control"] == ["no-cache"])
    }

    @Test func aHeadRequestGetsTheLengthButNoBody() {
        var machine = Self.machine(.HEAD, "/_img/a-0123456789-640.webp")
        _ = machine.begin()
        let actions = machine.imagesAnswered(.file(bytes: [1, 2, 3], contentType: "image/webp", immutable: true))
        #expect(Self.sentHead(actions)?.headers["content-length"] == ["3"])
        #expect(!actions.contains { if case .write(.body) = $0 { true } else { false } })
    }

    @Test func aFailedImageRedirectsToWhereThePagePointed() {
        var machine = Self.machine(.GET, "/_img/pending/abc")
        _ = machine.begin()
        let head = Self.sentHead(machine.imagesAnswered(.redirect(to: "https://img.test/a.jpg")))
        #expect(head?.status == .found && head?.headers["location"] == ["https://img.test/a.jpg"] && head?.headers["cache-control"] == ["no-store"])
    }

    @Test func aMissingFileIs404AndSaidInTheTerminal() {
        var machine = Self.machine(.GET, "/_img/gone.webp")
        _ = machine.begin()
        let actions = machine.imagesAnswered(.missing("gone.webp: its blob is gone"))
        #expect(actions.first == .log("warning: gone.webp: its blob is gone"))
        #expect(Self.sentHead(actions)?.status == .notFound)
    }

    // MARK: The upstream connection

    @Test func theUpstreamIsAskedForItsOwnHostOnAConnectionOfItsOwn() {
        var machine = Self.machine(headers: [("host", "localhost:8080"), ("accept-encoding", "gzip, br"), ("connection", "keep-alive, x-trace"),
                                             ("x-trace", "1"), ("cookie", "a=b")])
        _ = machine.begin()
        let actions = machine.connected(error: nil)
        guard case .sendUpstream(let parts)? = actions.first, case .head(let head)? = parts.first else { Issue.record("\(actions)"); return }
        #expect(head.headers["host"] == ["127.0.0.1:1313"] && head.headers["x-forwarded-host"] == ["localhost:8080"])
        #expect(head.headers["accept-encoding"] == ["gzip"], "only what the proxy decodes")
        #expect(head.headers["connection"] == ["close"] && head.headers["x-trace"].isEmpty, "hop-by-hop headers are not passed on")
        #expect(head.headers["cookie"] == ["a=b"] && head.version == .http1_1)
    }

    @Test func withoutGzipThePageIsAskedForPlain() {
        var machine = Self.machine(headers: [("host", "localhost:8080")])
        _ = machine.begin()
        guard case .sendUpstream(let parts)? = machine.connected(error: nil).first, case .head(let head)? = parts.first else { Issue.record(); return }
        #expect(head.headers["accept-encoding"] == ["identity"])
    }

    @Test func aRequestBodyIsHeldUntilTheUpstreamIsUpThenSentInOrder() {
        var machine = Self.machine(.POST, "/search")
        _ = machine.begin()
        #expect(machine.requestPart(.body(.byteBuffer(Self.buffer("a")))) == [])
        #expect(machine.requestPart(.body(.byteBuffer(Self.buffer("b")))) == [])
        guard case .sendUpstream(let parts)? = machine.connected(error: nil).first else { Issue.record(); return }
        #expect(parts.dropFirst() == [.body(.byteBuffer(Self.buffer("a"))), .body(.byteBuffer(Self.buffer("b")))])
        #expect(machine.requestPart(.end(nil)) == [.sendUpstream([.end(nil)])], "once up, sent as it comes")
    }

    @Test func anUpstreamThatDoesNotAnswerIs502WithAPageThatTriesAgain() {
        var machine = Self.machine()
        _ = machine.begin()
        let actions = machine.connected(error: "connection refused")
        #expect(actions.first == .log("GET /posts/a/ · 502: http://127.0.0.1:1313 does not answer (connection refused)"))
        let head = Self.sentHead(actions)
        #expect(head?.status == .badGateway && head?.headers["cache-control"] == ["no-store"])
        #expect(actions.contains { if case .write(.body(.byteBuffer(let body))) = $0 { String(buffer: body).contains("http-equiv=\"refresh\"") } else { false } })
    }

    @Test func anUpstreamThatClosesBeforeAnsweringIs502() {
        var machine = Self.upstreamAsked()
        #expect(Self.sentHead(machine.upstreamClosed())?.status == .badGateway)
    }

    @Test func aConnectionMadeAfterTheBrowserLeftIsClosed() {
        var machine = Self.machine()
        _ = machine.begin()
        #expect(machine.clientGone() == [.closeUpstream])
        #expect(machine.connected(error: nil) == [.closeUpstream])
        #expect(machine.connected(error: "refused") == [], "nothing to close, nobody to tell")
    }

    // MARK: Streaming

    @Test func anythingButAPageStreamsThrough() {
        var machine = Self.upstreamAsked(.GET, "/app.js")
        let actions = machine.upstreamPart(.head(Self.response([("content-type", "text/javascript"), ("content-length", "2"), ("connection", "close")])))
        let head = Self.sentHead(actions)
        #expect(head?.headers["content-length"] == ["2"] && head?.headers["connection"].isEmpty == true)
        #expect(machine.upstreamPart(.body(Self.buffer("ok"))) == [.forwardBody(Self.buffer("ok"))])
        #expect(machine.upstreamPart(.end(nil)) == [.closeUpstream, .end(keepAlive: true)])
    }

    @Test func aRedirectToTheDevServerBecomesOneToTheProxy() {
        var machine = Self.upstreamAsked(.GET, "/posts")
        let head = Self.sentHead(machine.upstreamPart(.head(Self.response([("location", "http://127.0.0.1:1313/posts/")], status: .movedPermanently))))
        #expect(head?.headers["location"] == ["/posts/"])
    }

    @Test func anHTTP10BrowserWithoutALengthHasItsConnectionClosedAfter() {
        var machine = Self.upstreamAsked(.GET, "/app.js", version: .http1_0)
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/javascript")])))
        #expect(machine.upstreamPart(.end(nil)) == [.closeUpstream, .end(keepAlive: false)])
    }

    @Test func theBrowserFillingUpStopsReadingTheUpstream() {
        let machine = Self.upstreamAsked(.GET, "/video.mp4")
        #expect(machine.clientWritabilityChanged(false) == [.readUpstream(false)])
        #expect(machine.clientWritabilityChanged(true) == [.readUpstream(true)])
        #expect(Self.machine().clientWritabilityChanged(false) == [], "no upstream yet")
    }

    @Test func anUpstreamClosingMidAnswerClosesTheBrowsersConnection() {
        var machine = Self.upstreamAsked(.GET, "/app.js")
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/javascript")])))
        #expect(machine.upstreamClosed() == [.closeClient])
        #expect(machine.upstreamPart(.body(Self.buffer("late"))) == [], "nothing after the end")
    }

    // MARK: Pages

    @Test func aPageIsReadWholeThenRewritten() {
        var machine = Self.upstreamAsked()
        #expect(machine.upstreamPart(.head(Self.response([("content-type", "text/html; charset=utf-8")]))) == [], "nothing sent yet")
        #expect(machine.upstreamPart(.body(Self.buffer("<img "))) == [])
        #expect(machine.upstreamPart(.body(Self.buffer("src=a.jpg>"))) == [])
        #expect(machine.requestPart(.end(nil)) == [.sendUpstream([.end(nil)])])
        #expect(machine.upstreamPart(.end(nil)) == [.closeUpstream, .rewrite(sitePath: "posts/a/index.html", page: Self.buffer("<img src=a.jpg>"), gzip: false)])
        #expect(machine.requestPart(.end(nil)) == [], "the upstream is done with")
    }

    @Test func aRewrittenPageIsAnsweredWithItsOwnLengthAndNotCached() {
        var machine = Self.upstreamAsked()
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/html"), ("content-encoding", "gzip"), ("etag", "\"x\""),
                                                      ("content-length", "30")])))
        let rewrite = machine.upstreamPart(.end(nil))
        #expect(rewrite.last == .rewrite(sitePath: "posts/a/index.html", page: ByteBuffer(), gzip: true))
        let actions = machine.rewritten(.page(Self.page("<img src=/_img/a.webp>"), milliseconds: 12))
        #expect(actions.first == .log("GET /posts/a/ · 1 reference · 12 ms"))
        let head = Self.sentHead(actions)
        #expect(head?.headers["content-length"] == ["22"] && head?.headers["content-encoding"].isEmpty == true)
        #expect(head?.headers["etag"].isEmpty == true && head?.headers["cache-control"] == ["no-cache"])
        #expect(actions.suffix(2) == [.closeUpstream, .end(keepAlive: true)])
    }

    @Test func aPageWithNothingToChangeIsAnsweredAsItCame() {
        var machine = Self.upstreamAsked()
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/html"), ("etag", "\"x\"")])))
        _ = machine.upstreamPart(.body(Self.buffer("<p>hi</p>")))
        _ = machine.upstreamPart(.end(nil))
        let actions = machine.rewritten(.page(Self.page(nil, references: 0), milliseconds: 3))
        #expect(Self.sentHead(actions)?.headers["etag"] == ["\"x\""])
        #expect(actions.contains(.write(.body(.byteBuffer(Self.buffer("<p>hi</p>"))))))
    }

    @Test func thePagesDiagnosticsAndImagesAreSaidInTheTerminal() {
        var machine = Self.upstreamAsked()
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/html")])))
        _ = machine.upstreamPart(.end(nil))
        var page = Self.page("<p>x</p>", references: 3)
        page.images.cached = 1
        page.images.pending = 1
        page.images.failed = 1
        page.remembered = true
        page.diagnostics = [Diagnostic(.warning, "<img> without alt", at: SourceLocation(file: "posts/a/index.html", line: 2, column: 1))]
        let logs = machine.rewritten(.page(page, milliseconds: 5)).compactMap { if case .log(let line) = $0 { line } else { nil } }
        #expect(logs == ["posts/a/index.html:2:1: warning: <img> without alt",
                         "GET /posts/a/ · 3 references · 1 cached · 1 to make · 1 failed · as before · 5 ms"])
    }

    @Test func aPageThatDoesNotInflateIsPassedThroughWithAWarning() {
        var machine = Self.upstreamAsked()
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/html"), ("content-encoding", "gzip")])))
        _ = machine.upstreamPart(.body(Self.buffer("not gzip")))
        _ = machine.upstreamPart(.end(nil))
        let actions = machine.rewritten(.undecodable(tooLarge: false))
        #expect(actions.first == .log("warning: /posts/a/: its gzip encoding did not decode; passed through as it is"))
        #expect(Self.sentHead(actions)?.headers["content-encoding"] == ["gzip"])
        #expect(machine.rewritten(.undecodable(tooLarge: true)) == [], "once only")
    }

    @Test func aPageInAnEncodingImgbakeDoesNotReadStreamsThrough() {
        var machine = Self.upstreamAsked()
        let actions = machine.upstreamPart(.head(Self.response([("content-type", "text/html"), ("content-encoding", "br")])))
        #expect(actions.first == .log("warning: /posts/a/: sent as br, which imgbake does not read; passed through as it is"))
        #expect(Self.sentHead(actions) != nil)
        #expect(machine.upstreamPart(.body(Self.buffer("x"))) == [.forwardBody(Self.buffer("x"))])
    }

    @Test func aPageLargerThanTheLimitByItsLengthStreamsThrough() {
        var machine = Self.upstreamAsked(maxPageBytes: 10)
        let actions = machine.upstreamPart(.head(Self.response([("content-type", "text/html"), ("content-length", "11")])))
        #expect(actions.first == .log("warning: /posts/a/: larger than build.max_page_size (10 bytes); passed through as it is"))
        #expect(Self.sentHead(actions) != nil)
    }

    @Test func aPageThatGrowsPastTheLimitIsPassedOnFromWhereItGot() {
        var machine = Self.upstreamAsked(maxPageBytes: 10)
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/html")])))
        #expect(machine.upstreamPart(.body(Self.buffer("123456"))) == [])
        let actions = machine.upstreamPart(.body(Self.buffer("7890ab")))
        #expect(actions.count == 4 && actions.first == .log("warning: /posts/a/: larger than build.max_page_size (10 bytes); passed through as it is"))
        #expect(Array(actions.dropFirst(2)) == [.write(.body(.byteBuffer(Self.buffer("123456")))), .forwardBody(Self.buffer("7890ab"))])
        #expect(machine.upstreamPart(.end(nil)) == [.closeUpstream, .end(keepAlive: true)])
    }

    @Test func onlyAGetAnswered200IsRewritten() {
        var head = Self.upstreamAsked(.HEAD)
        #expect(Self.sentHead(head.upstreamPart(.head(Self.response([("content-type", "text/html")])))) != nil)
        var notFound = Self.upstreamAsked()
        #expect(Self.sentHead(notFound.upstreamPart(.head(Self.response([("content-type", "text/html")], status: .notFound)))) != nil)
        var image = Self.upstreamAsked(.GET, "/logo.png")
        #expect(Self.sentHead(image.upstreamPart(.head(Self.response([("content-type", "image/png")])))) != nil)
    }

    @Test func theBrowserLeavingWhileAPageIsRewrittenDropsTheAnswer() {
        var machine = Self.upstreamAsked()
        _ = machine.upstreamPart(.head(Self.response([("content-type", "text/html")])))
        _ = machine.upstreamPart(.end(nil))
        #expect(machine.clientGone() == [.closeUpstream])
        #expect(machine.rewritten(.page(Self.page("<p>x</p>"), milliseconds: 1)) == [])
    }

    @Test func aRequestThatAsksToCloseHasItsConnectionClosedAfterTheAnswer() {
        var machine = Self.machine(.GET, "/_img/a.webp", headers: [("connection", "close")])
        _ = machine.begin()
        #expect(machine.imagesAnswered(.redirect(to: "/a.jpg")).last == .end(keepAlive: false))
    }
}
