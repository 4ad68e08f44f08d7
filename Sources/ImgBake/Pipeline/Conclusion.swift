import Foundation
import ImgBakeTemplates

/// Everything a build did, for its result, report and depfile.
struct BuildOutcome: Sendable {
    var inventory: SiteInventory
    var triage: PageTriage
    var ledger: SiteLedger
    var images: ResolvedSet
    /// From finishing: recording use, keeping the cache in budget.
    var notes: [Diagnostic]
    var counters: FetchCounters
    /// Nil without a remote cache.
    var remote: RemoteCounters?
}

extension BuildRun {
    /// Records what the build used (for least-recently-used eviction), lets go of the cache, and keeps
    /// it under `cache.max_size` if no other build is using it now. What this build used is never
    /// evicted.
    func finish(_ images: ResolvedSet) async -> [Diagnostic] {
        var originals: [OriginalKey] = []
        var variants: [VariantKey] = []
        for case .resolved(let image, _) in images.results.values {
            originals.append(image.key)
            variants += image.variants.map(\.key)
        }
        await services.cache.touch(originals: originals, variants: variants, now: services.manager.now())
        await services.remote?.finishUploads()
        await services.sweep.value
        var notes: [Diagnostic] = services.remote?.diagnostics() ?? []
        if let unstored = services.cache.unstored {
            let kept = unstored.images > 0 ? "; \(unstored.images) image(s) kept in memory for this build only" : ""
            let what = services.cache.readOnly != nil ? "used for reading, nothing stored" : "nothing more stored in it by this build"
            notes.append(Diagnostic(.warning, "cache: \(unstored.reason); \(what)\(kept)"))
        }
        services.releaseCacheLock()
        guard plan.target.trimsCache, services.cache.readOnly == nil, let maxBytes = plan.configuration.cache.maxSize else { return notes }
        let directory = plan.configuration.cache.directory
        guard let exclusive = await exclusiveLock(directory) else {
            return notes + [Diagnostic(.note, "cache: size budget not enforced this time: another build is using the cache")]
        }
        defer { _ = exclusive }
        do {
            let report = try await services.cache.collectGarbage(maxBytes: maxBytes, protectedSince: plan.startedAt)
            if report.removedFiles > 0 {
                notes.append(Diagnostic(.note, "cache: evicted \(report.removedEntries) entries (\(ByteCount.describe(report.freedBytes))) to stay under \(ByteCount.describe(maxBytes))"))
            }
            if report.overBudget {
                notes.append(Diagnostic(.warning, "cache: \(ByteCount.describe(report.remainingBytes)) is over the \(ByteCount.describe(maxBytes)) budget: this build alone uses more"))
            }
        } catch {
            notes.append(Diagnostic(.warning, "cache: garbage collection failed: \(error)"))
        }
        return notes
    }

    /// The cache taken exclusively if no other build holds it, asking a few times over 100 ms: a flock
    /// stays held while any copy of its descriptor is open, and a process starting a child at that
    /// moment (a test runner, a build system running imgbake in-process) holds a copy until the child
    /// execs, which made the just-released shared lock look taken.
    private func exclusiveLock(_ directory: String) async -> CacheLock? {
        for attempt in 0..<5 {
            if let lock = try? BuildServices.lockCache(directory, .exclusive, wait: false) { return lock }
            if attempt < 4 { try? await Task.sleep(for: .milliseconds(25)) }
        }
        return nil
    }

    /// The result of a build the site's seal let off: every page unchanged, nothing read or written.
    func concludeUnchanged(_ inventory: SiteInventory) async throws(BuildError) -> BuildResult {
        progress.update { $0.pagesTotal = inventory.pages.count; $0.pagesUnchanged = inventory.pages.count }
        var triage = PageTriage(previous: [:], unchanged: [], toBuild: [])
        triage.sealed = inventory.pages.count
        let notes = await finish(ResolvedSet())
        return try await conclude(BuildOutcome(inventory: inventory, triage: triage, ledger: SiteLedger(), images: ResolvedSet(),
                                               notes: notes, counters: services.downloader.stats, remote: services.remote?.stats))
    }

