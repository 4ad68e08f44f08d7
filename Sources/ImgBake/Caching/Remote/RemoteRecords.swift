import Foundation

/// The remote cache's layout (docs/REMOTE-CACHE.md), as in Bazel's remote caches: a content-addressed
/// store of blobs, and small records (an "action cache") from keys to blobs.
///
///     cas/<sha256 of the bytes>                       originals, variants
///     ac/v1/original/<sha256 of the original key>     JSON: URL key → original blob, validators, fetch time
///     ac/v1/variant/<variant key>                     JSON: variant key → variant blob (or dropped)
///     ac/v1/placeholder/<sha256 of kind|original blob> JSON: the placeholder of that original
///
/// Records read from the remote are data, not trusted: each is checked against the key it was asked
/// for, and every blob is re-hashed before use.
enum RemotePath {
    static func blob(_ id: BlobID) -> String { "cas/" + id.hex }
    static func original(_ key: OriginalKey) -> String { "ac/v1/original/" + BlobID(of: Array(key.string.utf8)).hex }
    static func variant(_ key: VariantKey) -> String { "ac/v1/variant/" + key.hex }
    static func placeholder(_ kind: String, of original: BlobID) -> String {
        "ac/v1/placeholder/" + BlobID(of: Array((kind + "|" + original.hex).utf8)).hex
    }
}

/// `ac/v1/original/…`: an original as the index remembers it, with its credits.
struct RemoteOriginalEntry: Codable, Equatable {
    var version = 1
    var key: String
    var url: String
    var blob: String
    var format: String
    var width: Int
    var height: Int
    var pages: Int
    var bytes: Int
    var etag: String?
    var lastModified: String?
    var cacheControl: String?
    var expires: String?
    var contentType: String?
    var fetchedAt: Double
    var copyright: String?
    var artist: String?
    var captured: String?

    init(_ record: OriginalRecord, credits: Credits) {
        let v = record.validators
        key = record.key.string
        url = record.url
        blob = record.blob.hex
        format = record.format.rawValue
        width = record.width
        height = record.height
        pages = record.pages
        bytes = record.bytes
        etag = v.etag
        lastModified = v.lastModified
        cacheControl = v.cacheControl
        expires = v.expires
        contentType = v.contentType
        fetchedAt = record.fetchedAt
        copyright = credits.copyright
        artist = credits.artist
        captured = credits.captured
    }

    /// The record, if it is one for `expected` and makes sense; else why not.
    func record(for expected: OriginalKey, maxBytes: Int) -> Result<(OriginalRecord, Credits), RemoteRecordError> {
        guard version == 1 else { return .failure(.init("version \(version), expected 1")) }
        guard key == expected.string else { return .failure(.init("it is for another key")) }
        guard let blob = BlobID(hex: blob), let format = ImageFormat(rawValue: format) else {
            return .failure(.init("malformed blob id or format"))
        }
        guard (0...1_000_000).contains(width), (0...1_000_000).contains(height), (1...100_000).contains(pages),
              (1...maxBytes).contains(bytes), fetchedAt.isFinite, RemoteURL.resolve(url) != nil else {
            return .failure(.init("values out of range"))
        }
        let validators = Validators(etag: etag, lastModified: lastModified, cacheControl: cacheControl, expires: expires,
                                    contentType: contentType)
        let record = OriginalRecord(key: expected, url: url, blob: blob, format: format, width: width, height: height,
                                    pages: pages, bytes: bytes, validators: validators, fetchedAt: fetchedAt)
        return .success((record, Credits(copyright: copyright, artist: artist, captured: captured)))
    }
}

/// `ac/v1/variant/…`: an encoded variant, or one dropped as larger than its fallback (no blob).
struct RemoteVariantEntry: Codable, Equatable {
    var version = 1
    var key: String
    var originalBlob: String
    var spec: String
    var blob: String?
    var format: String
    var width: Int
    var height: Int
    var bytes: Int

    init(_ row: VariantRecord) {
        key = row.key.hex
        originalBlob = row.originalBlob.hex
        spec = row.spec
        blob = row.blob?.hex
        format = row.format.rawValue
        width = row.width
        height = row.height
        bytes = row.bytes
    }

    func record(for expected: VariantKey, of original: BlobID) -> Result<VariantRecord, RemoteRecordError> {
        guard version == 1 else { return .failure(.init("version \(version), expected 1")) }
        guard key == expected.hex, originalBlob == original.hex else { return .failure(.init("it is for another variant")) }
        guard let format = ImageFormat(rawValue: format), blob.map({ BlobID(hex: $0) != nil }) ?? true else {
            return .failure(.init("malformed blob id or format"))
        }
        guard (1...100_000).contains(width), (1...100_000).contains(height), bytes >= 0 else {
            return .failure(.init("values out of range"))
        }
        return .success(VariantRecord(key: expected, originalBlob: original, spec: spec, blob: blob.flatMap(BlobID.init(hex:)),
                                      format: format, width: width, height: height, bytes: bytes))
    }
}

/// `ac/v1/placeholder/…`.
struct RemotePlaceholderEntry: Codable, Equatable {
    var version = 1
    var original: String
    var kind: String
    var value: String
}

struct RemoteRecordError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum RemoteJSON {
    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { [UInt8]($0) } ?? []
    }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) -> T? {
        try? JSONDecoder().decode(type, from: Data(bytes))
    }
}
