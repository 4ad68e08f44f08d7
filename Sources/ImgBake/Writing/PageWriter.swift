/// Writes pages: in place over the source, or under `--out` (with the source's permissions),
/// atomically (a temporary name, then a rename), so a reader never sees half a page.
struct PageWriter: Sendable {
    let site: String
    let outputRoot: String

    /// Writes `bytes` as the page at `path` and returns the written file's stamp.
    func write(_ path: String, _ bytes: [UInt8]) throws(BuildError) -> FileStamp? {
        let target = outputRoot + "/" + path
        do {
            try AtomicFile.makeDirectory(AtomicFile.folder(of: target))
            try AtomicFile.write(bytes, to: target, durable: false, mode: AtomicFile.mode(of: site + "/" + path) ?? 0o644)
        } catch {
            throw BuildError(error)
        }
        return FileStamp.of(target)
    }
}
