import Digest

/// `--shard K/N`: this machine's part of a site's images, chosen by a hash of each image's original
/// key, so the parts are balanced, do not overlap, cover every image, and stay the same from run to
/// run and machine to machine whatever order pages are scanned in.
///
///     let shard = Shard(parsing: "2/4")!        // the second of four
///     shard.includes(OriginalKey("https://example.com/a.jpg"))
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// 1-based.
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count >= 1, count <= 4096, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// `K/N` with 1 ≤ K ≤ N.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]) else { return nil }
        self.init(index: k, count: n)
    }

    public var description: String { "\(index)/\(count)" }

    /// The shard (1-based) that `key` falls in: the first eight bytes of its SHA-256, modulo N.
    public static func of(_ key: OriginalKey, count: Int) -> Int {
        let digest = SHA256.hash(Array(key.string.utf8))
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(prefix % UInt64(count)) + 1
    }

    public func includes(_ key: OriginalKey) -> Bool { Self.of(key, count: count) == index }
}
