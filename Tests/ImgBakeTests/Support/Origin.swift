import Curl
import Foundation
import Glibc

/// The loopback test origin (Tests/Support/origin.py) as a child process: serves Examples/images,
/// counts requests, injects faults. Stopped when the value goes away.
final class Origin: @unchecked Sendable {
    let port: Int
    private let process: Process

    /// The host tests use in URLs; `connectTo` routes it to this origin.
    static let host = "images.test"

    /// Serves Examples/images, then the colour and metadata fixtures, unless `root` says otherwise.
    init(latencyMilliseconds: Int = 0, cacheControl: String? = nil, root: String? = nil,
         tls: (cert: String, key: String)? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let roots = root.map { [$0] } ?? [Paths.images, Paths.fixtures + "/colour", Paths.fixtures + "/metadata"]
        var arguments = ["python3", Paths.origin] + roots.flatMap { ["--root", $0] } + ["--port", "0", "--watch-parent",
                         "--latency-ms", String(latencyMilliseconds)]
        if let cacheControl { arguments += ["--cache-control", cacheControl] }
        if let tls { arguments += ["--tls-cert", tls.cert, "--tls-key", tls.key] }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Byte by byte with read(2) (retrying EINTR): only the first line is ours to take.
        var line = ""
        var byte: UInt8 = 0
        while !line.hasSuffix("\n") {
            let count = Glibc.read(output.fileHandleForReading.fileDescriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { break }
            line += String(decoding: [byte], as: UTF8.self)
        }
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw OriginError(message: "origin did not start: \(line)")
        }
        self.port = port
    }

    deinit {
        // Not waitUntilExit(): it spins a run loop and would block a cooperative thread. The origin
        // exits on SIGTERM at once; Foundation reaps it.
        process.terminate()
    }

    struct OriginError: Error { let message: String }

    /// `--connect-to` entry routing the test host (port 80) here.
    var connectTo: String { "\(Self.host):80:127.0.0.1:\(port)" }

    /// `http://images.test/<path>`.
    func url(_ path: String) -> String { "http://\(Self.host)/\(path)" }

    struct Stats: Decodable {
        let requests_total: Int
        let paths: [String: Int]
        let not_modified: Int
        let max_concurrent: Int
        let by_status: [String: Int]
        let bytes_sent: Int
        /// Headers of the last request to each path, names lower-cased.
        let headers: [String: [String: String]]
    }

    func stats() async throws -> Stats {
        try JSONDecoder().decode(Stats.self, from: try await get("/__stats"))
    }

    func reset() async throws { _ = try await get("/__reset") }

    /// From now on, serve file `to` wherever `name` is asked for.
    func swap(_ name: String, to other: String) async throws { _ = try await get("/__swap?name=\(name)&to=\(other)") }

    /// Through imgbake's own libcurl binding: FoundationNetworking's URLSession leaks a libcurl URL
    /// handle per request, which LeakSanitizer reports (`make sanitize`).
    private static let session = CurlSession(maxConcurrent: 4, maxPerHost: 4)

    private func get(_ path: String) async throws -> Data {
        switch await Self.session.perform(TransferRequest(url: "http://127.0.0.1:\(port)\(path)")) {
        case .success(let response): return Data(response.body)
        case .failure(let error): throw error
        }
    }
}
