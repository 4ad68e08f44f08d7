import Digest

/// The keys of the data flow: types, not strings passed around.

/// The SHA-256 of some bytes: the name of a blob. Identical bytes reached through different URLs are
/// one blob. Its 32 bytes are held inline (a site's page states hold several each, for every page);
/// `hex` spells them.
public struct BlobID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The digest as four big-endian words: compared in this order, as the hex strings would be.
    private let words: (UInt64, UInt64, UInt64, UInt64)

    public init?(hex: String) {
        var words: [UInt64] = []
        var word: UInt64 = 0
        var count = 0
        // On the UTF-8 bytes: `Character`s (grapheme breaking) would be a visible part of reading page states.
        for byte in hex.utf8 {
            let value: UInt8
            switch byte {
            case 0x30...0x39: value = byte - 0x30
            case 0x61...0x66: value = byte - 0x61 + 10
            default: return nil
            }
            word = word << 4 | UInt64(value)
            count += 1
            if count % 16 == 0 {
                words.append(word)
                word = 0
            }
        }
        guard count == 64 else { return nil }
        self.words = (words[0], words[1], words[2], words[3])
    }

    public init(of bytes: some Collection<UInt8>) {
        let digest = SHA256.hash(bytes)
        func word(_ at: Int) -> UInt64 { digest[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        words = (word(0), word(8), word(16), word(24))
    }

    public var hex: String {
        var out = [UInt8](repeating: 0, count: 64)
        for (index, word) in [words.0, words.1, words.2, words.3].enumerated() {
            for nibble in 0..<16 { out[index * 16 + nibble] = Self.digits[Int(word >> UInt64(60 - 4 * nibble) & 15)] }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let digits = Array("0123456789abcdef".utf8)

    public var description: String { hex }

    public static func == (a: BlobID, b: BlobID) -> Bool { a.words == b.words }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    public static func < (a: BlobID, b: BlobID) -> Bool { a.words < b.words }
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
