/// What a build made but could not store — the cache is read-only, or its disk is full — kept in memory
/// for the rest of that build, so its pages still get their images. Lookups see it first.
struct CacheOverlay: Sendable {
    var originals: [OriginalKey: OriginalRecord] = [:]
    var credits: [BlobID: Credits] = [:]
    var failures: [OriginalKey: FailureRecord] = [:]
    var variants: [VariantKey: VariantRecord] = [:]
    /// By placeholder kind and original blob.
    var placeholders: [String: String] = [:]
    var blobs: [BlobID: [UInt8]] = [:]
    /// Why nothing could be stored, from the first refusal.
    var reason: String?
    /// Originals kept here this build.
    var imagesKept = 0

    static func placeholderKey(_ kind: String, _ blob: BlobID) -> String { kind + "|" + blob.hex }
}
