/// Image files pages name that are not there — removed by hand, by another tool, by an older imgbake —
/// and what each can be written again from: the cache's record of what the name holds, with its blob
/// checked, or, when the cache lost the blob, the image made again if it still gives the same bytes.
/// Each name once per build, however many pages name it. Found while pages are gathered; the journal
/// writes them.
final class MissingImageFiles: Sendable {
    private let finder: Finder
    private let files = TaskPool<String, MissingFile>(keeping: .forTheBuild)

    init(run: BuildRun) {
        finder = Finder(store: run.store, cache: run.services.cache, manager: run.services.manager,
                        naming: OutputNaming(publicPath: run.plan.configuration.output.publicPath))
    }

    /// What the missing file `name` can be written from, or why it cannot be.
    func file(named name: String) async -> MissingFile {
        let finder = self.finder
        return await files.value(for: name) { Task { await finder.find(name) } }
    }

    /// The same for several names, in one call (a page built elsewhere names all its files at once).
    func files(named names: [String]) async -> [String: MissingFile] {
        var found: [String: MissingFile] = [:]
        for name in names { found[name] = await file(named: name) }
        return found
    }
}

/// Where a missing file can be written from: the record of what its name holds, its blob, its image.
private struct Finder: Sendable {
    let store: any SiteStates
    let cache: any BlobFiles
    let manager: ImageManager
    let naming: OutputNaming

    func find(_ name: String) async -> MissingFile {
        guard let record = await store.outputRecords(named: [name]).first else {
            return .unavailable("this cache has no record of it; build the page again from its source")
        }
        if await cache.checkBlob(record.blob) { return .writable(OutputImage(fileName: name, blob: record.blob, bytes: -1, key: record.key)) }
        // The blob is gone or damaged: made again when its image still gives the same file.
        guard let url = ImageSource(serialized: record.url), case .resolved(let image, _) = await manager.reload(url, request: nil),
              let variant = image.variants.first(where: { naming.fileName($0, of: image) == name }) else {
            return .unavailable("its image no longer gives the same file (changed upstream, or unavailable); build the page again from its source")
        }
        return .writable(OutputImage(fileName: name, blob: variant.blob, bytes: variant.bytes, key: image.key))
    }
}
