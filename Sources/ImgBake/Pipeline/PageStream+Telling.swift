extension PageStream {
    /// `--check`: every reference that would stay remote, with why, and every file the page names that
    /// does not exist (`PageModel.uses`, as the clean-up counts them).
    func remaining(_ model: PageModel, _ images: PageImages) -> [Diagnostic] {
        var remaining: [Diagnostic] = []
        let folder = plan.imagesFolder + "/"
        for use in model.uses(nil, publicPaths: plan.scanSettings.ownPrefixes) where FileStamp.of(folder + use.name) == nil {
            remaining.append(Diagnostic(.error, "refers to \(plan.ownPublicPath)\(use.name), which does not exist", at: use.location))
        }
        for reference in model.scan.references {
            if let why = model.leftAlone {
                remaining.append(Diagnostic(.error, "\(reference.source): stays remote (\(why))", at: reference.location))
            } else if images.image(for: reference.source) == nil {
                let why = images.failure(for: reference.source)?.reason ?? "not resolved"
                remaining.append(Diagnostic(.error, "\(reference.source): \(why)", at: reference.location))
            }
        }
        // What would stay remote; a missing alt is not that (build.require_alt = "error" fails a build on it).
        for diagnostic in model.diagnostics where diagnostic.severity == .warning && diagnostic.message != HTMLScanner.missingAltMessage {
            remaining.append(Diagnostic(.error, diagnostic.message, at: diagnostic.location))
        }
        return remaining
    }

    /// The page's references for the report, each with its image's key (how it resolved is filled in
    /// when every image is known) and the reason it was taken for the likely LCP image.
    func report(_ model: PageModel, _ images: PageImages, _ priority: LoadingPriority) -> ReportPage {
        var page = ReportPage()
        for (index, reference) in model.scan.references.enumerated() {
            var entry = BuildReport.Reference(file: reference.location.file, line: reference.location.line, column: reference.location.column,
                                              kind: reference.kind.rawValue, url: reference.source.description, outcome: "skipped",
                                              reason: model.leftAlone)
            if priority.candidate?.index == index { entry.lcp = priority.candidate?.reason }
            page.references.append(entry)
            page.keys.append(model.leftAlone == nil && images.resolutions[reference.source] != nil ? images.keys[reference.source] : nil)
        }
        return page
    }
}
