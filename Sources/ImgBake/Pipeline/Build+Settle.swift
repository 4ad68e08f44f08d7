import Foundation

/// What reading the pages again told, besides what it wrote: warnings at the references of images
/// that failed, the references `--check` fails on, the report's references.
struct Findings: Sendable {
    var imageWarnings: [Diagnostic] = []
    var remaining: [Diagnostic] = []
    var report: ReportBuilder?
}

extension Build {
    /// Pages read, rewritten and written at a time: what memory holds of the pages besides their states.
    static let batchPages = 256

    /// The pages the survey read, read and scanned again a batch at a time now that every image is
    /// resolved: each batch's image files written, then its pages rewritten and written, and their
    /// states recorded, before the next batch is read. A page whose bytes are not the ones surveyed is
    /// left for the next build. A build that writes nothing (`--check`, `--shard`) only looks.
    func settle(_ survey: inout Survey, _ images: inout ResolvedSet, _ plan: BuildPlan,
                _ services: BuildServices) async throws(BuildError) -> (SiteChanges, Findings) {
        var site = SiteChanges()
        var findings = Findings()
        var strings = Interner()
        if plan.reports {
            findings.report = ReportBuilder(configuration: plan.configuration, check: plan.check)
            findings.report?.add(images: images, naming: OutputNaming(publicPath: plan.configuration.output.publicPath))
        }
        for batch in survey.pages.batches(of: Self.batchPages) {
            let surveyed = Dictionary(batch.map { ($0.path, $0.hash) }, uniquingKeysWith: { first, _ in first })
            // The scans the survey kept, and the others read again (each let go with its batch).
            var scanned = await scan(batch.map(\.path).filter { survey.kept[$0] == nil }, plan)
            scanned.pages += batch.compactMap { survey.kept.removeValue(forKey: $0.path) }
            scanned.pages.sort { $0.scan.file.path < $1.scan.file.path }
            var selected: [SelectedPage] = []
            for page in scanned.pages {
                if surveyed[page.scan.file.path] == page.hash { selected.append(select(page, plan)) } else {
                    site.diagnostics.append(changedWhileRunning(page.scan.file.path))
                }
            }
            // Gone or unreadable since the survey: not settled either.
            for problem in scanned.unreadable { site.diagnostics.append(changedWhileRunning(problem.location?.file ?? "")) }
            look(at: selected, images, plan, &findings)
            guard plan.writesSite else { continue }
            site.absorb(try await write(selected, &images, plan, services, strings: &strings, recordedOutputs: site.recordedOutputs))
        }
        return (site, findings)
    }

    /// What a batch's pages say without writing: warnings at references of failed images, what
    /// `--check` fails on, the report's references.
    private func look(at pages: [SelectedPage], _ images: ResolvedSet, _ plan: BuildPlan, _ findings: inout Findings) {
        findings.imageWarnings += images.failureWarnings(for: pages.filter { $0.leftAlone == nil }.map(\.page.scan))
        if plan.check { findings.remaining += remaining(pages, images: images, plan) }
        guard findings.report != nil else { return }
        let rewriter = PageRewriter(output: plan.configuration.output, images: plan.configuration.images, renderer: plan.renderer)
        for page in pages {
            let lcp = page.requests.flatMap { rewriter.priority(of: page.page.scan, requests: $0, images: images.image(for:)).candidate }
            findings.report?.add(scanned: page.page, images: images, skippedBecause: page.leftAlone, lcp: lcp)
        }
    }

    /// Writes a batch: its image files, its pages, and the states of its pages with the files it
    /// placed and the image files it recorded (what the next batch and the next build start from).
    private func write(_ pages: [SelectedPage], _ images: inout ResolvedSet, _ plan: BuildPlan,
                       _ services: BuildServices, strings: inout Interner, recordedOutputs: Set<String>) async throws(BuildError) -> SiteChanges {
        let rewritable = pages.compactMap { page in page.requests.map { RewritablePage(page: page.page, requests: $0) } }
        let rewritten = try await writeImagesAndRewrite(rewritable, &images, plan, services)
        var batch = try writePages(rewritten, rewritable, leftAlone: pages.filter { $0.leftAlone != nil }.map(\.page), images, plan,
                                   strings: &strings)
        // Each image file recorded once per build (the first batch that uses it).
        let outputs = Set(rewritten.rewrites.compactMap { $0?.outputs }.joined()).compactMap { output -> OutputRecord? in
            guard !recordedOutputs.contains(output.fileName), let url = images.representative[output.key] else { return nil }
            return OutputRecord(name: output.fileName, blob: output.blob, key: output.key, url: url.serialized)
        }
        await services.cache.recordBuild(root: plan.stateRoot, pages: batch.states, removingPages: [], outputs: outputs,
                                         placed: batch.placed, removed: [])
        batch.recordedOutputs = Set(outputs.map(\.name))
        // Recorded with their references; in memory without (a large site's states are mostly those).
        for index in batch.states.indices { batch.states[index].references = nil }
        return batch
    }
}
