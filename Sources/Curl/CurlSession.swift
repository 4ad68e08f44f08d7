import CCurl
import CShims.Curl
import Foundation
import Locking

/// An HTTP client on libcurl's multi interface. One thread owns the multi handle and every easy handle
/// (libcurl handles are not thread-safe); Swift tasks hand requests over and wait on continuations.
///
/// Admission is ours (`Admission`), not libcurl's: at most `maxConcurrent` transfers run, at most `maxPerHost` per
/// host, and the rest wait in a queue. A queued request is not yet known to libcurl, so its timeouts
/// only start when it really runs.
///
///     let session = CurlSession(maxConcurrent: 8, maxPerHost: 4)
///     let result = await session.perform(TransferRequest(url: "https://example.com/a.jpg"))
public final class CurlSession: Sendable {
    private let loop: Loop

    public init(maxConcurrent: Int = 8, maxPerHost: Int = 4) {
        CurlGlobal.initialize()
        loop = Loop(maxConcurrent: max(1, maxConcurrent), maxPerHost: max(1, maxPerHost))
        let thread = Thread { [loop] in loop.run() }
        thread.name = "imgbake-curl"
        thread.start()
    }

    /// Without `shutdown`, the owner thread still ends (after failing what is left) when the session
    /// goes away; nothing blocks here.
    deinit { loop.stop(whenDone: nil) }

    /// Fails the transfers still queued or running, ends the owner thread and returns once it has
    /// cleaned up every handle.
    public func shutdown() async {
        await withCheckedContinuation { continuation in loop.stop(whenDone: continuation) }
    }

    /// Runs one transfer. Never throws: failures come back as `TransferError`.
    public func perform(_ request: TransferRequest) async -> Result<TransferResponse, TransferError> {
        await withCheckedContinuation { continuation in
            loop.enqueue(Pending(request: request, completion: continuation))
        }
    }
}

struct Pending: Sendable {
    let request: TransferRequest
    let completion: CheckedContinuation<Result<TransferResponse, TransferError>, Never>
}

/// The state shared between the owner thread and callers: an inbox and a stop flag. Everything else
/// belongs to the owner thread.
private final class Loop: Sendable {
    let maxConcurrent: Int
    let maxPerHost: Int
    let inbox = Locked<(items: [Pending], stopping: Bool, joiners: [CheckedContinuation<Void, Never>], ended: Bool)>(([], false, [], false))
    /// Only `curl_multi_wakeup` (documented thread-safe) is called on it from other threads.
    nonisolated(unsafe) let multi: UnsafeMutableRawPointer

    init(maxConcurrent: Int, maxPerHost: Int) {
        self.maxConcurrent = maxConcurrent
        self.maxPerHost = maxPerHost
        multi = curl_multi_init()
        _ = imgbake_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxPerHost)
        _ = imgbake_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxConcurrent)
    }

    func enqueue(_ pending: Pending) {
        // Woken under the lock: once the loop has ended (and freed the multi handle), nobody wakes it.
        let accepted = inbox.withLock { state in
            guard !state.ended else { return false }
            state.items.append(pending)
            curl_multi_wakeup(multi)
            return true
        }
        if !accepted { pending.completion.resume(returning: .failure(Self.cancelled)) }
    }

    func stop(whenDone joiner: CheckedContinuation<Void, Never>?) {
        let ended = inbox.withLock { state in
            state.stopping = true
            if !state.ended {
                if let joiner { state.joiners.append(joiner) }
                curl_multi_wakeup(multi)
            }
            return state.ended
        }
        if ended { joiner?.resume() }
    }

    static let cancelled = TransferError.curl(code: -2, message: "cancelled: imgbake is shutting down")

    /// The owner thread's loop: admit, drive, collect, sleep until there is work or a socket is ready.
    func run() {
        var admission = Admission<Pending>(maxConcurrent: maxConcurrent, maxPerHost: maxPerHost)
        var active: [UnsafeMutableRawPointer: Transfer] = [:]
        while true {
            let (incoming, stopping) = inbox.withLock { state in
                defer { state.items.removeAll() }
                return (state.items, state.stopping)
            }
            for pending in incoming { admission.ask(pending, host: Self.hostKey(pending.request.url)) }
            if stopping {
                for pending in admission.drain() { pending.completion.resume(returning: .failure(Self.cancelled)) }
                for (handle, transfer) in active {
                    curl_multi_remove_handle(multi, handle)
                    transfer.completion.resume(returning: .failure(Self.cancelled))
                }
                break
            }

            while let (host, pending) = admission.next() {
                // Without a certificate store every HTTPS transfer would fail in the handshake, with
                // OpenSSL's words; this says what to do.
                if pending.request.caFile == nil, pending.request.url.lowercased().hasPrefix("https:"),
                   let missing = CertificateStore.missing {
                    admission.ended(host: host)
                    pending.completion.resume(returning: .failure(.tls(missing)))
                    continue
                }
                guard let transfer = Transfer(request: pending.request, host: host, completion: pending.completion) else {
                    admission.ended(host: host)
                    pending.completion.resume(returning: .failure(.curl(code: -1, message: "curl_easy_init failed")))
                    continue
                }
                curl_multi_add_handle(multi, transfer.handle)
                active[transfer.handle] = transfer
            }

            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                      let transfer = active.removeValue(forKey: handle) else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, handle)
                admission.ended(host: transfer.host)
                transfer.completion.resume(returning: transfer.result(code: code))
            }
            guard admission.maySleep else { continue }
            // Until a socket is ready, one of libcurl's own timers (timeouts, retries) is due, or a
            // request or stop wakes it: the cap only bounds a wait nothing else would end.
            curl_multi_poll(multi, nil, 0, 10_000, nil)
        }
        let (late, joiners) = inbox.withLock { state in
            state.ended = true
            defer { state.items = []; state.joiners = [] }
            return (state.items, state.joiners)
        }
        active.removeAll() // each Transfer frees its easy handle
        curl_multi_cleanup(multi)
        for pending in late { pending.completion.resume(returning: .failure(Self.cancelled)) }
        for joiner in joiners { joiner.resume() }
    }

    /// Per-host admission key: scheme, host and port as written in the URL.
    static func hostKey(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@").last ?? authority
        return url[..<schemeEnd.lowerBound].lowercased() + "://" + hostPort.lowercased()
    }
}

/// `curl_global_init` must run once, before any other call, and is not thread-safe.
enum CurlGlobal {
    private static let done = Locked(false)

    static func initialize() {
        done.withLock { done in
            guard !done else { return }
            curl_global_init(Int(CURL_GLOBAL_ALL))
            done = true
        }
    }
}
