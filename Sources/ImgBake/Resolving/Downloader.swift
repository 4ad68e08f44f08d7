import Curl
import Foundation
import Locking

/// What a download produced.
public enum DownloadResult: Sendable {
    case fetched(bytes: [UInt8], validators: Validators)
    /// 304 to a conditional request: the cached original is still good.
    case notModified(validators: Validators)
    case failed(FetchFailure)
}

/// Counters for the summary and the tests.
public struct FetchCounters: Sendable, Equatable {
    public var requests = 0
    public var notModified = 0
    public var retries = 0
    public var bytes = 0
    /// Transfers running now.
    public var inFlight = 0
    /// Per host (`scheme://host[:port]`): requests, bytes, transfer time, failures.
    public var hosts: [String: HostCounters] = [:]
    /// The hosts that could not be reached (this build's, and those earlier builds could not resolve),
    /// with why.
    public var unreachable: [String: String] = [:]
}

public struct HostCounters: Sendable, Equatable {
    public var requests = 0
    public var bytes = 0
    public var seconds = 0.0
    public var failures = 0
}

/// Fetches originals over HTTP(S) through one `CurlSession`: imgbake's headers, per-host extra
/// headers, conditional requests, retries with exponential backoff and jitter on transient failures,
/// `Retry-After` honoured up to a bound; a host that cannot be reached asked once (`HostGate`).
public final class Downloader: Sendable {
    private let session: CurlSession
    private let settings: FetchSettings
    private let policy: AddressPolicy
    private let counters = Locked(FetchCounters())
    private let gate: HostGate
    private let memory: (any UnresolvableHosts)?
    /// The hosts earlier builds could not resolve (remembered, whether this build believes it or not):
    /// forgotten once one answers.
    private let rememberedUnresolvable: Set<String>

    static let accept = "image/avif,image/webp,image/png,image/jpeg,image/gif,image/svg+xml;q=0.8"
    static let userAgent = "imgbake/\(SystemInfo.version) (static site image build step)"

    /// `unresolvable`: the hosts earlier builds could not resolve, with the reason each is given as,
    /// and whether this build takes their word (not with `--retry-failed` or `--refresh`); `memory`
    /// keeps what this build finds.
    public init(settings: FetchSettings, unresolvable: [String: String] = [:], believed: Bool = true,
                memory: (any UnresolvableHosts)? = nil) {
        self.settings = settings
        session = CurlSession(maxConcurrent: settings.concurrency, maxPerHost: settings.perHost)
        policy = AddressPolicy(allowPrivateNetworks: settings.allowPrivateNetworks, connectTo: settings.connectTo)
        gate = HostGate(unreachable: believed ? unresolvable : [:])
        rememberedUnresolvable = Set(unresolvable.keys)
        self.memory = memory
    }

    public var stats: FetchCounters {
        var stats = counters.withLock { $0 }
        stats.unreachable = gate.unreachable
        return stats
    }

    /// Fails what is still queued or running and ends the transfer thread.
    public func shutdown() async { await session.shutdown() }

    /// Downloads `url`, revalidating with `validators` when given.
    public func download(_ url: RemoteURL, revalidating validators: Validators? = nil) async -> DownloadResult {
        if case .unreachable(let reason) = await gate.admit(url.hostKey) {
            var failure = FetchFailure(reason, kind: .unreachable)
            failure.host = url.hostKey
            return .failed(failure)
        }
        var attempt = 0
        while true {
            let result = await attemptOnce(url, validators: validators)
            guard case .failed(let failure) = result, failure.kind == .transient, attempt < settings.retries else {
                return result
            }
            let delay = retryDelay(attempt: attempt, retryAfter: failure.retryAfter)
            guard let delay else {
                return .failed(FetchFailure("\(failure.reason); the server asked to wait longer than \(settings.maxRetryAfter)",
                                            kind: .transient, status: failure.status))
            }
            attempt += 1
            counters.withLock { $0.retries += 1 }
            try? await Task.sleep(for: delay)
        }
    }

    /// The request of one attempt: the image types taken, the site's headers for the host, the
    /// validators of a cached copy, the limits and the address policy.
    private func request(_ url: RemoteURL, validators: Validators?) -> TransferRequest {
        var request = TransferRequest(url: url.string)
        request.userAgent = Self.userAgent
        request.headers = ["Accept: \(Self.accept)"] + extraHeaders(for: url.host)
        if let etag = validators?.etag { request.headers.append("If-None-Match: \(etag)") }
        if let lastModified = validators?.lastModified { request.headers.append("If-Modified-Since: \(lastModified)") }
        request.connectTimeout = settings.connectTimeout
        request.timeout = settings.timeout
        request.lowSpeedBytesPerSecond = settings.lowSpeedLimit
        request.lowSpeedTime = settings.lowSpeedTime
        request.maxBodyBytes = settings.maxBytes
        request.connectTo = settings.connectTo
        request.caFile = settings.caFile
        let policy = self.policy
        request.allowAddress = { policy.allows($0) }
        // The host is reachable once a connection is made: the requests waiting for it go then, not
        // after this one's whole answer.
        let gate = self.gate, hostKey = url.hostKey
        request.connected = { gate.answered(hostKey) }
        return request
    }

