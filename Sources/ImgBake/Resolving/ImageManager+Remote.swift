/// The remote cache in the data flow: asked after the local cache misses and before the origin or a
/// transform; what the build made is written back to it. Everything found there is kept locally.
extension ImageManager {
    /// On a local miss: the remote's record of the original, kept in the local index. Its bytes stay
    /// in the remote until a transform needs them (`localiseOriginal`).
    nonisolated func remoteOriginal(_ key: OriginalKey) async -> OriginalRecord? {
        guard let remote, let (record, credits) = await remote.original(key) else { return nil }
        await cache.storeRemoteOriginal(record, credits: credits, now: now())
        return record
    }

    /// Adds to what the local cache had the variants (and placeholder) the remote has, stored locally.
    nonisolated func withRemoteVariants(_ local: (variants: [VariantKey: VariantRecord], placeholder: String?), _ keys: [VariantKey],
                                        placeholder kind: String?, of original: BlobID) async
        -> (variants: [VariantKey: VariantRecord], placeholder: String?) {
        let missing = keys.filter { local.variants[$0] == nil }
        let wanted = local.placeholder == nil ? kind : nil
        guard let remote, !missing.isEmpty || wanted != nil else { return local }
        let found = await remote.variants(missing, of: original, placeholder: wanted)
        guard !found.variants.isEmpty || found.placeholder != nil else { return local }
        let rows = await cache.storeVariants(found.variants, of: original,
                                             placeholder: found.placeholder.map { (wanted!, $0) }, now: now())
        return (local.variants.merging(rows.map { ($0.key, $0) }) { a, _ in a }, local.placeholder ?? found.placeholder)
    }

    /// Before a decode: the original's bytes, from the remote when only it has them (checked against
    /// their hash; if it has not, the decode finds them missing and they are fetched from the origin).
    nonisolated func localiseOriginal(_ record: OriginalRecord) async {
        guard let remote, !(await cache.hasBlob(record.blob)), let bytes = await remote.blob(record.blob) else { return }
        await cache.storeBlob(bytes, as: record.blob)
    }

    /// A downloaded or revalidated original goes up (its blob, then its record). A file of the site
    /// does not: every machine building the site has it (its variants do go up).
    nonisolated func writeBack(_ record: OriginalRecord, credits: Credits) {
        guard let remote, !record.key.isSiteFile else { return }
        remote.upload(.original(record, credits))
    }

    /// Variants just made go up.
    nonisolated func writeBack(_ rows: [VariantRecord], of original: BlobID, placeholder: (kind: String, value: String)?) {
        guard !rows.isEmpty || placeholder != nil else { return }
        remote?.upload(.variants(rows, of: original, placeholder: placeholder))
    }

    /// In a `--shard` build, an image this machine already had goes up too (nothing is sent for
    /// what the remote has: blobs are checked with HEAD first).
    nonisolated func writeBackUsed(_ record: OriginalRecord, _ made: MadeVariants, origin: ResolutionOrigin, credits: Credits) {
        guard let remote, remote.uploadsEverythingUsed, origin != .downloaded, !remote.cameFromRemote(record.key) else { return }
        writeBack(record, credits: credits)
        guard record.format != .svg else { return }
        let rows = made.variants.map {
            VariantRecord(key: $0.key, originalBlob: record.blob, spec: $0.spec.canonical, blob: $0.blob, format: $0.format,
                          width: $0.width, height: $0.height, bytes: $0.bytes)
        }
        writeBack(rows, of: record.blob, placeholder: made.placeholder.map { (placeholder.rawValue, $0) })
    }
}
