import CCrypto

/// MD5 through libcrypto, for one thing only: the `Content-MD5` header S3-compatible stores require on
/// a multi-object delete. Not for naming or verifying content (that is SHA-256).
public enum MD5 {
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto could not start an MD5 digest") }
        defer { EVP_MD_CTX_free(context) }
        var digest = [UInt8](repeating: 0, count: 16)
        var length: UInt32 = 0
        bytes.withUnsafeBytes { buffer in
            _ = EVP_DigestInit_ex(context, EVP_md5(), nil)
            if let base = buffer.baseAddress, !buffer.isEmpty { _ = EVP_DigestUpdate(context, base, buffer.count) }
            _ = EVP_DigestFinal_ex(context, &digest, &length)
        }
        return digest
    }
}
