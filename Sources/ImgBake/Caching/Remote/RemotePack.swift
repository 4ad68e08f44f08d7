import Foundation

/// The remote cache's layout 2 (docs/REMOTE-CACHE.md): one object per image, as sccache and Turborepo
/// store one object per cached result, so that a machine reading through makes one request per image
/// and a machine writing back two.
///
///     layout.json                          which layouts the store holds (`RemoteLayout`)
///     v2/packs/<sha256 of the pack key>    a pack: the image's records and its variants' bytes
///     v2/blobs/<sha256 of the bytes>       a raster original's bytes, for making other variants
///
/// What is read from the remote is data, not trusted: a pack is checked against the key it was asked
/// for, each variant's key is recomputed from its spec, and every blob is re-hashed before use.
enum RemotePath {
    static let layout = "layout.json"
    static let root = "v2/"
    static func pack(_ key: PackKey) -> String { "v2/packs/" + BlobID(of: Array(key.string.utf8)).hex }
    static func blob(_ id: BlobID) -> String { "v2/blobs/" + id.hex }
    /// Layout 1's record of an original: only asked for, once, to say that a store holds layout 1.
    static func layout1Original(_ key: OriginalKey) -> String { "ac/v1/original/" + BlobID(of: Array(key.string.utf8)).hex }
    /// Where each layout's objects are, for `cache gc --remote` (layout 1: `cas/` and `ac/v1/`).
    static let collected = ["v2/", "cas/", "ac/"]
}

/// What a pack is found by. A remote image is asked for by its URL key before its bytes are known;
/// a file of the site by its bytes, which every machine building the site has (so a pack follows the
/// file's content, not its path, and an edited file simply has another pack).
package enum PackKey: Hashable, Sendable, CustomStringConvertible {
    case original(OriginalKey)
    case content(BlobID)

    static func of(_ record: OriginalRecord) -> PackKey { record.key.isSiteFile ? .content(record.blob) : .original(record.key) }

    package var string: String {
        switch self {
        case .original(let key): key.string
        case .content(let blob): "blob:" + blob.hex
        }
    }

    package var description: String {
        switch self {
        case .original(let key): key.string
        case .content(let blob): "file content \(blob.hex.prefix(12))"
        }
    }
}

/// A pack's header: JSON, before the bytes it describes.
///
///     imgbake-pack 2 <header length>\n<header JSON><blob bytes, one after another>
struct PackHeader: Codable, Equatable {
    var layout = RemoteLayout.version
    var key: String
    var originalBlob: String
    /// Unix seconds when it was written; a build that uses a pack older than `RemoteCache.refreshAge`
    /// writes it again, so that retention by age (last write) keeps what is in use.
    var written: Double
    var writer: String
    /// The original of a remote image (absent for a file of the site).
    var original: OriginalEntry?
    var variants: [VariantEntry]
    /// Placeholder kind (`color`, `lqip`, `blurhash`) → value.
    var placeholders: [String: String]
    /// The bytes after the header: variants' (and an SVG original's, which is its own output).
    var blobs: [BlobEntry]

    struct BlobEntry: Codable, Equatable {
        var blob: String
        var offset: Int
        var length: Int
    }
}

/// An original as the index remembers it, with its credits.
struct OriginalEntry: Codable, Equatable {
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

    /// The record under `key`, if it makes sense; else why not.
    func record(for key: OriginalKey, maxBytes: Int) -> Result<(OriginalRecord, Credits), RemoteRecordError> {
        guard let blob = BlobID(hex: blob), let format = ImageFormat(rawValue: format) else {
            return .failure(.init("malformed blob id or format"))
        }
        guard (0...1_000_000).contains(width), (0...1_000_000).contains(height), (1...100_000).contains(pages),
              (1...maxBytes).contains(bytes), fetchedAt.isFinite, RemoteURL.resolve(url) != nil else {
            return .failure(.init("values out of range"))
        }
        let validators = Validators(etag: etag, lastModified: lastModified, cacheControl: cacheControl, expires: expires,
                                    contentType: contentType)
        let record = OriginalRecord(key: key, url: url, blob: blob, format: format, width: width, height: height,
                                    pages: pages, bytes: bytes, validators: validators, fetchedAt: fetchedAt)
        return .success((record, Credits(copyright: copyright, artist: artist, captured: captured)))
    }
}

/// An encoded variant, or one dropped as larger than its fallback (no blob).
struct VariantEntry: Codable, Equatable {
    var key: String
    var spec: String
    var blob: String?
    var format: String
    var width: Int
    var height: Int
    var bytes: Int

    init(_ row: VariantRecord) {
        key = row.key.hex
        spec = row.spec
        blob = row.blob?.hex
        format = row.format.rawValue
        width = row.width
        height = row.height
        bytes = row.bytes
    }
}

