/// What reading every page to build told, kept small: the images to resolve with what their references
/// ask for, each page's hash, and what to say about the pages. Scans are kept only up to
/// `keptReferences` references: the pages of a larger site (a million references would not fit in
/// memory) are read and scanned again, a batch at a time, to be rewritten (`settle`); a smaller site's
/// are scanned once.
struct Survey: Sendable {
    /// About 1 KB each with what rewriting them takes: 50,000 references kept cost some 50 MB, and
    /// scanning them again would add a fifth to the CPU of a build whose images are cached.
    static let keptReferences = 50_000
    /// Pages read, in order, with the hash of the bytes scanned.
    var pages: [SurveyedPage] = []
    /// Each image, with the union of what its references ask for.
    var demand: [ImageSource: VariantRequest] = [:]
    /// Pages whose references stay as they are, with why.
    var leftAlone: [String: String] = [:]
    /// Pages that could not be read, what their scans found, bad per-element overrides.
    var diagnostics: [Diagnostic] = []
    var references = 0
    /// Scans kept for rewriting, by path, while they total at most `keptReferences` references.
    var kept: [String: ScannedPage] = [:]
    var keptReferences = 0
}

struct SurveyedPage: Sendable {
    var path: String
    var hash: String
}

/// A scanned page, and what each of its references asks for; or why its references stay as they are.
struct SelectedPage: Sendable {
    var page: ScannedPage
    /// Aligned with `page.scan.references`; nil when the page is left alone.
    var requests: [VariantRequest]?
    var leftAlone: String?
    /// The scan's, and bad per-element overrides.
    var diagnostics: [Diagnostic]
}

struct RewritablePage: Sendable {
    var page: ScannedPage
    /// Aligned with `page.scan.references`.
    var requests: [VariantRequest]
}

extension Build {
    /// Which of a page's references to localise: all of them, but none on a page whose remote `<base
    /// href>` would make a local path wrong; each with its element's variant overrides, or the
    /// configured ones. References to imgbake's own outputs under a CDN `public_path` are taken out.
    func select(_ scanned: ScannedPage, _ plan: BuildPlan) -> SelectedPage {
        let config = plan.configuration
        var page = scanned
        if let own = plan.ownOutputPrefix { page.scan.references.removeAll { $0.source.remoteURL?.string.hasPrefix(own) == true } }
        var selected = SelectedPage(page: page, requests: nil, leftAlone: nil, diagnostics: page.scan.diagnostics)
        if let base = page.scan.remoteBase, !page.scan.references.isEmpty, !config.output.publicPathIsAbsolute {
            let why = "page has a remote <base href> (\(base.url)); its \(page.scan.references.count) image references are left as they are, because a local path would resolve against that base too (set public_path to an absolute URL to localise them)"
            selected.diagnostics.append(Diagnostic(.warning, why, at: base.location))
            selected.leftAlone = "remote <base href>"
            return selected
        }
        let defaultRequest = VariantRequest(config.images)
        selected.requests = page.scan.references.map { reference -> VariantRequest in
            switch reference.request(over: defaultRequest) {
            case .success(let request): return request
            case .failure(let problem):
                selected.diagnostics.append(Diagnostic(.warning, problem.description, at: reference.location))
                return defaultRequest
            }
        }
        return selected
    }

    /// Reads and scans every page to build, folding each into the survey as it comes (its scan is let
    /// go at once).
    func survey(_ paths: [String], _ plan: BuildPlan) async -> Survey {
        var survey = Survey()
        await forEachScanned(paths, plan) { result in
            switch result {
            case .success(let page):
                let selected = select(page, plan)
                survey.pages.append(SurveyedPage(path: page.scan.file.path, hash: page.hash))
                survey.diagnostics += selected.diagnostics
                survey.references += page.scan.references.count
                if survey.keptReferences + page.scan.references.count <= Survey.keptReferences {
                    survey.kept[page.scan.file.path] = page
                    survey.keptReferences += page.scan.references.count
                }
                if let why = selected.leftAlone { survey.leftAlone[page.scan.file.path] = why }
                for (reference, request) in zip(page.scan.references, selected.requests ?? []) {
                    survey.demand[reference.source] = survey.demand[reference.source].map { $0.union(request) } ?? request
                }
            case .failure(let problem):
                survey.diagnostics.append(problem.diagnostic)
            }
        }
        survey.pages.sort { $0.path < $1.path }
        return survey
    }

    /// Every unique image of the survey, resolved once.
    func resolve(_ survey: Survey, _ services: BuildServices) async -> ResolvedSet {
        await services.resolver.resolveAll(survey.demand.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                                           observe: { done, total in progress.update { $0.imagesResolved = done; $0.imagesTotal = total } })
    }
}
