/// Why an image could not be had, and what that means for the next attempt.
public struct FetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Will not change by asking again (404, 410, not an image, too large, undecodable): remembered
        /// in the cache's failure memory and skipped by later builds until `failure_ttl` or
        /// `--retry-failed`.
        case permanent
        /// Not retried in this build, not remembered (other 4xx, refused address, redirect loop).
        case final
        /// Retried with backoff; never remembered (timeouts, resets, 408, 429, 5xx).
        case transient
        /// The host could not be reached: its name did not resolve, it refused the connection or did not
        /// answer before the connect timeout. Not retried: the build's other requests to the host fail at
        /// once with the same reason (`HostGate`), and a name that did not resolve is remembered for
        /// `unresolvable_ttl`. Like a transient failure, it leaves a cached copy in use.
        case unreachable
    }

    public var reason: String
    public var kind: Kind
    /// The HTTP status, when there was one.
    public var status: Int?
    /// What the server's `Retry-After` asked for.
    public var retryAfter: Duration?
    /// The host (`scheme://host[:port]`) that could not be reached, for `.unreachable`.
    public var host: String?

    public init(_ reason: String, kind: Kind, status: Int? = nil) {
        self.reason = reason
        self.kind = kind
        self.status = status
    }

    public var description: String { reason }

    /// Classifies an HTTP status other than 200 and 304.
    static func http(_ status: Int) -> FetchFailure {
        switch status {
        case 404, 410: FetchFailure("HTTP \(status)", kind: .permanent, status: status)
        case 408, 429, 500...599: FetchFailure("HTTP \(status)", kind: .transient, status: status)
        default: FetchFailure("HTTP \(status)", kind: .final, status: status)
        }
    }
}
