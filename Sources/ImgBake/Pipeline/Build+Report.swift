import Foundation

/// `--check` and `--report`: what a build tells about itself.
extension Build {
    /// `--check`: every reference that would stay remote, with why.
    func remaining(leftAlone: [String: String], scanned: [ScannedPage], images: ResolvedSet) -> [Diagnostic] {
        var remaining: [Diagnostic] = []
        for page in scanned {
            for reference in page.scan.references {
                if let why = leftAlone[page.scan.file.path] {
                    remaining.append(Diagnostic(.error, "\(reference.url): stays remote (\(why))", at: reference.location))
                } else if images.image(for: reference.url) == nil {
                    let why = images.failure(for: reference.url) ?? "not resolved"
                    remaining.append(Diagnostic(.error, "\(reference.url): \(why)", at: reference.location))
                }
            }
            for diagnostic in page.scan.diagnostics where diagnostic.severity == .warning {
                remaining.append(Diagnostic(.error, diagnostic.message, at: diagnostic.location))
            }
        }
        return remaining.sorted(by: Self.order)
    }

    func makeReport(scanned: [ScannedPage], leftAlone: [String: String], unchanged: [PageState], images: ResolvedSet,
                            summary: BuildSummary, counters: FetchCounters, diagnostics: [Diagnostic], check: Bool,
                            transformer: Transformer) async -> BuildReport {
        var builder = ReportBuilder(configuration: configuration, check: check)
        let naming = OutputNaming(publicPath: configuration.output.publicPath)
        builder.add(images: images, naming: naming)
        for page in scanned { builder.add(scanned: page, images: images, skippedBecause: leftAlone[page.scan.file.path]) }
        for state in unchanged { builder.add(unchanged: state) }
        builder.finish(summary: summary, counters: counters, diagnostics: diagnostics)
        if configuration.reportPath?.lowercased().hasSuffix(".html") == true || configuration.reportPath?.lowercased().hasSuffix(".htm") == true {
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
