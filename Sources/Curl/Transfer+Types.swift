#if canImport(Glibc)
import Glibc
#endif

/// One HTTP(S) GET as the Curl layer sees it: everything that configures the easy handle.
/// Policy (retries, caching, which addresses are allowed) belongs to the caller.
public struct TransferRequest: Sendable {
    public var url: String
    /// Extra request headers, `Name: value`.
    public var headers: [String] = []
    public var userAgent: String = "imgbake"
    public var connectTimeout: Duration = .seconds(10)
    /// Whole transfer, including redirects.
    public var timeout: Duration = .seconds(30)
    /// Abort when slower than `lowSpeedBytesPerSecond` for `lowSpeedTime`.
    public var lowSpeedBytesPerSecond: Int = 1024
    public var lowSpeedTime: Duration = .seconds(15)
    public var maxRedirects: Int = 5
    /// Enforced while the body streams in (CURLOPT_MAXFILESIZE does not stop a chunked body in 7.88).
    public var maxBodyBytes: Int = 50_000_000
    /// curl's `--connect-to` entries, `HOST:PORT:CONNECT_HOST:CONNECT_PORT`.
    public var connectTo: [String] = []
    /// curl's `--resolve` entries, `HOST:PORT:ADDR[,ADDR]...`: what the name resolves to, in that order.
    /// Unlike `connectTo`, the addresses still pass `allowAddress` like any answer from DNS.
    public var resolve: [String] = []
    /// A CA bundle to trust instead of the system's.
    public var caFile: String?
    /// Decides, right before connecting, whether a resolved address may be used (also after redirects).
    public var allowAddress: (@Sendable (ResolvedAddress) -> Bool)?
    /// Called on the transfer thread once a connection to the host is made (or reused), before the
    /// request is sent: the host is reachable, whatever it answers.
    public var connected: (@Sendable () -> Void)?
    /// GET unless said otherwise; PUT, POST and PROPFIND send `body` (DELETE too, when it has one).
    public var method = Method.get
    public var body: [UInt8] = []
    /// Sign with AWS Signature V4 (libcurl's `CURLOPT_AWS_SIGV4`), e.g. `aws:amz:us-east-1:s3`, with
    /// `credentials` as access key and secret. The payload hash header is the caller's to add.
    public var awsSigV4: String?
    /// `user:password` for HTTP basic authentication, or the AWS key pair with `awsSigV4`. Never logged.
    public var credentials: String?

    public init(url: String) { self.url = url }

    public enum Method: String, Sendable {
        case get = "GET", head = "HEAD", put = "PUT"
        /// For a remote cache's maintenance: S3's DeleteObjects, WebDAV's DELETE and PROPFIND (listing).
        case post = "POST", delete = "DELETE", propfind = "PROPFIND"
    }
}

/// The final response of a transfer (after redirects).
public struct TransferResponse: Sendable {
    public var status: Int
    /// Headers of the final response, names lower-cased, in arrival order.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var effectiveURL: String
    /// When the transfer left the session's queue and started.
    public var started: ContinuousClock.Instant
    /// Wall time of the whole transfer.
    public var duration: Duration

    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.last { $0.name == name }?.value
    }
}

/// Why a transfer produced no response.
public enum TransferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The body grew past the cap (checked on Content-Length and while streaming).
    case bodyTooLarge(limit: Int)
    /// The resolved address was refused by `allowAddress`.
    case addressRefused(String)
    /// After the connection was made: the transfer took too long.
    case timedOut(String)
    /// The host's name did not resolve.
    case couldNotResolve(String)
    /// No connection: refused, unreachable, or no answer before the connect timeout.
    case couldNotConnect(String)
    case tooManyRedirects(Int)
    /// The TLS handshake failed or the certificate is not trusted.
    case tls(String)
    /// Any other libcurl error: its code and message.
    case curl(code: Int, message: String)

    public var description: String {
        switch self {
        case .bodyTooLarge(let limit): "response larger than the \(limit)-byte limit"
        case .addressRefused(let address): "refused to connect to private address \(address) (use --allow-private-networks)"
        case .timedOut(let message): "timed out (\(message))"
        case .couldNotResolve(let message): "could not resolve the host (\(message))"
        case .couldNotConnect(let message): "could not connect (\(message))"
        case .tooManyRedirects(let max): "more than \(max) redirects"
        case .tls(let message) where CertificateStore.missing != nil: "TLS failed: \(message)"
        case .tls(let message): "TLS failed (\(message)); a private CA can be trusted with --cacert"
        case .curl(let code, let message): "transfer failed (curl \(code): \(message))"
        }
    }

    /// The host could not be reached at all (its name, or a connection): its other URLs would fail the
    /// same way now.
    public var isUnreachable: Bool {
        switch self {
        case .couldNotResolve, .couldNotConnect: true
        default: false
        }
    }

    /// Worth another attempt: the network or the server may do better next time.
    public var isTransient: Bool {
        switch self {
        case .timedOut, .couldNotConnect, .couldNotResolve: true
        case .curl(let code, _): [18, 52, 55, 56, 16, 92].contains(code) // partial file, empty reply, send/recv errors, HTTP/2
        case .bodyTooLarge, .addressRefused, .tooManyRedirects, .tls: false
        }
    }
}

/// A resolved peer address, as seen right before connecting.
public struct ResolvedAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Hashable { case ipv4, ipv6 }
    public var family: Family
    /// 4 or 16 bytes, network order.
    public var bytes: [UInt8]
    public var port: Int

    public init(family: Family, bytes: [UInt8], port: Int) {
        self.family = family
        self.bytes = bytes
        self.port = port
    }

    /// As people write it: `10.0.0.1`, `::1`, `::ffff:127.0.0.1`, `fe80::1`.
    public var description: String {
        let family = self.family == .ipv4 ? AF_INET : AF_INET6
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard bytes.count == (family == AF_INET ? 4 : 16),
              bytes.withUnsafeBytes({ inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }) != nil
        else { return bytes.map(String.init).joined(separator: ".") }
        return String(cString: text)
    }
}
