import Locking

/// Which hosts this build can reach, so that a host that cannot be reached is asked once per build:
/// the first request to a host goes alone, and the others wait for it; once a connection to the host
/// is made (the first answer's bytes are not waited for), they all go; once it could not be reached (its
/// name did not resolve, it refused the connection, it did not answer before the connect timeout), they
/// fail at once with its reason, instead of each image waiting for its own lookups and retries (a rebuild of
/// a documentation site on a laptop without network, Benchmarks/offline-docs.py).
///
/// Hosts are `scheme://host[:port]`. A host can start out unreachable: builds remember a name that
/// did not resolve for a while (`fetch.unresolvable_ttl`), and that memory is given here.
final class HostGate: Sendable {
    enum Admission: Sendable, Equatable {
        /// Ask it (the first request, or the host has answered).
        case go
        /// Fail at once, for this reason.
        case unreachable(String)
    }

    private enum State {
        /// The first request is under way; these wait for its outcome.
        case probing(waiting: [CheckedContinuation<Admission, Never>])
        case reachable
        case unreachable(String)
    }

    private let states: Locked<[String: State]>

    /// `unreachable`: hosts known to be unreachable from the start, with the reason to give.
    init(unreachable: [String: String] = [:]) {
        states = Locked(unreachable.mapValues { State.unreachable($0) })
    }

    /// Whether a request to `host` may go now; waits while the host's first request is under way.
    /// A caller told `.go` for a host it is the first to ask reports the outcome with `answered` or
    /// `couldNotReach`, whatever happens.
    func admit(_ host: String) async -> Admission {
        enum Now { case decided(Admission), wait }
        let now = states.withLock { states -> Now in
            switch states[host] {
            case nil:
                states[host] = .probing(waiting: [])
                return .decided(.go)
            case .reachable: return .decided(.go)
            case .unreachable(let reason): return .decided(.unreachable(reason))
            case .probing: return .wait
            }
        }
        if case .decided(let admission) = now { return admission }
        return await withCheckedContinuation { continuation in
            let decided = states.withLock { states -> Admission? in
                switch states[host] {
                case .probing(let waiting):
                    states[host] = .probing(waiting: waiting + [continuation])
                    return nil
                case .reachable, nil: return .go
                case .unreachable(let reason): return .unreachable(reason)
                }
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }

    /// A connection to the host was made (or it answered): everyone waiting goes.
    func answered(_ host: String) {
        settle(host, .reachable, admission: .go)
    }

    /// The host could not be reached: everyone waiting, and every later request, fails with `reason`.
    func couldNotReach(_ host: String, reason: String) {
        settle(host, .unreachable(reason), admission: .unreachable(reason))
    }

    /// The hosts found unreachable so far, with their reasons.
    var unreachable: [String: String] {
        states.withLock { states in
            states.compactMapValues { if case .unreachable(let reason) = $0 { reason } else { nil } }
        }
    }

    private func settle(_ host: String, _ state: State, admission: Admission) {
        let waiting = states.withLock { states -> [CheckedContinuation<Admission, Never>] in
            defer { states[host] = state }
            if case .probing(let waiting) = states[host] { return waiting }
            return []
        }
        for continuation in waiting { continuation.resume(returning: admission) }
    }
}
