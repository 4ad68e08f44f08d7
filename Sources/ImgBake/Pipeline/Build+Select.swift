/// The references a build localises, and with what variants.
struct Selection: Sendable {
    /// Every page scanned (references to imgbake's own outputs taken out).
    var pages: [ScannedPage]
    /// Pages whose references are localised, with the variants each reference asks for.
    var rewritable: [RewritablePage]
    /// Pages whose references stay as they are, with why.
    var leftAlone: [String: String]
    var diagnostics: [Diagnostic]
    var references: Int
}

struct RewritablePage: Sendable {
    var page: ScannedPage
    /// Aligned with `page.scan.references`.
    var requests: [VariantRequest]
}

extension Build {
    /// Which references to localise: all of them, except on a page whose remote `<base href>` would
    /// make a local path wrong; each with its element's variant overrides, or the configured ones.
    func select(_ scanned: ScanOutcome, _ plan: BuildPlan) -> Selection {
        let config = plan.configuration
        let defaultRequest = VariantRequest(config.images)
        var selection = Selection(pages: [], rewritable: [], leftAlone: [:], diagnostics: scanned.unreadable, references: 0)
        for var page in scanned.pages {
            selection.diagnostics += page.scan.diagnostics
            if let own = plan.ownOutputPrefix { page.scan.references.removeAll { $0.source.remoteURL?.string.hasPrefix(own) == true } }
            selection.pages.append(page)
            selection.references += page.scan.references.count
            if let base = page.scan.remoteBase, !page.scan.references.isEmpty, !config.output.publicPathIsAbsolute {
                let why = "page has a remote <base href> (\(base.url)); its \(page.scan.references.count) image references are left as they are, because a local path would resolve against that base too (set public_path to an absolute URL to localise them)"
                selection.diagnostics.append(Diagnostic(.warning, why, at: base.location))
                selection.leftAlone[page.scan.file.path] = "remote <base href>"
                continue
            }
            let requests = page.scan.references.map { reference -> VariantRequest in
                switch reference.request(over: defaultRequest) {
                case .success(let request): return request
                case .failure(let problem):
                    selection.diagnostics.append(Diagnostic(.warning, problem.description, at: reference.location))
                    return defaultRequest
                }
            }
            selection.rewritable.append(RewritablePage(page: page, requests: requests))
        }
        return selection
    }

    /// Every unique image of the selected references, resolved once.
    func resolve(_ selection: Selection, _ services: BuildServices) async -> ResolvedSet {
        await services.resolver.resolveAll(selection.rewritable.flatMap { page in
            zip(page.page.scan.references.map(\.source), page.requests).map { ($0, $1) }
        }, observe: { done, total in progress.update { $0.imagesResolved = done; $0.imagesTotal = total } })
    }
}
