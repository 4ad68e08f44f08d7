import Foundation

/// The certificates HTTPS trusts: the system's own store, found where each family of Linux systems keeps
/// it. The stack's libcurl and OpenSSL have none compiled in (packaging/stack/stack.sh), since a path
/// right on the distribution that builds them is wrong on others (OpenSSL's default, /usr/lib/ssl, exists
/// on Debian and Ubuntu only). As OpenSSL does, `SSL_CERT_FILE` and `SSL_CERT_DIR` come first; `--cacert`
/// (`fetch.cacert`) replaces all of this for a build.
public enum CertificateStore {
    public enum Location: Sendable, Equatable, CustomStringConvertible {
        /// One PEM file of certificates (curl's CAINFO).
        case file(String)
        /// A folder of hashed certificate files, as `c_rehash` makes (curl's CAPATH).
        case directory(String)

        public var description: String {
            switch self {
            case .file(let path), .directory(let path): path
            }
        }
    }

    /// The bundles, in the order looked for: Debian, Ubuntu, Arch, Gentoo and Alpine's; Fedora, RHEL and
    /// CentOS's (two names for one file); openSUSE's; Alpine's and the BSDs'.
    static let bundles = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ]
    /// Hashed folders, when no bundle is there.
    static let directories = ["/etc/ssl/certs", "/etc/pki/tls/certs"]

    /// Where the store is for `environment`, given what `exists` says is on disk (file or folder);
    /// nil when there is none. A variable that is set is taken as it is (OpenSSL does the same), so a
    /// wrong one fails loudly instead of being passed over.
    public static func locate(environment: [String: String], exists: (String) -> Bool) -> Location? {
        if let file = environment["SSL_CERT_FILE"], !file.isEmpty { return .file(file) }
        if let folder = environment["SSL_CERT_DIR"], !folder.isEmpty {
            // OpenSSL reads a list; the first folder is curl's CAPATH.
            return .directory(String(folder.split(separator: ":").first ?? Substring(folder)))
        }
        if let bundle = bundles.first(where: exists) { return .file(bundle) }
        return directories.first(where: exists).map(Location.directory)
    }

    /// This machine's, looked up once.
    public static let system: Location? = locate(environment: ProcessInfo.processInfo.environment) {
        FileManager.default.fileExists(atPath: $0)
    }

    /// Why HTTPS cannot be trusted here: nil when a store was found.
    public static var missing: String? {
        guard system == nil else { return nil }
        return "no CA certificates found (looked for \(bundles.joined(separator: ", ")) and the folders "
            + "\(directories.joined(separator: ", "))); install your system's ca-certificates package, or set "
            + "SSL_CERT_FILE to a PEM bundle or SSL_CERT_DIR to a folder of hashed certificates"
    }
}
