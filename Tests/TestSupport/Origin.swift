import Curl
import Foundation
import Glibc
@testable import ImgBake

/// The loopback test origin (Tests/Support/origin.py) as a child process: serves Examples/images,
/// counts requests, injects faults. Stopped when the value goes away.
package final class Origin: @unchecked Sendable {
    package let port: Int
    /// Its own process (in a network namespace), or one forked by the zygote.
    private let process: ChildProcess?
    private let forked: pid_t?
    /// The network namespace it runs in, if not the test's own.
    package let namespace: NetworkNamespace?

    /// The host tests use in URLs; `connectTo` routes it to this origin.
    package static let host = "images.test"

    /// Serves Examples/images, then the colour and metadata fixtures, unless `root` says otherwise; then
    /// `extraRoots`.
    /// In `namespace`, it listens on `bind` (port 80 unless `port` says otherwise).
    package init(latencyMilliseconds: Int = 0, cacheControl: String? = nil, root: String? = nil, extraRoots: [String] = [],
         tls: (cert: String, key: String)? = nil, bind: [String] = [], port: Int? = nil,
         namespace: NetworkNamespace? = nil) throws {
        self.namespace = namespace
        let roots = (root.map { [$0] } ?? [Paths.images, Paths.fixtures + "/colour", Paths.fixtures + "/metadata"]) + extraRoots
        var arguments = roots.flatMap { ["--root", $0] }
            + ["--port", String(port ?? (namespace == nil ? 0 : 80)), "--watch-parent", "--latency-ms", String(latencyMilliseconds)]
        if let cacheControl { arguments += ["--cache-control", cacheControl] }
        if let tls { arguments += ["--tls-cert", tls.cert, "--tls-key", tls.key] }
        arguments += bind.flatMap { ["--bind", $0] }
        guard let namespace else {
            (self.port, forked) = try OriginZygote.shared.get().start(arguments)
            process = nil
            return
        }
        let process = try ChildProcess("/usr/bin/env", namespace.exec + ["python3", Paths.origin] + arguments, stdout: .pipe)
        let line = readLine(process.stdout!)
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw OriginError(message: "origin did not start: \(line)")
        }
        self.port = port
        self.process = process
        forked = nil
    }

    deinit {
        // terminate() waits for the child on a thread of its own, not this (maybe cooperative) one; a
        // forked origin is reaped by the kernel (the zygote ignores SIGCHLD).
        process?.terminate()
        if let forked { kill(forked, SIGTERM) }
    }

    package struct OriginError: Error {
        package let message: String
        package init(message: String) { self.message = message }
    }

    /// `--connect-to` entry routing the test host (port 80) here.
    package var connectTo: String { "\(Self.host):80:127.0.0.1:\(port)" }

    /// `http://images.test/<path>`.
    package func url(_ path: String) -> String { "http://\(Self.host)/\(path)" }

    package struct Stats: Decodable {
        package let requests_total: Int
        package let paths: [String: Int]
        package let not_modified: Int
        package let max_concurrent: Int
        package let by_status: [String: Int]
        package let bytes_sent: Int
        /// Headers of the last request to each path, names lower-cased.
        package let headers: [String: [String: String]]
    }

    package func stats() async throws -> Stats {
        try JSONDecoder().decode(Stats.self, from: try await get("/__stats"))
    }

    package func reset() async throws { _ = try await get("/__reset") }

    /// From now on, serve file `to` wherever `name` is asked for.
    package func swap(_ name: String, to other: String) async throws { _ = try await get("/__swap?name=\(name)&to=\(other)") }

    /// For the control paths: imgbake's own client, bounded in time (URLSession on Linux has had hangs
    /// under concurrent use, and the suite asks many origins for their counts at once).
    private static let control = CurlSession(maxConcurrent: 16, maxPerHost: 4)

    private func get(_ path: String) async throws -> Data {
        if let namespace {
            let result = try await run(namespace.exec + ["curl", "-sS", "--max-time", "30", "http://127.0.0.1:\(port)\(path)"], in: "/")
            return Data(result.stdout.utf8)
        }
        var request = TransferRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.timeout = .seconds(30)
        switch await Self.control.perform(request) {
        case .success(let response) where response.status == 200: return Data(response.body)
        case .success(let response): throw OriginError(message: "\(path): HTTP \(response.status)")
        case .failure(let error): throw OriginError(message: "\(path): \(error)")
        }
    }
}

/// One Python process that forks a test origin for each `Origin` (origin.py `--zygote`): starting
/// Python and importing http.server took 0.2 s of CPU per origin on the 2-core machines, about 40 s
/// of a whole test run; a fork takes a millisecond. Started by the first origin a test process needs.
final class OriginZygote: @unchecked Sendable {
    static let shared = Result { try OriginZygote() }

    private let process: ChildProcess
    private let lock = NSLock()

    private init() throws {
        process = try ChildProcess("/usr/bin/env", ["python3", Paths.origin, "--zygote"], stdout: .pipe, stdinPipe: true)
        let line = readLine(process.stdout!)
        guard line == "ZYGOTE\n" else { throw Origin.OriginError(message: "origin zygote did not start: \(line)") }
    }

    /// Forks an origin with `arguments` (origin.py's); its port and process id.
    func start(_ arguments: [String]) throws -> (port: Int, pid: pid_t) {
        let request = try JSONSerialization.data(withJSONObject: arguments) + Data("\n".utf8)
        lock.lock()
        defer { lock.unlock() }
        if let failure = request.withUnsafeBytes({ AtomicFile.writeAll(process.stdin!, $0) }) {
            throw Origin.OriginError(message: "origin zygote: cannot write (\(failure))")
        }
        let line = readLine(process.stdout!)
        let fields = line.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard fields.count == 3, fields[0] == "PORT", let port = Int(fields[1]), let pid = pid_t(fields[2]) else {
            throw Origin.OriginError(message: "origin did not start: \(line)")
        }
        return (port, pid)
    }
}

/// One line from `fd`, byte by byte with read(2) (retrying EINTR): what follows it is not ours to take.
func readLine(_ fd: Int32) -> String {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while line.last != 0x0A {
        let count = Glibc.read(fd, &byte, 1)
        if count < 0 && errno == EINTR { continue }
        guard count == 1 else { break }
        line.append(byte)
    }
    return String(decoding: line, as: UTF8.self)
}
