import CCurl
import CShims.Curl
#if canImport(Glibc)
import Glibc
#endif

/// Owner of one easy handle and of everything libcurl points back into (error buffer, header lists,
/// the response being collected). Lives on the session's thread only; freed in `deinit`.
final class Transfer {
    let handle: UnsafeMutableRawPointer
    let request: TransferRequest
    let host: String
    let completion: CheckedContinuation<Result<TransferResponse, TransferError>, Never>
    private let started = ContinuousClock.now

    private(set) var body: [UInt8] = []
    private(set) var headers: [(name: String, value: String)] = []
    private var currentStatus = 0
    private var bodyTooLarge = false
    private var refusedAddress: ResolvedAddress?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    private var lists: [UnsafeMutablePointer<curl_slist>] = []

    init?(request: TransferRequest, host: String,
          completion: CheckedContinuation<Result<TransferResponse, TransferError>, Never>) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.request = request
        self.host = host
        self.completion = completion
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        configure()
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in lists { curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    private func configure() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        set(CURLOPT_URL, request.url)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_FOLLOWLOCATION, 1)
        set(CURLOPT_MAXREDIRS, request.maxRedirects)
        // Only web protocols, also after redirects: no file://, ftp:// or gopher:// from page content.
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        set(CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeout.milliseconds)
        set(CURLOPT_TIMEOUT_MS, request.timeout.milliseconds)
        set(CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedBytesPerSecond)
        set(CURLOPT_LOW_SPEED_TIME, max(1, request.lowSpeedTime.milliseconds / 1000))
        set(CURLOPT_USERAGENT, request.userAgent)
        set(CURLOPT_MAXFILESIZE_LARGE, off: curl_off_t(request.maxBodyBytes))
        // Wait for a multiplexed HTTP/2 connection rather than opening more connections to one host. Over
        // TLS, ALPN says after the handshake whether there will be one; plain HTTP is HTTP/1.1 here, and
        // waiting held every other request to the host until the first one's whole answer was in.
        if request.url.lowercased().hasPrefix("https:") { set(CURLOPT_PIPEWAIT, 1) }
        _ = imgbake_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        // The trusted certificates: --cacert's, else the system's (CertificateStore), for a redirect to
        // https:// too.
        if let caFile = request.caFile {
            set(CURLOPT_CAINFO, caFile)
        } else {
            switch CertificateStore.system {
            case .file(let path): set(CURLOPT_CAINFO, path)
            case .directory(let path): set(CURLOPT_CAPATH, path)
            case nil: break
            }
        }
        if let list = makeList(request.headers) { _ = imgbake_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, list) }
        if let list = makeList(request.connectTo) { _ = imgbake_curl_setopt_pointer(handle, CURLOPT_CONNECT_TO, list) }
        if let list = makeList(request.resolve) { _ = imgbake_curl_setopt_pointer(handle, CURLOPT_RESOLVE, list) }
        _ = imgbake_curl_setopt_write(handle, writeBody, me)
        _ = imgbake_curl_setopt_header(handle, writeHeader, me)
        if request.allowAddress != nil { _ = imgbake_curl_setopt_opensocket(handle, openSocket, me) }
        if request.connected != nil { _ = imgbake_curl_setopt_prereq(handle, connectedCallback, me) }
        configureMethodAndAuthentication()
    }

    /// HEAD, and the methods with a body (copied by libcurl), and credentials: AWS Signature V4 or HTTP basic.
    private func configureMethodAndAuthentication() {
        switch request.method {
        case .get: break
        case .head: set(CURLOPT_NOBODY, 1)
        case .delete where request.body.isEmpty:
            set(CURLOPT_CUSTOMREQUEST, "DELETE")
        case .put, .post, .delete, .propfind:
            set(CURLOPT_POSTFIELDSIZE_LARGE, off: curl_off_t(request.body.count))
            // A body goes with its headers. For one over 1 MB libcurl asks "Expect: 100-continue" and
            // would hold it back for the server's go-ahead: a round trip more per upload to a store in
            // another region, a whole second (its default wait) from one that ignores the header. What
            // that saved is a refused or throttled upload's bytes: those are sent now, once per
            // attempt (a 429 or 503 is asked again up to 4 times; the remote cache stops writing at the
            // first refusal, with at most its 8 requests under way). The header itself stays: removing
            // it with "Expect:" breaks libcurl 7.88's AWS signatures.
            set(CURLOPT_EXPECT_100_TIMEOUT_MS, 1)
            if request.body.isEmpty { set(CURLOPT_COPYPOSTFIELDS, "") } else {
                _ = request.body.withUnsafeBytes { imgbake_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
            }
            set(CURLOPT_CUSTOMREQUEST, request.method.rawValue)
        }
        // Basic is libcurl's default scheme for a user and password; AWS_SIGV4 replaces it.
        if let credentials = request.credentials { set(CURLOPT_USERPWD, credentials) }
        if let sigV4 = request.awsSigV4 { set(CURLOPT_AWS_SIGV4, sigV4) }
    }

    private func set(_ option: CURLoption, _ value: Int) { _ = imgbake_curl_setopt_long(handle, option, value) }
    private func set(_ option: CURLoption, off value: curl_off_t) { _ = imgbake_curl_setopt_off(handle, option, value) }
    private func set(_ option: CURLoption, _ value: String) { _ = imgbake_curl_setopt_pointer(handle, option, value) }

    private func makeList(_ items: [String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for item in items { list = curl_slist_append(list, item) }
        if let list { lists.append(list) }
        return list
    }

    // MARK: Callbacks (on the session thread)

    fileprivate func receive(body chunk: UnsafeRawBufferPointer) -> Bool {
        guard body.count + chunk.count <= request.maxBodyBytes else {
            bodyTooLarge = true
            return false
        }
        body.append(contentsOf: chunk)
        return true
    }

    fileprivate func receive(headerLine line: String) -> Bool {
        let trimmed = line.trimmingTrailingNewline()
        if trimmed.hasPrefix("HTTP/") {
            // A new response (redirect hop, 100-continue): only the final one's headers are kept.
            headers.removeAll()
            let parts = trimmed.split(separator: " ", maxSplits: 2)
            currentStatus = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            return true
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return true }
        let name = trimmed[..<colon].lowercased()
        let value = trimmed[trimmed.index(after: colon)...].trimmingSpaces()
        headers.append((name, value))
        if name == "content-length", !(300..<400).contains(currentStatus), let length = Int(value) {
            guard length <= request.maxBodyBytes else {
                bodyTooLarge = true
                return false
            }
            // One allocation of the right size instead of doubling growth (which peaks at twice).
            if (200..<300).contains(currentStatus) { body.reserveCapacity(length) }
        }
        return true
    }

    fileprivate func open(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        if let allow = request.allowAddress, let resolved = ResolvedAddress(address) {
            guard allow(resolved) else {
                refusedAddress = resolved
                return imgbake_curl_socket_bad()
            }
        }
        return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    }

    // MARK: Result

    func result(code: CURLcode) -> Result<TransferResponse, TransferError> {
        if bodyTooLarge { return .failure(.bodyTooLarge(limit: request.maxBodyBytes)) }
        if let refusedAddress { return .failure(.addressRefused(refusedAddress.description)) }
        let message = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_OK:
            var status = 0
            _ = imgbake_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            var effective: UnsafePointer<CChar>?
            _ = imgbake_curl_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effective)
            return .success(TransferResponse(
                status: status, headers: headers, body: body,
                effectiveURL: effective.map { String(cString: $0) } ?? request.url,
                started: started, duration: ContinuousClock.now - started))
        case CURLE_OPERATION_TIMEDOUT:
            // Before the name resolved, DNS did not answer (curl: "Resolving timed out"); before any
            // connection was made, the host did not; after, the transfer was too slow.
            var resolved: curl_off_t = 0, connected: curl_off_t = 0
            _ = imgbake_curl_getinfo_off(handle, CURLINFO_NAMELOOKUP_TIME_T, &resolved)
            _ = imgbake_curl_getinfo_off(handle, CURLINFO_CONNECT_TIME_T, &connected)
            if resolved == 0 { return .failure(.couldNotResolve(message)) }
            return .failure(connected == 0 ? .couldNotConnect(message) : .timedOut(message))
        case CURLE_COULDNT_CONNECT: return .failure(.couldNotConnect(message))
        case CURLE_COULDNT_RESOLVE_HOST: return .failure(.couldNotResolve(message))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE:
            return .failure(.tls(message))
        case CURLE_FILESIZE_EXCEEDED: return .failure(.bodyTooLarge(limit: request.maxBodyBytes))
        case CURLE_TOO_MANY_REDIRECTS: return .failure(.tooManyRedirects(request.maxRedirects))
        default: return .failure(.curl(code: Int(code.rawValue), message: message))
        }
    }
}

