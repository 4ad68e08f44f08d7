import Digest

/// The keys of the data flow: types, not strings passed around.

/// The SHA-256 of some bytes: the name of a blob. Identical bytes reached through different URLs are
/// one blob.
public struct BlobID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let hex: String

    public init?(hex: String) {
        // On the UTF-8 bytes: `Character`s (grapheme breaking) made this a visible part of reading page states.
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        self.hex = hex
    }

    public init(of bytes: some Collection<UInt8>) {
        hex = Hex.lowercase(SHA256.hash(bytes))
    }

    public var description: String { hex }
    public static func < (a: BlobID, b: BlobID) -> Bool { a.hex < b.hex }
}

/// The cache key of an original: the URL after the key filter (ignored query parameters removed).
/// Same key, same download.
public struct OriginalKey: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public let string: String
    public init(_ string: String) { self.string = string }
    public init(from decoder: any Decoder) throws { string = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
    public var description: String { string }
    public static func < (a: OriginalKey, b: OriginalKey) -> Bool { a.string < b.string }
    /// The key of a file of the site (`file:` and its path), not of a remote URL.
    public var isSiteFile: Bool { string.hasPrefix("file:") }
    /// For a file of the site, its path relative to the site.
    public var sitePath: String? { isSiteFile ? String(string.dropFirst(5)) : nil }
    /// The key of the site's file at `path`.
    public static func siteFile(_ path: String) -> OriginalKey { OriginalKey("file:" + path) }
}

/// The cache key of a variant: hash of the original's blob, the canonical variant spec and the
/// encoder salt. Fetch settings never enter it.
public struct VariantKey: Hashable, Sendable, CustomStringConvertible {
    public let hex: String
    public init(hex: String) { self.hex = hex }
    public var description: String { hex }
}
