/// Writes rewritten pages: in place, or under `--out` (with the source's permissions), atomically.
struct PageWriter: Sendable {
    let site: String
    let outputRoot: String
    let inPlace: Bool

    /// Writes `bytes` as the page at `path` unless the target already holds exactly them (`--out`).
    /// Returns the written file's stamp.
    func write(_ path: String, _ bytes: [UInt8]) throws(BuildError) -> FileStamp? {
        let source = site + "/" + path
        let target = outputRoot + "/" + path
        if !inPlace, FileStamp.of(target)?.size == bytes.count, AtomicFile.read(target) == bytes {
            return FileStamp.of(target)
        }
        do {
            try AtomicFile.makeDirectory(AtomicFile.folder(of: target))
            try AtomicFile.write(bytes, to: target, durable: false, mode: AtomicFile.mode(of: source) ?? 0o644)
        } catch {
            throw BuildError(error)
        }
        return FileStamp.of(target)
    }
}
