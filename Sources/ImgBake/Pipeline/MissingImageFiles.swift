/// Image files pages name that are not there — removed by hand, by another tool, by an older imgbake —
/// written again from the cache by the record of what each name holds, or, when the cache lost the
/// blob, made again from its image if that still gives the same bytes. Each name once per build,
/// however many pages name it.
actor MissingImageFiles {
    enum Outcome: Sendable {
        case written(ImageFilesWritten)
        case unavailable(String)
    }

    private let run: BuildRun
    private let files: ImageFiles
    private var outcomes: [String: Task<Result<Outcome, BuildError>, Never>] = [:]
    private var writable: [String: Bool] = [:]
    /// The records `canWrite` found, for `writeAgain` to use rather than look up again.
    private var records: [String: OutputRecord] = [:]

    init(run: BuildRun, files: ImageFiles) {
        self.run = run
        self.files = files
    }

    /// Whether each of `names` is in the images folder, or can be written there from the cache's
    /// record of it.
    func canWrite(_ names: [String]) async -> Bool {
        let folder = run.plan.imagesFolder + "/"
        for name in names {
            if let known = writable[name] {
                guard known else { return false }
                continue
            }
            var can = FileStamp.of(folder + name) != nil
            if !can, let record = await run.store.outputRecords(named: [name]).first {
                records[name] = record
                can = await run.services.cache.hasBlob(record.blob)
            }
            writable[name] = can
            guard can else { return false }
        }
        return true
    }

    func writeAgain(_ name: String) async throws(BuildError) -> Outcome {
        if let task = outcomes[name] {
            // Counted once, by the page that wrote it.
            return try await task.value.map { outcome in
                if case .written = outcome { return .written(ImageFilesWritten()) }
                return outcome
            }.get()
        }
        let run = self.run, files = self.files, record = records[name]
        let task = Task { await Self.make(name, record, run, files) }
        outcomes[name] = task
        return try await task.value.get()
    }

    private static func make(_ name: String, _ known: OutputRecord?, _ run: BuildRun, _ files: ImageFiles) async -> Result<Outcome, BuildError> {
        guard let record = if let known { known } else { await run.store.outputRecords(named: [name]).first } else {
            return .success(.unavailable("this cache has no record of it; build the page again from its source"))
        }
        do throws(BuildError) {
            var written = try await files.write([OutputImage(fileName: name, blob: record.blob, bytes: -1, key: record.key)])
            if !written.corrupt.isEmpty {
                // The blob is gone or damaged: made again when its image still gives the same file.
                guard let image = await remake(record, run) else {
                    return .success(.unavailable("its image no longer gives the same file (changed upstream, or unavailable); build the page again from its source"))
                }
                written = try await files.write([image])
            }
            return .success(.written(written))
        } catch {
            return .failure(error)
        }
    }

    private static func remake(_ record: OutputRecord, _ run: BuildRun) async -> OutputImage? {
        guard let url = ImageSource(serialized: record.url), case .resolved(let image, _) = await run.services.manager.reload(url, request: nil)
        else { return nil }
        let naming = OutputNaming(publicPath: run.plan.configuration.output.publicPath)
        guard let variant = image.variants.first(where: { naming.fileName($0, of: image) == record.name }) else { return nil }
        return OutputImage(fileName: record.name, blob: variant.blob, bytes: variant.bytes, key: image.key)
    }
}