    /// The result: counts, diagnostics in order, the exit status; the report and depfile written.
    func conclude(_ outcome: BuildOutcome) async throws(BuildError) -> BuildResult {
        let config = plan.configuration
        var diagnostics = outcome.inventory.diagnostics + outcome.ledger.diagnostics + outcome.notes + outcome.images.notes
        let summary = summarize(outcome)
        // Each diagnostic once, however many paths of the build came upon it.
        var seen = Set<Diagnostic>()
        diagnostics = diagnostics.filter { seen.insert($0).inserted }
        var result = BuildResult(diagnostics: diagnostics.sorted(by: Diagnostic.byPlace), summary: summary, exitCode: 0)
        if config.fetch.policy == .frozen {
            result.missing = outcome.images.missing
            if !result.missing.isEmpty { result.exitCode = 1 }
        }
        if plan.target.listsRemaining {
            result.remaining = outcome.ledger.remaining.sorted(by: Diagnostic.byPlace)
            if !result.remaining.isEmpty { result.exitCode = 1 }
            // A problem `--check` fails on is said once, as the error it is, not also as the warning.
            let failing = Set(result.remaining.map { [$0.message, $0.location?.description ?? ""] })
            result.diagnostics.removeAll { failing.contains([$0.message, $0.location?.description ?? ""]) }
        }
        if config.strict && (summary.imagesFailed > 0 || diagnostics.contains { $0.keptReference != nil }) { result.exitCode = 1 }
        if config.requireAlt == .error, diagnostics.contains(where: { $0.code == .missingAlt }) { result.exitCode = 1 }
        result.diagnostics = result.diagnostics.map { settleSeverity($0, exitCode: result.exitCode) }
        if plan.reports {
            result.report = await makeReport(outcome, summary: summary, diagnostics: result.diagnostics)
        }
        if let report = result.report {
            for path in config.reportPaths { try ReportFile.write(report, to: path) }
        }
        if plan.target.writesSite, result.exitCode == 0, let target = config.depfilePath {
            try Depfile.write(to: target, prerequisites: prerequisites(outcome))
        }
        return result
    }

    /// An error is what fails the build, and nothing else is: a reference left as it is when `--strict`
    /// (or, not in the cache, `--frozen`) fails the build on it; an error-level diagnostic of a build
    /// that exits 0 is a warning.
    private func settleSeverity(_ diagnostic: Diagnostic, exitCode: Int32) -> Diagnostic {
        let config = plan.configuration
        var settled = diagnostic
        let failsBuild = switch diagnostic.keptReference {
        case nil: diagnostic.severity == .error
        case .notInCache: config.strict || config.fetch.policy == .frozen
        case .imageFailed, .unwritable: config.strict
        }
        settled.severity = failsBuild && exitCode != 0 ? .error : min(diagnostic.severity, .warning)
        return settled
    }

    private func summarize(_ outcome: BuildOutcome) -> BuildSummary {
        var summary = BuildSummary()
        summary.pagesScanned = outcome.ledger.pages.scanned
        summary.pagesUnchanged = outcome.triage.unchangedCount + outcome.ledger.pages.unchanged + outcome.ledger.pages.restored
        summary.nothingChanged = outcome.triage.sealed != nil
        summary.pagesRestored = outcome.ledger.pages.restored
        summary.pagesReused = outcome.ledger.pages.reused
        summary.references = outcome.ledger.pages.references
        summary.referencesLocalised = outcome.ledger.pages.localised
        summary.pagesWritten = outcome.ledger.pages.written
        summary.filesWritten = outcome.ledger.files.written
        summary.count(outcome.images)
        summary.requests = outcome.counters.requests
        summary.notModified = outcome.counters.notModified
        summary.bytesDownloaded = outcome.counters.bytes
        summary.remote = outcome.remote
        summary.shard = plan.configuration.shard
        summary.seconds = (ContinuousClock.now - plan.started).seconds
        return summary
    }

    /// Everything the build read: what `make` must watch. The site's own images are site files, so
    /// they are among them.
    private func prerequisites(_ outcome: BuildOutcome) -> [String] {
        let config = plan.configuration
        let inventory = outcome.inventory
        var prerequisites = inventory.folders.map { Depfile.join(config.site, $0) }
            + (inventory.pages + inventory.otherFiles).map { Depfile.join(config.site, $0) }
        if let file = config.configurationFile { prerequisites.append(file) }
        if let folder = config.output.templatesDirectory {
            prerequisites += DefaultTemplates.all.keys.sorted().map { folder + "/" + $0 + ".mustache" }
                .filter { FileManager.default.fileExists(atPath: $0) }
        }
        return prerequisites
    }

    /// The report: the images and every reference, those of the pages read (with how their images
    /// resolved) and those of the pages left unchanged.
    private func makeReport(_ outcome: BuildOutcome, summary: BuildSummary, diagnostics: [Diagnostic]) async -> BuildReport {
        let configuration = plan.configuration
        var builder = outcome.ledger.report ?? ReportBuilder(configuration: configuration, check: plan.target.listsRemaining)
        builder.add(images: outcome.images, naming: OutputNaming(publicPath: configuration.output.publicPath))
        for state in outcome.triage.unchanged { builder.add(unchanged: state) }
        builder.finish(summary: summary, counters: outcome.counters, diagnostics: diagnostics)
        if configuration.reportPaths.contains(where: ReportFile.isHTML) {
            // Thumbnails from the smallest file of each image that pages use (only those were written).
            let folder = configuration.outputRoot + "/" + configuration.output.imagesDirectory + "/"
            for index in builder.report.images.indices {
                let files = builder.report.images[index].files.filter { $0.format != "svg" }.sorted { $0.bytes < $1.bytes }
                guard let bytes = files.lazy.compactMap({ AtomicFile.read(folder + $0.name) }).first else { continue }
                builder.report.images[index].thumbnail = await services.transformer.thumbnail(of: bytes, width: 160)
            }
        }
        return builder.report
    }
}
