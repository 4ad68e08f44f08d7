import CCrypto

/// SHA-256 through OpenSSL's libcrypto (EVP interface), which uses the CPU's SHA instructions where
/// it has them. One owner per `EVP_MD_CTX`; not `Sendable`: a hasher is fed from one thread.
///
/// ```swift
/// let hasher = SHA256()
/// hasher.update(bytes)
/// let digest = hasher.finalize() // 32 bytes
/// ```
public final class SHA256 {
    private let context: OpaquePointer

    public init() {
        // Allocation failure here means the process is out of memory; there is nothing to fall back to.
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto could not start a SHA-256 digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Hashes contiguous collections (arrays, slices, Data) without copying; others are copied once.
    public func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// The 32-byte digest. The hasher is finished afterwards.
    public func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest
    }

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
