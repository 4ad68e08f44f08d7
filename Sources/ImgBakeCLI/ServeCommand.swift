import ArgumentParser
#if Serve
import Foundation
import Glibc
import ImgBake
import ImgBakeServe

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Stand in front of a generator's dev server and show its pages with their images as a build makes them.",
        // One paragraph: the manual page is made from it, and groff warns of an empty line (lintian).
        discussion: """
        `imgbake serve --upstream http://127.0.0.1:1313`, or `imgbake serve -- hugo server --port 1313` to start \
        the dev server too. Pages (HTML, CSS, feeds) are rewritten as `imgbake build` writes them; their images \
        come from the cache, and those not in it are made as the pages name them. Everything else, live reload \
        included, passes through. Nothing is written but the cache. See docs/serve.md.
        """)

    @Option(help: ArgumentHelp("The dev server's address (default: 127.0.0.1 and the port of COMMAND).", valueName: "URL"))
    var upstream: String?

    @Option(help: "The port imgbake listens on.")
    var port: Int = 8089

    @Option(help: "The address imgbake listens on (anything but loopback shows the dev server to the network).")
    var host: String = "127.0.0.1"

    @OptionGroup var configOptions: ConfigurationOptions

    @Flag(help: "No network: images missing from the cache keep their URLs.")
    var offline = false

    @Option(name: .customLong("connect-to"), help: ArgumentHelp("Route HOST:PORT to CONNECT_HOST:CONNECT_PORT (curl's --connect-to).", valueName: "HOST:PORT:CONNECT_HOST:CONNECT_PORT"))
    var connectTo: [String] = []

    @Flag(name: .customLong("no-remote"), help: "Do not use the remote cache.")
    var noRemote = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command that starts the dev server (after --).", valueName: "COMMAND"))
    var command: [String] = []

    func validate() throws {
        if upstream == nil && command.isEmpty {
            throw ValidationError("give the dev server's address (--upstream http://127.0.0.1:1313) or the command that starts it (-- hugo server)")
        }
        guard (1...65535).contains(port) else { throw ValidationError("--port \(port): expected 1 to 65535") }
    }

    func run() async throws {
        let upstream = try upstreamURL()
        var config = try configOptions.load(site: ".")
        if offline { config.fetch.policy = .offline }
        if noRemote { config.cache.remote = nil }
        config.fetch.connectTo += connectTo
        if !["127.0.0.1", "::1", "localhost"].contains(host) {
            Terminal.error("imgbake serve: warning: listening on \(host): the dev server and imgbake's cache are open to the network")
        }

        // Ctrl-C, SIGTERM and a closed terminal are imgbake's from now on: the dev server, started once
        // imgbake listens, is stopped with it whenever one comes.
        let (stop, sources) = StopSignal.start()
        defer { for source in sources { source.cancel() } }
        var settings = ProxyServer.Settings(upstream: .init(host: upstream.host, port: upstream.effectivePort))
        settings.host = host
        settings.port = port
        settings.command = command
        settings.maxPageBytes = config.maxPageBytes
        let log = ServeLog { Terminal.error($0) }, proxy = settings, command = self.command
        let status: Int32
        do {
            status = try await ServedSite.using(config, upstream: upstream, announce: log.line) { site in
                let server = try await ProxyServer(proxy, site: site, log: log)
                let child: DevServerProcess?
                do { child = command.isEmpty ? nil : try DevServerProcess(command) } catch {
                    await server.stop()
                    throw error
                }
                Terminal.error("imgbake serve: http://\(host.contains(":") ? "[\(host)]" : host):\(server.port)/ shows \(upstream.hostKey)/ with its images made by imgbake (Ctrl-C stops)")
                let status = await stop.wait(for: child)
                await server.stop()
                await child?.stop()
                let totals = site.totals
                Terminal.error("imgbake serve: \(totals.pages) page(s) served, \(totals.imagesMade) image(s) made, \(totals.imagesFailed) failed")
                return status
            }
        } catch let error as BuildError {
            Terminal.error("imgbake: error: \(error.message)")
            throw ExitCode(error.kind == .usage ? 2 : 1)
        } catch let error as ServeError {
            Terminal.error("imgbake: error: \(error)")
            throw ExitCode(1)
        } catch {
            Terminal.error("imgbake: error: cannot listen on \(host):\(port): \(error)")
            throw ExitCode(1)
        }
        if status != 0 { throw ExitCode(status) }
    }

    private func upstreamURL() throws -> RemoteURL {
        if let upstream {
            guard let url = RemoteURL.resolve(upstream), url.scheme == "http" else {
                throw UsageError("--upstream \(upstream): expected an http:// URL, such as http://127.0.0.1:1313")
            }
            return url
        }
        guard let port = DevServerPort.of(command), let url = RemoteURL.resolve("http://127.0.0.1:\(port)/") else {
            throw UsageError("cannot tell the port \(command.first ?? "the dev server") listens on: give --upstream http://127.0.0.1:PORT")
        }
        return url
    }
}

/// What ends a serve session: Ctrl-C (SIGINT), SIGTERM, the terminal closing (SIGHUP), or the dev
/// server ending by itself (its status becomes imgbake's). Taken from the moment `start` returns, so
/// that one coming while the cache opens still stops the dev server.
struct StopSignal: Sendable {
    private let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    /// The signal, and the sources that feed it: kept (and cancelled) by the caller while it serves.
    static func start() -> (StopSignal, [any DispatchSourceSignal]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { continuation.yield(0) }
            source.resume()
            return source
        }
        return (StopSignal(stream: stream, continuation: continuation), sources)
    }

    func wait(for child: DevServerProcess?) async -> Int32 {
        let watcher = child.map { [continuation] child in Task { continuation.yield(await child.wait()) } }
        defer { watcher?.cancel() }
        for await status in stream { return status }
        return 0
    }
}
#else
/// `imgbake serve` in a build without the `Serve` package trait (`make demo`'s: Package.swift): it
/// says so and how to get one that has it, rather than leaving an unknown command.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Not in this build (made without the Serve package trait): `make build` makes one with it.")

    @Argument(parsing: .allUnrecognized) var arguments: [String] = []

    struct NotBuilt: Error, CustomStringConvertible {
        var description: String {
            "this imgbake was built without `serve` (`make demo` leaves it out); `make build` builds it with `serve`, as every package does"
        }
    }

    func run() throws { throw NotBuilt() }
}
#endif
