/// Credentials for the remote cache, from the environment only — never from the configuration file,
/// never printed, never in a report (`description` says which kind, not what).
///
/// - S3: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, with `AWS_SESSION_TOKEN` for temporary ones;
///   without them requests go unsigned (a public bucket can still be read).
/// - HTTP: `IMGBAKE_REMOTE_TOKEN`, sent as `Authorization: Bearer <token>`, or as basic
///   authentication when it is `user:password`.
struct RemoteCredentials: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case none
        case aws(accessKey: String, secret: String, sessionToken: String?)
        case bearer(String)
        case basic(String)
    }

    let kind: Kind

    init(for location: RemoteLocation, environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch location {
        case .s3:
            if let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") {
                kind = .aws(accessKey: key, secret: secret, sessionToken: value("AWS_SESSION_TOKEN"))
            } else {
                kind = .none
            }
        case .http:
            if let token = value("IMGBAKE_REMOTE_TOKEN") {
                kind = token.contains(":") ? .basic(token) : .bearer(token)
            } else {
                kind = .none
            }
        }
    }

    var description: String {
        switch kind {
        case .none: "no credentials"
        case .aws(_, _, let token): token == nil ? "AWS access key (from the environment)" : "AWS temporary credentials (from the environment)"
        case .bearer: "bearer token (IMGBAKE_REMOTE_TOKEN)"
        case .basic: "basic authentication (IMGBAKE_REMOTE_TOKEN)"
        }
    }

}
