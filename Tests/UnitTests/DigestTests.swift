import Digest
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// SHA-256 names every blob and variant in existing caches: a change of implementation must give the
/// same digests, byte for byte, or every cache would silently go cold (or worse, mismatch).
@Suite struct DigestTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ])
    func knownVectors(input: String, digest: String) {
        #expect(BlobID(of: Array(input.utf8)).hex == digest)
    }

    @Test func aMillionBytesFedInPiecesGiveTheOneShotDigest() {
        let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        let hasher = SHA256()
        for start in stride(from: 0, to: bytes.count, by: 65_537) {
            hasher.update(bytes[start..<min(start + 65_537, bytes.count)])
        }
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(Hex.lowercase(hasher.finalize()) == expected)
        #expect(BlobID(of: bytes).hex == expected)
        #expect(BlobID(of: bytes[...]).hex == expected) // a slice, hashed without a copy
    }

    /// The variant key of a known spec, as the swift-crypto build computed it (and Python's hashlib
    /// agrees): `sha256("<original>|<canonical spec>|<salt>")`.
    @Test func variantKeysArePinned() throws {
        let original = BlobID(of: Array("abc".utf8))
        let spec = VariantSpec(width: 480, format: .webp, quality: 80, effort: 4, animated: false, keepMetadata: [])
        #expect(spec.canonical == "w=480;f=webp;q=80;e=4;anim=0;keep=")
        let text = "\(original.hex)|\(spec.canonical)|\(VariantSpec.salt)"
        #expect(spec.key(original: original).hex == Hex.lowercase(SHA256.hash(Array(text.utf8))))
        // The salt names the stack that makes the pixels (ImageStack.id): a cache shared by builds on two
        // stacks never gives one the other's variants. Pinned, so a new stack is a deliberate change here.
        #expect(VariantSpec.salt == "imgbake-encoder-9;pyvips-binary-8.18.7-e42572c0")
        #expect(spec.key(original: original).hex == "eed839301f0c17c1c90d7e7da2be29dcc98477353bb1d6302a08be4293e0dff1")
    }

    /// A blob id holds its digest's 32 bytes, not their spelling: it spells, compares and hashes as the
    /// lower-case hex string does, and refuses anything else.
    @Test func blobIDsAreTheirHexStrings() {
        var random = SplitMix(state: 7)
        var ids: [BlobID] = []
        for n in 0..<200 {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) }
            let id = BlobID(of: bytes)
            #expect(id.hex == SHA256.hash(bytes).map { String(format: "%02x", $0) }.joined())
            #expect(BlobID(hex: id.hex) == id)
            ids.append(id)
        }
        #expect(ids.sorted().map(\.hex) == ids.map(\.hex).sorted())
        #expect(Set(ids).count == 200 && Set(ids.map(\.hex)).count == 200)
        for bad in ["", String(repeating: "a", count: 63), String(repeating: "A", count: 64), String(repeating: "g", count: 64),
                    String(repeating: "a", count: 65)] {
            #expect(BlobID(hex: bad) == nil, "\(bad)")
        }
    }
}
