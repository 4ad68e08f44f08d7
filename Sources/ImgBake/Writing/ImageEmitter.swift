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

    func write(_ outputs: [OutputImage]) async throws(BuildError) -> Result {
        var unique: [String: OutputImage] = [:]
        for output in outputs { unique[output.fileName] = output }
        do { try AtomicFile.makeDirectory(directory) } catch { throw BuildError(.failed, error.description) }
        StaleTemporaries.remove(in: directory)
        let directory = self.directory
        var result = Result()
        var failure: String?
        await withTaskGroup(of: (OutputImage, EmitOutcome).self) { group in
            var pending = unique.values.sorted { $0.fileName < $1.fileName }[...]
            func submit() {
                guard let output = pending.popFirst() else { return }
                group.addTask {
                    let outcome = (try? await cache.perform { index, blobs in
                        try Self.emit(output, to: directory, index: index, blobs: blobs)
                    }) ?? .failed("cannot write \(directory)/\(output.fileName)")
                    return (output, outcome)
                }
            }
            for _ in 0..<4 { submit() }
            while let (output, outcome) = await group.next() {
                switch outcome {
                case .present: break
                case .written:
                    result.written += 1
                    result.placed.insert(output.fileName)
                case .damaged(let why):
                    result.corrupt.insert(output.key)
                    result.notes.append("cache: \(why) for \(output.fileName); made again")
                case .failed(let why): failure = why
                }
                submit()
            }
        }
        if let failure { throw BuildError(.failed, failure) }
        return result
    }

    enum EmitOutcome: Sendable {
        case present, written
        case damaged(String)
        case failed(String)
    }

    private static func emit(_ output: OutputImage, to directory: String, index: CacheIndex, blobs: BlobStore) throws -> EmitOutcome {
        let target = directory + "/" + output.fileName
        if AtomicFile.size(of: target) == output.bytes { return .present }
        switch blobs.read(output.blob) {
        case .found(let bytes):
            do { try AtomicFile.write(bytes, to: target, durable: false) } catch { return .failed(error.description) }
            return .written
        case .corrupt:
            try index.removeAll(withBlob: output.blob)
            return .damaged("blob \(output.blob.hex.prefix(12)) did not match its hash")
        case .missing:
            try index.removeAll(withBlob: output.blob)
            return .damaged("blob \(output.blob.hex.prefix(12)) was missing")
        }
    }
}
