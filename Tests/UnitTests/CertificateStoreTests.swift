import Curl
import Testing

/// Where HTTPS finds the certificates it trusts, on each family of systems, and what the variables
/// OpenSSL reads change (the stack's libcurl has no path compiled in).
@Suite struct CertificateStoreTests {
    typealias Location = CertificateStore.Location

    static func locate(_ environment: [String: String] = [:], on disk: Set<String>) -> Location? {
        CertificateStore.locate(environment: environment) { disk.contains($0) }
    }

    @Test(arguments: [
        // Debian and Ubuntu (and Arch, Alpine with ca-certificates): the bundle and the hashed folder.
        (["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs"], Location.file("/etc/ssl/certs/ca-certificates.crt")),
        // Fedora, RHEL, Rocky: the bundle under /etc/pki (and /etc/ssl/certs, a link to the folder, beside it).
        (["/etc/pki/tls/certs/ca-bundle.crt", "/etc/pki/tls/certs", "/etc/ssl/certs"], .file("/etc/pki/tls/certs/ca-bundle.crt")),
        (["/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"], .file("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem")),
        // openSUSE.
        (["/etc/ssl/ca-bundle.pem", "/etc/ssl/certs"], .file("/etc/ssl/ca-bundle.pem")),
        // Only a hashed folder.
        (["/etc/ssl/certs"], .directory("/etc/ssl/certs")),
    ] as [([String], Location)])
    func theSystemsOwnStoreIsFound(disk: [String], expected: Location) {
        #expect(Self.locate(on: Set(disk)) == expected)
    }

    @Test func theVariablesComeFirstAsOpenSSLReadsThem() {
        let debian: Set<String> = ["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs"]
        #expect(Self.locate(["SSL_CERT_FILE": "/opt/ca.pem"], on: debian) == .file("/opt/ca.pem"))
        #expect(Self.locate(["SSL_CERT_DIR": "/opt/certs:/more"], on: debian) == .directory("/opt/certs"))
        // The file wins over the folder; an empty variable is no variable.
        #expect(Self.locate(["SSL_CERT_FILE": "/opt/ca.pem", "SSL_CERT_DIR": "/opt/certs"], on: debian) == .file("/opt/ca.pem"))
        #expect(Self.locate(["SSL_CERT_FILE": ""], on: debian) == .file("/etc/ssl/certs/ca-certificates.crt"))
        // A variable naming nothing is still taken: the transfer fails and names it, instead of another store.
        #expect(Self.locate(["SSL_CERT_FILE": "/missing.pem"], on: []) == .file("/missing.pem"))
    }

    @Test func noStoreIsNil() {
        #expect(Self.locate(on: []) == nil)
        #expect(Self.locate(on: ["/usr/lib/ssl/cert.pem"]) == nil)
    }
}
