import Foundation

/// Writes the image files pages refer to into the images folder, from verified cache blobs. A file
/// already there under its content-hashed name is left alone (same name, same bytes).
struct ImageEmitter: Sendable {
    let cache: ImageCache
    let directory: String

    struct Result {
        var written = 0
        /// Images whose blob was missing or damaged: their variants must be made again.
        var corrupt: Set<OriginalKey> = []
        var notes: [String] = []
        /// Files written now (imgbake placed them: they may be removed when nothing uses them).
        var placed: Set<String> = []
    }

    /// Writes again the files builds wrote here before, by name, from the blobs the cache recorded for
    /// them (a name it has no record of is left out): healing lost files and restoring lost outputs.
    func writeRecorded(_ names: [String]) async throws(BuildError) -> (records: [OutputRecord], result: Result) {
        let records = await cache.outputRecords(named: names)
        return (records, try await write(records.map { OutputImage(fileName: $0.name, blob: $0.blob, bytes: -1, key: $0.key) }))
    }

    func write(_ outputs: [OutputImage]) async throws(BuildError) -> Result {
        var unique: [String: OutputImage] = [:]
        for output in outputs { unique[output.fileName] = output }
        do { try AtomicFile.makeDirectory(directory) } catch { throw BuildError(error) }
        StaleTemporaries.remove(in: directory)
        let directory = self.directory
        var result = Result()
        // The first failed file by name, not the last to fail of those in flight: the next build on the
        // same full disk names the same file.
        var failure: (name: String, message: String)?
        await withTaskGroup(of: (OutputImage, ImageCache.CopyOutcome?).self) { group in
            var pending = unique.values.sorted { $0.fileName < $1.fileName }[...]
            func submit() {
                guard let output = pending.popFirst() else { return }
                group.addTask {
                    // Same name, same size: the same bytes (the name holds their hash).
                    let target = directory + "/" + output.fileName
                    let outcome: ImageCache.CopyOutcome? = AtomicFile.size(of: target) == output.bytes
                        ? nil : await cache.copyBlob(output.blob, to: target)
                    return (output, outcome)
                }
            }
            for _ in 0..<4 { submit() }
            while let (output, outcome) = await group.next() {
                switch outcome {
                case nil: break
                case .written:
                    result.written += 1
                    result.placed.insert(output.fileName)
                case .damaged(let why):
                    result.corrupt.insert(output.key)
                    result.notes.append("cache: \(why) for \(output.fileName); made again")
                case .failed(let message):
                    if failure.map({ output.fileName < $0.name }) ?? true { failure = (output.fileName, message) }
                }
                submit()
            }
        }
        if let failure { throw BuildError(.failed, failure.message) }
        return result
    }
}
