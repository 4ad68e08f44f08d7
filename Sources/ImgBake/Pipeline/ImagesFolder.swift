import Locking

/// The images folder of a build's output (`output.images_dir`), and the one owner of its files: made
/// once per build, the only part that asks whether a file is there, what a missing one can be written
/// from, and that has an image made again when its cached files turn out to be damaged. The triage,
/// the gathering of pages, the journal and the seal ask it; the journal writes through it.
///
///     name ─▶ there (seen once: nothing removes a file while pages are built)
///          └▶ absent ─▶ writable from a verified blob ─▶ the journal writes it (`write`)
///                     ├▶ to remake: its blob is gone or damaged ─▶ the demand resolves its image again, once
///                     └▶ unavailable (no record, or the image no longer gives that file)
///
/// Its answers are remembered for the build: a file is asked about once however many pages name it.
final class ImagesFolder: Sendable {
    let path: String
    private let cache: any BlobFiles
    private let store: any SiteStates
    /// The image stage (`ImageDemand`), asked to make an image again.
    private let repairs: any ImageRepairing
    private let naming: OutputNaming
    /// The variants a page asks of an image by default: what a file named by a page that was not read
    /// is made again with.
    private let defaultRequest: VariantRequest
    private let writer: ImageFiles
    /// Files seen there, and files absent whose blob was found whole (the journal writes them).
    private let seen = Locked(Seen())
    /// What each absent name can be written from, found once per build.
    private let missing = TaskPool<String, MissingFile>()

    private struct Seen {
        var there: Set<String> = []
        var whole: Set<String> = []
    }

    /// `pool`: the threads files are written on (the journal's).
    init(_ plan: BuildPlan, store: any SiteStates, cache: any BlobFiles, repairs: any ImageRepairing, pool: WorkerPool) {
        path = plan.imagesFolder
        self.cache = cache
        self.store = store
        self.repairs = repairs
        naming = OutputNaming(publicPath: plan.configuration.output.publicPath)
        defaultRequest = plan.pageSettings.defaultRequest
        writer = ImageFiles(cache: cache, directory: plan.imagesFolder, pool: pool)
    }

    // MARK: Is it there

    /// Whether a file of this name is in the folder (remembered once seen). Blocking: a `stat`.
    func isThere(_ name: String) -> Bool {
        if seen.withLock({ $0.there.contains(name) }) { return true }
        guard FileStamp.of(path + "/" + name) != nil else { return false }
        seen.withLock { _ = $0.there.insert(name) }
        return true
    }

    /// Whether every one of `names` is there.
    func holdsAll(_ names: [String]) -> Bool {
        names.allSatisfy(isThere)
    }

    /// The stamps of these files of `plan`'s images folder as they are now (nil where one is missing):
    /// what the seal records and compares, before a build makes its folder and after; never remembered.
    static func stamps(of names: [String], _ plan: BuildPlan) -> [FileStamp?] {
        let folder = plan.imagesFolder + "/"
        return names.map { FileStamp.of(folder + $0) }
    }

    // MARK: What an absent file is written from

    /// What the absent file `name` can be written from: the cache's record of what the name holds, its
    /// blob checked; when the blob is gone or damaged, its image made again if that still gives the
    /// same file.
    func missingFile(_ name: String) async -> MissingFile {
        await missing.value(for: name) { Task { await self.find(name) } }
    }

    /// A missing file found writable whose blob turned out damaged when it was written: asked about
    /// again, it goes through the repair path.
    func damaged(_ name: String) {
        _ = missing.take(name)
    }

    /// Of `names`, those not there, each with what it can be written from.
    func absent(among names: [String]) async -> [String: MissingFile] {
        var found: [String: MissingFile] = [:]
        for name in names where !isThere(name) { found[name] = await missingFile(name) }
        return found
    }