    private func attemptOnce(_ url: RemoteURL, validators: Validators?) async -> DownloadResult {
        let request = self.request(url, validators: validators)
        counters.withLock { $0.inFlight += 1 }
        let started = ContinuousClock.now
        let outcome = await session.perform(request)
        let host = url.hostKey
        counters.withLock { counters in
            counters.inFlight -= 1
            counters.requests += 1
            counters.hosts[host, default: HostCounters()].requests += 1
            counters.hosts[host, default: HostCounters()].seconds += (ContinuousClock.now - started).seconds
            switch outcome {
            case .success(let response):
                counters.hosts[host, default: HostCounters()].bytes += response.body.count
                if response.status >= 400 { counters.hosts[host, default: HostCounters()].failures += 1 }
            case .failure: counters.hosts[host, default: HostCounters()].failures += 1
            }
        }
        await settleGate(host, outcome)
        switch outcome {
        case .failure(let error):
            var failure = FetchFailure(transferError: error)
            if failure.kind == .unreachable { failure.host = host }
            return .failed(failure)
        case .success(let response):
            let received = Validators(etag: response.header("etag"), lastModified: response.header("last-modified"),
                                      cacheControl: response.header("cache-control"), expires: response.header("expires"),
                                      contentType: response.header("content-type"))
            switch response.status {
            case 200:
                counters.withLock { $0.bytes += response.body.count }
                return .fetched(bytes: response.body, validators: received)
            case 304 where validators != nil:
                counters.withLock { $0.notModified += 1 }
                return .notModified(validators: received)
            default:
                var failure = FetchFailure.http(response.status)
                failure.retryAfter = response.header("retry-after").flatMap(RetryAfter.parse)
                return .failed(failure)
            }
        }
    }

    /// What this attempt says of its host: it answered, or it could not be reached (and a name that did
    /// not resolve is remembered for the next builds).
    private func settleGate(_ host: String, _ outcome: Result<TransferResponse, TransferError>) async {
        switch outcome {
        case .failure(let error) where error.isUnreachable:
            let reason = FetchFailure(transferError: error).reason
            gate.couldNotReach(host, reason: reason)
            if case .couldNotResolve = error { await memory?.rememberUnresolvable(host, reason: reason) }
        case .failure(.addressRefused):
            // Refused here by the address policy, not by the host: the others go and are judged alike.
            gate.answered(host)
        default:
            gate.answered(host)
            if rememberedUnresolvable.contains(host) { await memory?.forgetUnresolvable(host) }
        }
    }

    /// Exponential backoff with ±50 % jitter; a `Retry-After` replaces it when it is within bounds.
    /// Nil when the server asked for more than `max_retry_after`.
    private func retryDelay(attempt: Int, retryAfter: Duration?) -> Duration? {
        if let retryAfter {
            return retryAfter <= settings.maxRetryAfter ? retryAfter : nil
        }
        let base = settings.retryDelay * (1 << min(attempt, 10))
        return base * Double.random(in: 0.5...1.5)
    }

    /// Configured headers for this host, `${VAR}` expanded from the environment. Never logged.
    private func extraHeaders(for host: String) -> [String] {
        guard let headers = settings.headers.first(where: { $0.key.lowercased() == host })?.value else { return [] }
        return headers.sorted { $0.key < $1.key }.map { "\($0.key): \(EnvironmentExpansion.expand($0.value))" }
    }
}

extension FetchFailure {
    init(transferError error: TransferError) {
        switch error {
        case .bodyTooLarge: self.init(error.description, kind: .permanent)
        case .addressRefused, .tooManyRedirects, .tls: self.init(error.description, kind: .final)
        case .timedOut: self.init(error.description, kind: .transient)
        case .couldNotResolve, .couldNotConnect: self.init(error.description, kind: .unreachable)
        case .curl: self.init(error.description, kind: error.isTransient ? .transient : .final)
        }
    }
}

/// `Retry-After: 120` or `Retry-After: <HTTP date>`.
enum RetryAfter {
    static func parse(_ value: String) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSinceNow.rounded(.up))))
    }
}

/// `${NAME}` references to environment variables in configured header values.
enum EnvironmentExpansion {
    static func expand(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        var out = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                out += rest[start.lowerBound...]
                return out
            }
            out += environment[String(rest[start.upperBound..<end])] ?? ""
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }
}
