import Curl
import Foundation
import Glibc

/// Real remote-cache servers on loopback, started by the tests: nginx with WebDAV PUT (Debian's
/// `nginx` package) and moto's S3-compatible server (`Tests/Support/s3server.py`).

/// nginx serving `<url>` = `http://127.0.0.1:<port>/cache` from `storage`, with PUT, DELETE and PROPFIND, under a folder of
/// its own (configuration, pid, logs, temporary files). Stopped when the value goes away.
package final class DAVServer: @unchecked Sendable {
    package enum Fault: Sendable {
        case none
        /// Every request answers 500.
        case serverErrors
        /// GET and HEAD work; PUT answers 403.
        case refuseWrites
    }

    package let port: Int
    package let folder = TemporaryFolder()
    /// Where the objects are (`cas/…`, `ac/…`); give another server's to serve the same objects.
    package let storage: String
    private let process: ChildProcess

    package var url: String { "http://127.0.0.1:\(port)/cache" }

    /// `token`: requests without `Authorization: Bearer <token>` get 401.
    package init(fault: Fault = .none, token: String? = nil, storage: String? = nil) async throws {
        self.storage = storage ?? folder.path + "/root/cache"
        try FileManager.default.createDirectory(atPath: self.storage, withIntermediateDirectories: true)
        var lastError = ""
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            let conf = folder.path + "/nginx.conf"
            try Self.configuration(port: port, prefix: folder.path, storage: self.storage, fault: fault, token: token)
                .write(toFile: conf, atomically: true, encoding: .utf8)
            let nginx = FileManager.default.fileExists(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : "/usr/bin/nginx"
            let process = try ChildProcess(nginx, ["-c", conf, "-p", folder.path + "/", "-e", folder.path + "/error.log"],
                                           stdout: .null, stderr: .null)
            if await waitUntilListening(port: port, process: process) {
                self.port = port
                self.process = process
                return
            }
            process.terminate()
            lastError = (try? String(contentsOfFile: folder.path + "/error.log", encoding: .utf8)) ?? "no error log"
        }
        throw Origin.OriginError(message: "nginx did not start: \(lastError)")
    }

    deinit { stop() }

    /// Fast shutdown (SIGTERM): the master closes every connection and its workers exit.
    package func stop() {
        if process.isRunning { process.terminate() }
    }

    /// Every request for an object so far: method, path, status, from nginx's access log.
    package func requests() -> [(method: String, path: String, status: Int)] {
        let log = (try? String(contentsOfFile: folder.path + "/access.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let open = line.firstIndex(of: "\""), let close = line[line.index(after: open)...].firstIndex(of: "\"") else { return nil }
            let request = line[line.index(after: open)..<close].split(separator: " ")
            let status = line[line.index(after: close)...].split(separator: " ").first.flatMap { Int($0) } ?? 0
            guard request.count >= 2, request[1] != "/" else { return nil } // "/": the start-up probe
            return (String(request[0]), String(request[1]), status)
        }
    }

    /// The stored objects below `storage`, as relative paths (`cas/<sha256>`, `ac/v1/…`).
    package func objects() -> [String] {
        (FileManager.default.subpaths(atPath: storage) ?? []).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: storage + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    static func configuration(port: Int, prefix: String, storage: String, fault: Fault, token: String?) -> String {
        let faultRule = switch fault {
        case .none: ""
        case .serverErrors: "return 500;"
        case .refuseWrites: "limit_except GET HEAD { deny all; }"
        }
        let tokenRule = token.map { "if ($http_authorization != \"Bearer \($0)\") { return 401; }" } ?? ""
        let root = (storage as NSString).deletingLastPathComponent
        let location = "/" + (storage as NSString).lastPathComponent + "/"
        // PROPFIND, for `cache gc --remote`, is in Debian's libnginx-mod-http-dav-ext (the Makefile installs it).
        let davExt = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"
        let hasDavExt = FileManager.default.fileExists(atPath: davExt)
        return """
        \(hasDavExt ? "load_module \(davExt);" : "")
        daemon off;
        \(geteuid() == 0 ? "user root;" : "")
        worker_processes 1;
        pid \(prefix)/nginx.pid;
        error_log \(prefix)/error.log warn;
        events { worker_connections 256; }
        http {
            access_log \(prefix)/access.log;
            client_body_temp_path \(prefix)/body;
            proxy_temp_path \(prefix)/proxy;
            fastcgi_temp_path \(prefix)/fastcgi;
            uwsgi_temp_path \(prefix)/uwsgi;
            scgi_temp_path \(prefix)/scgi;
            client_max_body_size 200m;
            server {
                listen 127.0.0.1:\(port);
                root \(root);
                location \(location) {
                    \(faultRule)
                    \(tokenRule)
                    dav_methods PUT DELETE;
                    \(hasDavExt ? "dav_ext_methods PROPFIND OPTIONS;" : "")
                    create_full_put_path on;
                    dav_access user:rw group:r all:r;
                }
            }
        }
        """
    }
}

/// moto's S3 server with signature checking on, one per test process (it takes seconds to start),
/// shared by tests that each use a key prefix of their own.
package final class S3Server: @unchecked Sendable {
    package let port: Int
    package let accessKey: String
    package let secretKey: String
    package let bucket = "cache"
    private let process: ChildProcess

    private static let instance = SharedStart()

    /// The one server of this test process, started on first use.
    package static func shared() async throws -> S3Server { try await instance.get() }

    package var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Credentials for imgbake, in its environment.
    package var environment: [String: String] { ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey] }

    /// `[cache]` lines for a remote under `prefix`.
    package func cacheTOML(prefix: String) -> String {
        """
        remote = "s3://\(bucket)/\(prefix)"
        remote_endpoint = "\(endpoint)"
        remote_path_style = true
        remote_region = "us-east-1"
        """
    }

    fileprivate init() async throws {
        process = try ChildProcess("/usr/bin/env", ["python3", Paths.root + "/Tests/Support/s3server.py", "--watch-parent"],
                                   stdout: .pipe, stderr: .null)
        let line = await firstLine(of: process.stdout!)
        let parts = line.split(separator: " ")
        guard parts.count == 4, parts[0] == "READY", let port = Int(parts[1]) else {
            process.terminate()
            throw Origin.OriginError(message: "the S3 server did not start (is moto installed? python3 -m pip install 'moto[server]'): \(line)")
        }
        self.port = port
        accessKey = String(parts[2])
        secretKey = String(parts[3])
    }

    private actor SharedStart {
        var task: Task<S3Server, Error>?
        func get() async throws -> S3Server {
            if let task { return try await task.value }
            let task = Task { try await S3Server() }
            self.task = task
            return try await task.value
        }
    }
}

