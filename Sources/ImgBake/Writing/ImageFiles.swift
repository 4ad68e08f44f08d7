import Foundation

/// What writing image files did.
struct ImageFilesWritten: Sendable {
    var written = 0
    /// Files whose blob turned out missing or damaged: not written. (A page's blobs are checked before
    /// it is planned, so for a page this is a blob damaged since; for a lost output being written again,
    /// one the cache lost.)
    var damaged: Set<String> = []
    var notes: [String] = []
    /// Files written now (imgbake placed them: they may be removed when nothing uses them).
    var placed: Set<String> = []
    /// Of `placed`, files pages already named that were missing, written again.
    var again = 0

    mutating func add(_ other: ImageFilesWritten) {
        written += other.written
        damaged.formUnion(other.damaged)
        notes += other.notes
        placed.formUnion(other.placed)
        again += other.again
    }
}

/// Writes the image files pages refer to into the images folder, from verified cache blobs, each once
/// per build however many pages use it. A file already there under its content-hashed name and size is
/// left alone (same name, same bytes). The journal asks for a page's files before it writes the page.
actor ImageFiles {
    private let cache: any BlobFiles
    private let directory: String
    /// Where the files are checked and written.
    private let pool: WorkerPool
    private var prepared = false
    /// Each file's check-and-write, once per build (a damaged one is forgotten: the next ask tries again).
    private let files = TaskPool<String, Outcome>(keeping: .forTheBuild)

    private enum Outcome: Sendable {
        case there
        case written
        case damaged(String)
        case failed(String)
    }

    init(cache: any BlobFiles, directory: String, pool: WorkerPool) {
        self.cache = cache
        self.directory = directory
        self.pool = pool
    }

    /// Writes `outputs` (those not written this build yet), and says what happened to them.
    func write(_ outputs: some Collection<OutputImage>) async throws(BuildError) -> ImageFilesWritten {
        guard !outputs.isEmpty else { return ImageFilesWritten() }
        if !prepared {
            let directory = self.directory
            try await pool.run { () throws(BuildError) in
                do throws(WriteError) { try AtomicFile.makeDirectory(directory) } catch { throw BuildError(error) }
                StaleTemporaries.remove(in: directory)
            }
            prepared = true
        }
        var result = ImageFilesWritten()
        var asked: [(OutputImage, Task<Outcome, Never>, fresh: Bool)] = []
        for output in outputs.sorted(by: { $0.fileName < $1.fileName }) {
            let cache = self.cache, target = directory + "/" + output.fileName, pool = self.pool
            let (task, started) = files.task(for: output.fileName) {
                Task<Outcome, Never>(executorPreference: pool) {
                    // Same name, same size: the same bytes (the name holds their hash).
                    if AtomicFile.size(of: target) == output.bytes { return .there }
                    switch await cache.copyBlob(output.blob, to: target) {
                    case .written: return .written
                    case .damaged(let why): return .damaged(why)
                    case .failed(let message): return .failed(message)
                    }
                }
            }
            asked.append((output, task, started))
        }
        // The first failed file by name: the next build on the same full disk names the same file.
        var failure: String?
        for (output, task, fresh) in asked {
            switch await task.value {
            case .there: break
            case .written:
                if fresh {
                    result.written += 1
                    result.placed.insert(output.fileName)
                }
            case .damaged(let why):
                result.damaged.insert(output.fileName)
                if fresh { result.notes.append("cache: \(why) for \(output.fileName)") }
                // Checked again by the next build, which makes it again.
                files.forget(output.fileName, ifStill: task)
            case .failed(let message):
                failure = failure ?? message
            }
        }
        if let failure { throw BuildError(.failed, failure) }
        return result
    }
}
