import Foundation
import Curl
import Digest

/// What the remote store answered, in the terms the cache cares about.
enum RemoteAnswer: Sendable, Equatable {
    /// GET 200 (the body), HEAD 200 (empty), PROPFIND 207 (the multistatus).
    case found([UInt8])
    /// 404 or 410: a miss.
    case absent
    /// PUT, POST or DELETE 200, 201 or 204.
    case stored
    /// 401 or 403: these credentials may not do this.
    case refused(Int)
    /// 413 or 507: no room.
    case full(Int)
    /// A transport error or any other status (429 and 503 only after their retries).
    case failed(String, unreachable: Bool)
}

/// The objects of the remote cache over plain HTTP(S), on a `CurlSession` of its own (so remote
/// traffic never waits behind, or holds up, origin downloads). S3 requests are signed with AWS
/// Signature V4 by libcurl; HTTP ones carry the token.
///
/// A store that asks to slow down (S3's 503 SlowDown, any 429 or 503) is asked again after a
/// backoff with jitter, `Retry-After` honoured up to `maxRetryAfter`, at most `retries` times; only
/// then is the request a failure, which counts towards giving up on the remote for the build.
final class RemoteStore: Sendable {
    let settings: RemoteSettings
    private let credentials: RemoteCredentials
    private let session: CurlSession
    private let region: String
    private let maxBytes: Int
    /// Retries of one request answered 429 or 503.
    let retries: Int
    /// The first retry's delay; each next one doubles it (with full jitter).
    let backoff: Duration
    static let maxRetryAfter: Duration = .seconds(10)

    static let emptyPayloadHash = Hex.lowercase(SHA256.hash([UInt8]()))

    init(settings: RemoteSettings, credentials: RemoteCredentials, environment: [String: String], maxBlobBytes: Int,
         retries: Int = 4, backoff: Duration = .milliseconds(100)) {
        self.settings = settings
        self.credentials = credentials
        self.retries = retries
        self.backoff = backoff
        region = settings.region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        maxBytes = max(maxBlobBytes, 64 << 20)
        // One host: every slot may go to it. Uploads take at most `settings.uploads` of them.
        session = CurlSession(maxConcurrent: 8, maxPerHost: 8)
    }

    func shutdown() async { await session.shutdown() }

    /// The URL of `object` (a path such as `v2/packs/<sha256>`) under the remote's root.
    func url(of object: String) -> String {
        switch settings.location {
        case .http(let base):
            return base + "/" + object
        case .s3(_, let prefix):
            return bucketURL + "/" + (prefix.isEmpty ? object : prefix + "/" + object)
        }
    }

    /// S3 only: the bucket's URL, path-style or virtual-hosted (no trailing slash).
    var bucketURL: String {
        guard case .s3(let bucket, _) = settings.location else { return "" }
        let endpoint = settings.endpoint ?? "https://s3.\(region).amazonaws.com"
        if settings.pathStyle { return endpoint + "/" + bucket }
        let schemeEnd = endpoint.range(of: "://")!.upperBound
        return endpoint[..<schemeEnd] + bucket + "." + endpoint[schemeEnd...]
    }

    /// The answer, the time it took (retries and their waits included), and how many retries it took.
    typealias Exchange = (answer: RemoteAnswer, elapsed: Duration, retries: Int)

    func get(_ object: String, limit: Int? = nil) async -> Exchange {
        await perform(request(.get, url(of: object), body: [], limit: limit ?? maxBytes))
    }

    func head(_ object: String) async -> Exchange {
        await perform(request(.head, url(of: object), body: [], limit: maxBytes))
    }

    /// `payloadHash`: the body's SHA-256 in hex when the caller knows it (a blob's id is its hash).
    func put(_ object: String, _ body: [UInt8], contentType: String, payloadHash: String? = nil) async -> Exchange {
        var request = request(.put, url(of: object), body: body, limit: 1 << 20, payloadHash: payloadHash)
        request.headers.append("Content-Type: \(contentType)")
        return await perform(request)
    }

    /// Any request to a full URL (listings and deletions of `RemoteRetention`), with extra headers.
    func send(_ method: TransferRequest.Method, url: String, body: [UInt8] = [], headers: [String] = [],
              limit: Int = 64 << 20) async -> Exchange {
        var request = request(method, url, body: body, limit: limit)
        request.headers += headers
        return await perform(request)
    }

    func request(_ method: TransferRequest.Method, _ url: String, body: [UInt8], limit: Int,
                 payloadHash: String? = nil) -> TransferRequest {
        var request = TransferRequest(url: url)
        request.method = method
        request.body = body
        request.userAgent = "imgbake/\(SystemInfo.version) (remote cache)"
        request.connectTimeout = min(settings.timeout, .seconds(10))
        request.timeout = settings.timeout
        request.maxRedirects = 0
        request.maxBodyBytes = limit
        switch credentials.kind {
        case .none: break
        case .bearer(let token): request.headers.append("Authorization: Bearer \(token)")
        case .basic(let pair): request.credentials = pair
        case .aws(let key, let secret, let token):
            request.awsSigV4 = "aws:amz:\(region):s3"
            request.credentials = key + ":" + secret
            if let token { request.headers.append("x-amz-security-token: \(token)") }
        }
        if case .s3 = settings.location {
            // S3 wants the payload's hash in a header of its own; libcurl signs it with the rest.
            let hash = payloadHash ?? (body.isEmpty ? Self.emptyPayloadHash : Hex.lowercase(SHA256.hash(body)))
            request.headers.append("x-amz-content-sha256: \(hash)")
        }
        return request
    }

    private func perform(_ request: TransferRequest) async -> Exchange {
        let started = ContinuousClock.now
        var attempt = 0
        while true {
            let outcome = await session.perform(request)
            if case .success(let response) = outcome, response.status == 429 || response.status == 503, attempt < retries {
                // Seconds (what S3 and nginx send); an HTTP date is left to the backoff.
                let asked = response.header("retry-after").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { Duration.seconds($0) }
                let delay = asked.map { min($0, Self.maxRetryAfter) } ?? jittered(attempt)
                attempt += 1
                try? await Task.sleep(for: delay)
                continue
            }
            return (Self.answer(outcome, method: request.method), ContinuousClock.now - started, attempt)
        }
    }

    /// Full jitter (AWS's advice for throttling): anywhere up to `backoff` × 2^attempt.
    private func jittered(_ attempt: Int) -> Duration {
        let ceiling = backoff.seconds * Double(1 << min(attempt, 8))
        return .milliseconds(Int(Double.random(in: 0.2...1) * ceiling * 1000))
    }

    static func answer(_ outcome: Result<TransferResponse, TransferError>, method: TransferRequest.Method) -> RemoteAnswer {
        switch outcome {
        case .failure(let error):
            switch error {
            case .couldNotConnect, .couldNotResolve, .tls: return .failed(error.description, unreachable: true)
            default: return .failed(error.description, unreachable: false)
            }
        case .success(let response):
            let writes = method == .put || method == .post || method == .delete
            switch response.status {
            case 200 where writes, 201, 204: return .stored
            case 200, 207: return .found(response.body)
            case 404, 410: return .absent
            case 401, 403: return .refused(response.status)
            case 413, 507: return .full(response.status)
            default: return .failed("HTTP \(response.status)", unreachable: false)
            }
        }
    }
}
