/// `[cache] remote = "s3://bucket/prefix"` or `"https://host/path"`: a cache shared by machines,
/// asked after the local cache and before the origin, and written back to with what a build made.
/// Credentials come from the environment only (see `RemoteCredentials`), never from here.
public struct RemoteSettings: Sendable, Equatable {
    public var location: RemoteLocation
    /// False: read only (`cache.remote_write = false`, `--remote-read-only`), for untrusted builds.
    public var write = true
    /// S3 only: `http(s)://host[:port]` of an S3-compatible server (MinIO, Ceph RGW, R2); default AWS.
    public var endpoint: String?
    /// S3 only: the signing region; default `$AWS_REGION`, `$AWS_DEFAULT_REGION`, else `us-east-1`.
    public var region: String?
    /// S3 only: `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint host>/<key>`.
    public var pathStyle = false
    /// Per request; a remote slower than this is given up on for the rest of the build.
    public var timeout: Duration = .seconds(60)
    /// Uploads running at once.
    public var uploads = 4

    public init(location: RemoteLocation) { self.location = location }
}

/// Where the remote cache is.
public enum RemoteLocation: Sendable, Equatable, CustomStringConvertible {
    /// An S3 bucket and a key prefix (no leading or trailing slash; may be empty).
    case s3(bucket: String, prefix: String)
    /// An HTTP(S) folder that answers GET, HEAD and PUT (no trailing slash).
    case http(base: String)

    /// `s3://bucket[/prefix]` or `http(s)://host[:port][/path]`; the error says what is wrong.
    public static func parse(_ text: String) -> Result<RemoteLocation, RemoteLocationError> {
        if text.hasPrefix("s3://") {
            let rest = text.dropFirst(5)
            let bucket = String(rest.prefix { $0 != "/" })
            let prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
            guard (3...63).contains(bucket.count),
                  bucket.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == ".") }) else {
                return .failure(RemoteLocationError("\"\(bucket)\" is not an S3 bucket name (3 to 63 of a-z, 0-9, '.', '-')"))
            }
            guard prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/._-".contains($0)) }) else {
                return .failure(RemoteLocationError("the key prefix \"\(prefix)\" may only use letters, digits, '/', '.', '_' and '-'"))
            }
            return .success(.s3(bucket: bucket, prefix: prefix))
        }
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), let url = RemoteURL.resolve(text), !url.host.isEmpty else {
            return .failure(RemoteLocationError("expected s3://bucket/prefix or an http(s):// URL, not \"\(text)\""))
        }
        if url.userinfo != nil {
            return .failure(RemoteLocationError("credentials do not belong in the URL: set IMGBAKE_REMOTE_TOKEN in the environment"))
        }
        if url.query != nil || text.contains("#") {
            return .failure(RemoteLocationError("a remote cache URL has no query or fragment"))
        }
        var base = url.string
        while base.hasSuffix("/") { base.removeLast() }
        return .success(.http(base: base))
    }

    public var description: String {
        switch self {
        case .s3(let bucket, let prefix): "s3://\(bucket)" + (prefix.isEmpty ? "" : "/" + prefix)
        case .http(let base): base
        }
    }
}

public struct RemoteLocationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
