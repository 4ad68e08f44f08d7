import Curl
import Digest

/// What the remote store answered, in the terms the cache cares about.
enum RemoteAnswer: Sendable, Equatable {
    /// GET 200 (the body) or HEAD 200 (empty).
    case found([UInt8])
    /// 404 or 410: a miss.
    case absent
    /// PUT 200, 201 or 204.
    case stored
    /// 401 or 403: these credentials may not do this.
    case refused(Int)
    /// 413 or 507: no room.
    case full(Int)
    /// A transport error or any other status.
    case failed(String, unreachable: Bool)
}

/// The objects of the remote cache over plain HTTP(S): GET, HEAD and PUT of paths under the remote's
/// root, on a `CurlSession` of its own (so remote traffic never waits behind, or holds up, origin
/// downloads). S3 requests are signed with AWS Signature V4 by libcurl; HTTP ones carry the token.
final class RemoteStore: Sendable {
    let settings: RemoteSettings
    private let credentials: RemoteCredentials
    private let session: CurlSession
    private let region: String
    private let maxBytes: Int

    static let emptyPayloadHash = Hex.lowercase(SHA256.hash([UInt8]()))

    init(settings: RemoteSettings, credentials: RemoteCredentials, environment: [String: String], maxBlobBytes: Int) {
        self.settings = settings
        self.credentials = credentials
        region = settings.region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        maxBytes = max(maxBlobBytes, 64 << 20)
        // One host: every slot may go to it. Uploads take at most `settings.uploads` of them.
        session = CurlSession(maxConcurrent: 8, maxPerHost: 8)
    }

    func shutdown() async { await session.shutdown() }

    /// The URL of `object` (a path such as `cas/<sha256>`) under the remote's root.
    func url(of object: String) -> String {
        switch settings.location {
        case .http(let base):
            return base + "/" + object
        case .s3(let bucket, let prefix):
            let key = prefix.isEmpty ? object : prefix + "/" + object
            let endpoint = settings.endpoint ?? "https://s3.\(region).amazonaws.com"
            if settings.pathStyle { return endpoint + "/" + bucket + "/" + key }
            let schemeEnd = endpoint.range(of: "://")!.upperBound
            return endpoint[..<schemeEnd] + bucket + "." + endpoint[schemeEnd...] + "/" + key
        }
    }

    func get(_ object: String, limit: Int? = nil) async -> (RemoteAnswer, Duration) {
        await perform(request(.get, object, body: [], limit: limit ?? maxBytes))
    }

    func head(_ object: String) async -> (RemoteAnswer, Duration) {
        await perform(request(.head, object, body: [], limit: maxBytes))
    }

    /// `payloadHash`: the body's SHA-256 in hex when the caller knows it (a blob's id is its hash).
    func put(_ object: String, _ body: [UInt8], contentType: String, payloadHash: String? = nil) async -> (RemoteAnswer, Duration) {
        var request = request(.put, object, body: body, limit: 1 << 20, payloadHash: payloadHash)
        request.headers.append("Content-Type: \(contentType)")
        return await perform(request)
    }

    func request(_ method: TransferRequest.Method, _ object: String, body: [UInt8], limit: Int,
                 payloadHash: String? = nil) -> TransferRequest {
        var request = TransferRequest(url: url(of: object))
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

    private func perform(_ request: TransferRequest) async -> (RemoteAnswer, Duration) {
        let started = ContinuousClock.now
        let outcome = await session.perform(request)
        let elapsed = ContinuousClock.now - started
        switch outcome {
        case .failure(let error):
            switch error {
            case .couldNotConnect, .tls: return (.failed(error.description, unreachable: true), elapsed)
            default: return (.failed(error.description, unreachable: false), elapsed)
            }
        case .success(let response):
            switch response.status {
            case 200 where request.method == .put, 201, 204: return (.stored, elapsed)
            case 200: return (.found(response.body), elapsed)
            case 404, 410: return (.absent, elapsed)
            case 401, 403: return (.refused(response.status), elapsed)
            case 413, 507: return (.full(response.status), elapsed)
            default: return (.failed("HTTP \(response.status)", unreachable: false), elapsed)
            }
        }
    }
}
