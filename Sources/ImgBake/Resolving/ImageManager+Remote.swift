/// The remote cache in the data flow: asked after the local cache misses and before the origin or a
/// transform, one pack per image; what the build made is written back to it. Everything found there
/// is kept locally, so the rest of the build finds it in the local cache.
extension ImageManager {
    /// On a local miss: the image's pack, kept in the local cache (its original's record, variants and
    /// placeholders). The original's bytes stay in the remote until a transform needs them
    /// (`localiseOriginal`).
    nonisolated func remoteOriginal(_ key: OriginalKey) async -> OriginalRecord? {
        guard let remote, let contents = await remote.localise(.original(key)), contents.hasOriginal else { return nil }
        return try? await cache.original(key)
    }

    /// Adds to what the local cache had the variants (and placeholder) the image's pack has. Asked
    /// once per image per build: a pack already read (by `remoteOriginal`) costs no request.
    nonisolated func withRemoteVariants(_ local: (variants: [VariantKey: VariantRecord], placeholder: String?), _ keys: [VariantKey],
                                        placeholder kind: String?, of record: OriginalRecord) async
        -> (variants: [VariantKey: VariantRecord], placeholder: String?) {
        let missing = keys.filter { local.variants[$0] == nil }
        let wanted = local.placeholder == nil ? kind : nil
        guard let remote, !missing.isEmpty || wanted != nil,
              let contents = await remote.localise(PackKey.of(record)), contents.originalBlob == record.blob,
              missing.contains(where: contents.variants.contains) || wanted.map(contents.placeholders.contains) == true,
              let found = try? await cache.storedVariants(missing, placeholder: wanted, of: record.blob) else { return local }
        return (local.variants.merging(found.variants) { a, _ in a }, local.placeholder ?? found.placeholder)
    }

    /// Before a decode: the original's bytes, from the remote when only it has them (checked against
    /// their hash; if it has not, the decode finds them missing and they are fetched from the origin).
    /// An SVG's bytes come with its pack.
    nonisolated func localiseOriginal(_ record: OriginalRecord) async {
        guard let remote, record.format != .svg, !record.key.isSiteFile, !(await cache.hasBlob(record.blob)),
              let bytes = await remote.original(record.blob) else { return }
        await cache.storeBlob(bytes, as: record.blob)
    }

    /// A downloaded or revalidated original, for its pack. A file of the site has none there: every
    /// machine building the site has it (its variants do go up).
    nonisolated func writeBack(_ record: OriginalRecord, credits: Credits, downloaded: Bool = true) {
        remote?.noteOriginal(record, credits: credits, downloaded: downloaded)
    }

    /// Variants just made, for the pack.
    nonisolated func writeBack(_ rows: [VariantRecord], of record: OriginalRecord, placeholder: (kind: String, value: String)?) {
        remote?.noteVariants(rows, placeholder: placeholder, of: record)
    }

    /// A set of variants is done: the image's pack goes up if this build made anything for it. In a
    /// `--shard` build, an image this machine already had goes up too (the pack is read first if this
    /// build has not: nothing is written when the remote has it all).
    nonisolated func writeBackDone(_ record: OriginalRecord, request: VariantRequest, origin: ResolutionOrigin, credits: Credits) async {
        guard let remote else { return }
        if remote.uploadsEverythingUsed, origin != .downloaded {
            if !record.key.isSiteFile {
                remote.noteOriginal(record, credits: credits, downloaded: await cache.hasBlob(record.blob))
            }
            if record.format != .svg {
                let source = SourceInfo(format: record.format, width: record.width, height: record.height, pages: record.pages)
                let keys = plan.specs(for: source, request: request).map { $0.key(original: record.blob) }
                let kind = placeholder == .none ? nil : placeholder.rawValue
                if let stored = try? await cache.storedVariants(keys, placeholder: kind, of: record.blob) {
                    remote.noteVariants(Array(stored.variants.values), placeholder: stored.placeholder.map { (kind!, $0) }, of: record)
                }
            }
        }
        remote.imageDone(record, credits: credits)
    }
}
