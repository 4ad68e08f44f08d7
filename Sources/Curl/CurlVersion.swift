import CCurl
import CShims.Curl

/// The libcurl this process runs with, as `curl --version` tells it: read from the library at run
/// time, so it names what is installed, not what the headers were.
public struct CurlVersion: Sendable {
    /// e.g. "7.88.1".
    public let version: String
    /// The TLS library, e.g. "OpenSSL/3.0.15"; nil for a libcurl built without TLS.
    public let tls: String?
    /// The other libraries it uses, each as name/version ("zlib/1.2.13", "nghttp2/1.52.0", …).
    public let libraries: [String]

    public static var current: CurlVersion {
        let info = imgbake_curl_version_info()!.pointee
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        // Later fields exist only from some age of the struct on (curl.h).
        let age = info.age.rawValue
        let named: [(String, String?)] = [
            ("zlib", text(info.libz_version)),
            ("brotli", age >= CURLVERSION_FIFTH.rawValue ? text(info.brotli_version) : nil),
            ("zstd", age >= CURLVERSION_EIGHTH.rawValue ? text(info.zstd_version) : nil),
            ("libidn2", age >= CURLVERSION_THIRD.rawValue ? text(info.libidn) : nil),
            ("nghttp2", age >= CURLVERSION_SIXTH.rawValue ? text(info.nghttp2_version) : nil),
        ]
        var libraries = named.compactMap { name, version in version.map { "\(name)/\($0)" } }
        if age >= CURLVERSION_FOURTH.rawValue, let ssh = text(info.libssh_version) { libraries.append(ssh) }
        return CurlVersion(version: text(info.version) ?? "?", tls: text(info.ssl_version), libraries: libraries)
    }
}