private let writeBody: curl_write_callback = { data, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    let length = size * count
    return transfer.receive(body: UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let writeHeader: curl_write_callback = { data, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    let length = size * count
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    return transfer.receive(headerLine: line) ? length : 0
}

private let connectedCallback: curl_prereq_callback = { userdata, _, _, _, _ in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    transfer.request.connected?()
    return Int32(CURL_PREREQFUNC_OK)
}

private let openSocket: curl_opensocket_callback = { userdata, _, address in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.open(address!)
}

extension ResolvedAddress {
    /// Reads the address libcurl is about to connect to (IPv4 or IPv6; nil for anything else).
    init?(_ address: UnsafeMutablePointer<curl_sockaddr>) {
        let family = address.pointee.family
        let raw = UnsafeMutableRawPointer(address).advanced(by: MemoryLayout<curl_sockaddr>.offset(of: \.addr)!)
        switch family {
        case AF_INET:
            let sin = raw.assumingMemoryBound(to: sockaddr_in.self).pointee
            let bytes = withUnsafeBytes(of: sin.sin_addr) { Array($0) }
            self.init(family: .ipv4, bytes: bytes, port: Int(UInt16(bigEndian: sin.sin_port)))
        case AF_INET6:
            let sin6 = raw.assumingMemoryBound(to: sockaddr_in6.self).pointee
            let bytes = withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
            self.init(family: .ipv6, bytes: bytes, port: Int(UInt16(bigEndian: sin6.sin6_port)))
        default:
            return nil
        }
    }
}

extension Duration {
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

extension StringProtocol {
    func trimmingTrailingNewline() -> Substring {
        var s = self[...]
        while let last = s.last, last == "\n" || last == "\r" || last == "\r\n" { s.removeLast() }
        return Substring(s)
    }

    func trimmingSpaces() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