/// A pack read and checked: only what this build can use and vouch for is in it.
package struct Pack: Sendable {
    package var key: PackKey
    package var originalBlob: BlobID
    package var written: Double
    package var original: (record: OriginalRecord, credits: Credits)?
    /// Variants whose key is this build's key for their spec of `originalBlob`, and whose bytes (if
    /// not dropped) were in the pack and hashed to their name.
    package var variants: [VariantKey: VariantRecord] = [:]
    package var placeholders: [String: String] = [:]
    /// Verified bytes by id: the variants' (and an SVG original's).
    package var blobs: [BlobID: [UInt8]] = [:]
    /// Blobs whose bytes did not hash to their name (their variants are left out).
    package var badBlobs: [BlobID] = []
    /// Variants of other encoder versions (another imgbake or libvips), left out.
    package var foreign = 0

    package static let magic = "imgbake-pack"

    /// The pack's bytes: header, then each blob once.
    package static func encode(key: PackKey, originalBlob: BlobID, original: (record: OriginalRecord, credits: Credits)?,
                       variants: [VariantRecord], placeholders: [String: String], blobs: [(BlobID, [UInt8])],
                       written: Double) -> [UInt8] {
        var entries: [PackHeader.BlobEntry] = []
        var offset = 0
        var seen = Set<BlobID>()
        for (id, bytes) in blobs where seen.insert(id).inserted {
            entries.append(.init(blob: id.hex, offset: offset, length: bytes.count))
            offset += bytes.count
        }
        let header = PackHeader(key: key.string, originalBlob: originalBlob.hex, written: written, writer: "imgbake \(SystemInfo.version)",
                                original: original.map { OriginalEntry($0.record, credits: $0.credits) },
                                variants: variants.sorted { $0.key.hex < $1.key.hex }.map(VariantEntry.init),
                                placeholders: placeholders, blobs: entries)
        let json = RemoteJSON.encode(header)
        var out = Array("\(magic) \(RemoteLayout.version) \(json.count)\n".utf8) + json
        out.reserveCapacity(out.count + offset)
        seen = []
        for (id, bytes) in blobs where seen.insert(id).inserted { out += bytes }
        return out
    }

    /// The pack in `bytes`, if it is a layout 2 pack for `expected`; what in it does not check out is
    /// left out (and said in `badBlobs`, `foreign`).
    package static func decode(_ bytes: [UInt8], expected: PackKey, maxOriginalBytes: Int) -> Result<Pack, RemoteRecordError> {
        guard let newline = bytes.prefix(64).firstIndex(of: 0x0A) else { return .failure(.init("not a pack")) }
        let intro = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")
        guard intro.count == 3, intro[0] == magic else { return .failure(.init("not a pack")) }
        guard intro[1] == "\(RemoteLayout.version)" else { return .failure(.init("layout \(intro[1]), expected \(RemoteLayout.version)")) }
        guard let length = Int(intro[2]), length > 0, length <= bytes.count - newline - 1, length <= 16 << 20 else {
            return .failure(.init("header length out of range"))
        }
        let start = newline + 1
        guard let header = RemoteJSON.decode(PackHeader.self, Array(bytes[start..<start + length])) else {
            return .failure(.init("unreadable header"))
        }
        guard header.layout == RemoteLayout.version else { return .failure(.init("layout \(header.layout) in the header")) }
        guard header.key == expected.string else { return .failure(.init("it is for another key")) }
        guard let originalBlob = BlobID(hex: header.originalBlob), header.written.isFinite else {
            return .failure(.init("malformed original blob id"))
        }
        var pack = Pack(key: expected, originalBlob: originalBlob, written: header.written)
        switch expected {
        case .original(let key):
            guard let entry = header.original else { return .failure(.init("no original record")) }
            switch entry.record(for: key, maxBytes: maxOriginalBytes) {
            case .failure(let why): return .failure(why)
            case .success(let found):
                guard found.0.blob == originalBlob else { return .failure(.init("its original names another blob")) }
                pack.original = found
            }
        case .content(let blob):
            guard header.original == nil, originalBlob == blob else { return .failure(.init("it is for other content")) }
        }

        let payload = start + length
        for entry in header.blobs {
            guard let id = BlobID(hex: entry.blob), entry.offset >= 0, entry.length >= 0,
                  entry.offset <= bytes.count - payload - entry.length else {
                return .failure(.init("a blob lies outside the pack"))
            }
            let slice = bytes[(payload + entry.offset)..<(payload + entry.offset + entry.length)]
            if BlobID(of: slice) == id { pack.blobs[id] = Array(slice) } else { pack.badBlobs.append(id) }
        }
        for entry in header.variants {
            guard entry.spec.utf8.count <= 256, let format = ImageFormat(rawValue: entry.format),
                  (1...100_000).contains(entry.width), (1...100_000).contains(entry.height), entry.bytes >= 0 else {
                return .failure(.init("a variant's values are out of range"))
            }
            // The key is of the canonical spec; what follows it (`;made=q74`, the quality chosen for
            // an automatic one) is what the bytes are, and must be readable for the record to be used.
            let key = VariantSpec.key(original: originalBlob, canonical: String(VariantSpec.canonical(ofRecorded: entry.spec)))
            guard key.hex == entry.key else { pack.foreign += 1; continue }
            if let made = VariantSpec.madePart(of: entry.spec), VariantSpec.Made(suffix: made) == nil {
                return .failure(.init("a variant's spec says its bytes are \"\(made)\""))
            }
            var blob: BlobID?
            if let named = entry.blob {
                guard let id = BlobID(hex: named), let bytes = pack.blobs[id], bytes.count == entry.bytes else { continue }
                blob = id
            }
            pack.variants[key] = VariantRecord(key: key, originalBlob: originalBlob, spec: entry.spec, blob: blob, format: format,
                                               width: entry.width, height: entry.height, bytes: entry.bytes)
        }
        for (kind, value) in header.placeholders where kind.utf8.count <= 16 && value.utf8.count < 64 << 10 {
            pack.placeholders[kind] = value
        }
        return .success(pack)
    }
}

package struct RemoteRecordError: Error, CustomStringConvertible {
    package let description: String
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
