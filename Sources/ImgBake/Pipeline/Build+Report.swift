import Foundation

/// `--check` and `--report`: what a build tells about itself.
extension Build {
    /// `--check`: every reference of `pages` that would stay remote, with why, and every reference to a
    /// file of the images folder that is not there.
    func remaining(_ pages: [SelectedPage], images: ResolvedSet, _ plan: BuildPlan) -> [Diagnostic] {
        var remaining: [Diagnostic] = []
        var exists: [String: Bool] = [:]
        for selected in pages {
            let page = selected.page
            for use in page.scan.outputs {
                let there = exists[use.name] ?? (FileStamp.of(plan.imagesFolder + "/" + use.name) != nil)
                exists[use.name] = there
                if !there { remaining.append(Diagnostic(.error, "refers to \(plan.ownPublicPath)\(use.name), which does not exist", at: use.location)) }
            }
            for reference in page.scan.references {
                if let why = selected.leftAlone {
                    remaining.append(Diagnostic(.error, "\(reference.source): stays remote (\(why))", at: reference.location))
                } else if images.image(for: reference.source) == nil {
                    let why = images.failure(for: reference.source) ?? "not resolved"
                    remaining.append(Diagnostic(.error, "\(reference.source): \(why)", at: reference.location))
                }
            }
            // What would stay remote; a missing alt is not that (build.require_alt = "error" fails a build on it).
            for diagnostic in page.scan.diagnostics where diagnostic.severity == .warning && diagnostic.message != HTMLScanner.missingAltMessage {
                remaining.append(Diagnostic(.error, diagnostic.message, at: diagnostic.location))
            }
        }
        return remaining
    }

    /// The report: the images and the references of the pages read (gathered while they were settled),
    /// then those of the pages left unchanged.
    func makeReport(_ outcome: Outcome, summary: BuildSummary, diagnostics: [Diagnostic], transformer: Transformer) async -> BuildReport {
        let configuration = outcome.plan.configuration
        var builder = outcome.findings.report ?? ReportBuilder(configuration: configuration, check: outcome.plan.check)
        for state in outcome.pages.unchanged { builder.add(unchanged: state) }
        builder.finish(summary: summary, counters: outcome.counters, diagnostics: diagnostics)
        if let path = configuration.reportPath, ReportFile.isHTML(path) {
            // Thumbnails from the smallest file of each image that pages use (only those were written).
            let folder = configuration.outputRoot + "/" + configuration.output.imagesDirectory + "/"
            for index in builder.report.images.indices {
                let files = builder.report.images[index].files.filter { $0.format != "svg" }.sorted { $0.bytes < $1.bytes }
                guard let bytes = files.lazy.compactMap({ AtomicFile.read(folder + $0.name) }).first else { continue }
                builder.report.images[index].thumbnail = await transformer.thumbnail(of: bytes, width: 160)
            }
        }
        return builder.report
    }
}