/// `Tests/Support/storeproxy.py` in front of a store: delays every request, counts requests and
/// bytes each way, and answers the next requests with a throttling status when asked to.
package final class StoreProxy: @unchecked Sendable {
    package let port: Int
    private let process: ChildProcess

    package struct Stats: Decodable, Sendable {
        package let requests: Int
        package let bytes_up: Int
        package let bytes_down: Int
        package let by_method: [String: Int]
        package let throttled: Int
        /// Requests that asked for a go-ahead before sending their body ("Expect: 100-continue").
        package let expect_continue: Int
        /// Of those, the ones whose whole body had arrived before the go-ahead was sent.
        package let bodies_before_go_ahead: Int
    }

    package var url: String { "http://127.0.0.1:\(port)" }

    package init(upstream: String, delayMilliseconds: Int = 0) async throws {
        process = try ChildProcess("/usr/bin/env", ["python3", Paths.root + "/Tests/Support/storeproxy.py", "--upstream", upstream,
                                                    "--delay-ms", String(delayMilliseconds), "--watch-parent"],
                                   stdout: .pipe, stderr: .null)
        let line = await firstLine(of: process.stdout!)
        let parts = line.split(separator: " ")
        guard parts.count == 2, parts[0] == "READY", let port = Int(parts[1]) else {
            process.terminate()
            throw Origin.OriginError(message: "the store proxy did not start: \(line)")
        }
        self.port = port
    }

    deinit { if process.isRunning { process.terminate() } }

    package func stats() async throws -> Stats { try JSONDecoder().decode(Stats.self, from: try await control("stats")) }

    package func reset() async throws { _ = try await control("reset") }

    /// The next `count` requests are answered `status` (S3's SlowDown body) without reaching the store.
    package func throttle(next count: Int, status: Int = 503, retryAfter: Int? = nil) async throws {
        _ = try await control("throttle?count=\(count)&status=\(status)" + (retryAfter.map { "&retry_after=\($0)" } ?? ""))
    }

    private func control(_ path: String) async throws -> Data {
        var request = TransferRequest(url: url + "/__proxy/" + path)
        request.timeout = .seconds(30)
        switch await probe.perform(request) {
        case .success(let response) where response.status == 200: return Data(response.body)
        case .success(let response): throw Origin.OriginError(message: "\(path): HTTP \(response.status)")
        case .failure(let error): throw Origin.OriginError(message: "\(path): \(error)")
        }
    }
}

/// A free TCP port on 127.0.0.1 (bound, then released for the server to take).
package func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Origin.OriginError(message: "socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw Origin.OriginError(message: "bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

private let probe = CurlSession(maxConcurrent: 4, maxPerHost: 4)

/// Polls until something answers HTTP on `port` (true), or `process` ends or 15 s pass (false).
private func waitUntilListening(port: Int, process: ChildProcess) async -> Bool {
    for _ in 0..<150 {
        guard process.isRunning else { return false }
        var request = TransferRequest(url: "http://127.0.0.1:\(port)/")
        request.method = .head
        request.timeout = .seconds(2)
        if case .success = await probe.perform(request) { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return false
}

/// The first line a child prints, read on a thread of its own (a server can take seconds to start,
/// which must not hold a cooperative thread).
private func firstLine(of fd: Int32) async -> String {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(returning: readLine(fd).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
