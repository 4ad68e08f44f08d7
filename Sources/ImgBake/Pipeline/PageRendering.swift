/// A page as imgbake writes it, from its model and its images alone: the new bytes, the image files
/// they name, and what there is to say about them. Pure, like `PagePlan`, which renders every page it
/// writes through it; `imgbake serve` renders the pages it answers with it too, and never plans them
/// (a served page has no site file, no state and no journal).
///
///     model + images + settings ─▶ PageRendering ─▶ bytes, files, diagnostics
///                                        ├─▶ PagePlan (state, copy, report) ─▶ the journal
///                                        └─▶ serve's answer
struct PageRendering: Sendable {
    /// What rendering needs of the build, the same for every page.
    struct Settings: Sendable {
        var rewriter: PageRewriter
        var output: OutputSettings
    }

    /// The rewrite: the new bytes (nil when the references are left as they are), the files they name.
    var rewrite: PageRewrite
    /// The image files the new bytes name, by name.
    var files: [OutputImage]
    /// The scan's and the images' warnings, then the rewrite's.
    var diagnostics: [Diagnostic]
    /// The page's new bytes; nil when its references are left as they are.
    var bytes: [UInt8]? { rewrite.bytes }
    /// Which reference was taken for the likely LCP image (the report says why).
    var priority: LoadingPriority
    /// References on the page.
    var references: Int
    /// The rewrite left nothing to say and every image resolved: the page is as a later build with the
    /// same images would write it.
    var complete: Bool

    /// The page's references and warnings, without rewriting it (a page read and not written).
    static func notes(_ model: PageModel, _ images: PageImages) -> [Diagnostic] {
        model.diagnostics + images.failureWarnings(model)
    }

    /// The likely LCP image, as the rewrite will treat it.
    static func priority(_ model: PageModel, _ images: PageImages, _ settings: Settings) -> LoadingPriority {
        model.priority(output: settings.output, plan: settings.rewriter.plan, images: images)
    }

    /// Renders the page: each reference to a resolved image rewritten (files, `srcset`, `<picture>`, …),
    /// an image still being made named by its pending URL, a small one inlined.
    static func render(_ model: PageModel, _ images: PageImages, _ settings: Settings) -> PageRendering {
        let priority = priority(model, images, settings)
        let rewrite = model.requests.map {
            settings.rewriter.rewrite(model.scan, requests: $0, layouts: model.layouts, images: images.image(for:), priority: priority,
                                      inline: { images.inline[$0.blob] }, pending: { images.pending[$0] })
        } ?? PageRewrite(bytes: nil, outputs: [], diagnostics: [], localised: 0)
        let complete = model.requests != nil && images.resolvesAll(model) && model.scan.diagnostics.isEmpty && rewrite.diagnostics.isEmpty
        return PageRendering(rewrite: rewrite, files: rewrite.outputs.sorted { $0.fileName < $1.fileName },
                             diagnostics: notes(model, images) + rewrite.diagnostics, priority: priority,
                             references: model.scan.references.count, complete: complete)
    }
}