    private func find(_ name: String) async -> MissingFile {
        guard let record = await store.outputRecords(named: [name]).first else {
            return .unavailable("this cache has no record of it; build the page again from its source")
        }
        if await cache.checkBlob(record.blob) { return .writable(OutputImage(fileName: name, blob: record.blob, bytes: -1, key: record.key)) }
        // The blob is gone or damaged: made again when its image still gives the same file.
        guard let url = ImageSource(serialized: record.url),
              case .resolved(let image, _)? = await remade(ImageDemand.Wanted(key: record.key, source: url, request: defaultRequest)),
              let variant = image.variants.first(where: { naming.fileName($0, of: image) == name }) else {
            return .unavailable("its image no longer gives the same file (changed upstream, or unavailable); build the page again from its source")
        }
        return .writable(OutputImage(fileName: name, blob: variant.blob, bytes: variant.bytes, key: image.key))
    }

    // MARK: An image's files

    /// An image as a page that is written needs it: each of its files there, or with a whole blob to be
    /// written from. One whose blob is missing or damaged has its image resolved again (once per build
    /// however many pages find it so), which makes it again.
    func whole(_ resolution: Resolution, as wanted: ImageDemand.Wanted) async -> Resolution {
        guard case .resolved(let image, _) = resolution, !(await filesAreWhole(image)) else { return resolution }
        return await remade(wanted) ?? resolution
    }

    /// The one repair path of the build's image files: the image stage resolves the image again (once
    /// per build, however many pages and names lead here), which makes what the cache lost.
    private func remade(_ wanted: ImageDemand.Wanted) async -> Resolution? {
        await repairs.repair(wanted)
    }

    private func filesAreWhole(_ image: ResolvedImage) async -> Bool {
        for variant in image.variants {
            let name = naming.fileName(variant, of: image)
            guard !seen.withLock({ $0.there.contains(name) || $0.whole.contains(name) }) else { continue }
            // Same name, same size: the same bytes (the name holds their hash).
            if AtomicFile.size(of: path + "/" + name) == variant.bytes {
                seen.withLock { _ = $0.there.insert(name) }
            } else {
                guard await cache.checkBlob(variant.blob) else { return false }
                seen.withLock { _ = $0.whole.insert(name) }
            }
        }
        return true
    }

    // MARK: Writing

    /// Writes `outputs` (those not written this build yet) from their verified blobs, and says what
    /// happened to them.
    func write(_ outputs: some Collection<OutputImage> & Sendable) async throws(BuildError) -> ImageFilesWritten {
        try await writer.write(outputs)
    }
}

/// What the images folder asks of the image stage: an image resolved again after its cached files
/// turned out to be damaged (`ImageDemand`); nil when it is not this build's to make.
protocol ImageRepairing: Sendable {
    func repair(_ wanted: ImageDemand.Wanted) async -> Resolution?
}

extension ImageDemand: ImageRepairing {}

/// The images folder's writes: the image files pages refer to, from verified cache blobs, each once
/// per build however many pages use it. A file already there under its content-hashed name and size is
/// left alone (same name, same bytes).
private actor ImageFiles {
    private let cache: any BlobFiles
    private let directory: String
    /// Where the files are checked and written.
    private let pool: WorkerPool
    private var prepared = false
    /// Each file's check-and-write, once per build (a damaged one is forgotten: the next ask tries again).
    private let files = TaskPool<String, Outcome>()

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
        try await prepare()
        let asked = outputs.sorted(by: { $0.fileName < $1.fileName }).map { output in (output, ask(output)) }
        var result = ImageFilesWritten()
        // The first failed file by name: the next build on the same full disk names the same file.
        var failure: String?
        for (output, (task, fresh)) in asked {
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

    /// The folder made, and what a killed build left half-written in it removed, before the first write.
    private func prepare() async throws(BuildError) {
        guard !prepared else { return }
        let directory = self.directory
        try await pool.run { () throws(BuildError) in
            do throws(WriteError) { try AtomicFile.makeDirectory(directory) } catch { throw BuildError(error) }
            StaleTemporaries.remove(in: directory)
        }
        prepared = true
    }

    /// The check-and-write of `output`, joined or started (`fresh`: started by this ask).
    private func ask(_ output: OutputImage) -> (Task<Outcome, Never>, fresh: Bool) {
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
        return (task, started)
    }
}
