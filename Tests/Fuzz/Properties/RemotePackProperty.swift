import Foundation
import ImgBake

/// `remote-pack`: what another machine wrote to the shared store is data, not trusted
/// (docs/REMOTE-CACHE.md). Whatever the bytes, reading them as a pack (and as `layout.json`) must not
/// crash or hang, and a pack that is taken must hold only what it vouches for: every blob hashes to
/// its name, every variant's key is its spec's key for this encoder and its bytes are there, and
/// writing the pack again and reading that back gives the same pack.
package enum RemotePackProperty {
    /// The keys a pack is read for: a remote image's and a site file's.
    static let keys: [PackKey] = [.original(OriginalKey(sampleURL)), .content(BlobID(of: originalBytes))]
    static let sampleURL = "https://img.example/photo.jpg"
    static let originalBytes = Array("original bytes".utf8)

    package static func check(_ input: [UInt8]) -> String? {
        if let layout = RemoteLayout.parse(input), RemoteLayout.parse(layout.bytes)?.layouts != layout.layouts {
            return "layout.json \(layout.layouts) does not read back the same"
        }
        for expected in keys {
            guard case .success(let pack) = Pack.decode(input, expected: expected, maxOriginalBytes: 1 << 30) else { continue }
            if let problem = inconsistency(pack) { return "pack for \(expected.string): \(problem)" }
            let again = Pack.encode(key: expected, originalBlob: pack.originalBlob, original: pack.original,
                                    variants: Array(pack.variants.values), placeholders: pack.placeholders,
                                    blobs: pack.blobs.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, written: pack.written)
            switch Pack.decode(again, expected: expected, maxOriginalBytes: 1 << 30) {
            case .failure(let why): return "pack for \(expected.string) written again does not read: \(why)"
            case .success(let read):
                guard read.variants == pack.variants, read.placeholders == pack.placeholders,
                      read.original?.record == pack.original?.record, read.original?.credits == pack.original?.credits,
                      read.originalBlob == pack.originalBlob, read.written == pack.written,
                      read.blobs == pack.blobs else {
                    return "pack for \(expected.string) written again reads back otherwise"
                }
            }
        }
        return nil
    }

    /// Whether some key takes `input` as a pack.
    package static func reads(_ input: [UInt8]) -> Bool {
        keys.contains { if case .success = Pack.decode(input, expected: $0, maxOriginalBytes: 1 << 30) { true } else { false } }
    }

    private static func inconsistency(_ pack: Pack) -> String? {
        for (id, bytes) in pack.blobs where BlobID(of: bytes) != id { return "blob \(id.hex.prefix(12)) does not hash to its name" }
        for (key, variant) in pack.variants {
            guard key == variant.key, key == VariantSpec.key(original: pack.originalBlob, canonical: variant.spec) else {
                return "variant \(key.hex.prefix(12)) is not its spec's key"
            }
            guard variant.originalBlob == pack.originalBlob else { return "variant \(key.hex.prefix(12)) of another original" }
            if let blob = variant.blob, pack.blobs[blob]?.count != variant.bytes { return "variant \(key.hex.prefix(12)) without its bytes" }
        }
        if let original = pack.original, original.record.blob != pack.originalBlob { return "its original names another blob" }
        return nil
    }

    /// Packs as imgbake writes them, for the seed corpus (`IMGBAKE_WRITE_FUZZ_SEEDS=1` in FuzzSeedTests):
    /// a remote image with two variants and a dropped one, a site file's pack, an empty one. Written by
    /// hand as imgbake's JSON, so that the corpus does not depend on building a record.
    package static func samples() -> [[UInt8]] {
        let original = originalBytes, small = Array("RIFF small webp".utf8), large = Array("RIFF large webp".utf8)
        let originalBlob = BlobID(of: original)
        func variant(_ width: Int, _ bytes: [UInt8]?) -> [String: Any] {
            let spec = "w=\(width);f=webp;q=81;e=2;anim=0;keep="
            var entry: [String: Any] = ["key": VariantSpec.key(original: originalBlob, canonical: spec).hex, "spec": spec,
                                        "format": "webp", "width": width, "height": width / 2, "bytes": bytes?.count ?? 900]
            if let bytes { entry["blob"] = BlobID(of: bytes).hex }
            return entry
        }
        func pack(key: String, original record: [String: Any]?, variants: [[String: Any]], blobs: [[UInt8]],
                  placeholders: [String: String]) -> [UInt8] {
            var offset = 0
            let entries = blobs.map { bytes -> [String: Any] in
                defer { offset += bytes.count }
                return ["blob": BlobID(of: bytes).hex, "offset": offset, "length": bytes.count]
            }
            var header: [String: Any] = ["layout": RemoteLayout.version, "key": key, "originalBlob": originalBlob.hex, "written": 1_795_000_000.5,
                                         "writer": "imgbake fuzz", "variants": variants, "placeholders": placeholders, "blobs": entries]
            if let record { header["original"] = record }
            let json = Array(try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes]))
            return Array("\(Pack.magic) \(RemoteLayout.version) \(json.count)\n".utf8) + json + blobs.flatMap { $0 }
        }
        let record: [String: Any] = ["url": sampleURL, "blob": originalBlob.hex, "format": "jpeg", "width": 1600, "height": 800,
                                     "pages": 1, "bytes": original.count, "etag": "\"abc\"", "cacheControl": "max-age=60",
                                     "fetchedAt": 1_795_000_000.0, "copyright": "© someone"]
        return [
            pack(key: sampleURL, original: record, variants: [variant(400, small), variant(800, large), variant(1600, nil)],
                 blobs: [small, large], placeholders: ["color": "#336699", "lqip": "data:image/webp;base64,UklGRg=="]),
            pack(key: "blob:" + originalBlob.hex, original: nil, variants: [variant(400, small)], blobs: [small], placeholders: [:]),
            pack(key: sampleURL, original: record, variants: [], blobs: [], placeholders: [:]),
            RemoteLayout(layouts: [1, 2]).bytes,
        ]
    }
}
