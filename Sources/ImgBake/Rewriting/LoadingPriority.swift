/// Which images of a page load first. Lighthouse flags a lazily loaded Largest Contentful Paint image,
/// and a page's first image is often not it (a 48 px logo), so:
/// - the first screen: references within `output.fold` bytes of markup from the start of `main` or
///   `article` (twice that from `body` when the page has neither; anything before that start, a site
///   header, too), up to the likely LCP image when there is one, are not lazy; everything further down
///   is (a browser still fetches a lazy image early when it is near the screen: erring towards lazy
///   costs little, towards eager costs bytes);
/// - the likely LCP image: the first image in the first screen that is not in the page's frame (a
///   `nav`, `footer` or `aside`, also by ARIA role), not a logo or icon by its
///   class, id, alt text or file name, and large: shown at least 300 CSS px wide when the author says so, else at least 400 px
///   wide itself. It gets `fetchpriority="high"`; a CSS background gets a `<link rel="preload">`.
///   `data-imgbake-lcp="true"` picks an image, `"false"` rules one out.
/// The author's own `loading` and `fetchpriority` are never changed (`ImageMarkup`).
struct LoadingPriority: Sendable {
    enum Level: Sendable, Equatable {
        /// The likely LCP image.
        case high
        /// In the first screen.
        case eager
        case lazy
    }

    /// The reference picked as the page's likely LCP image, and why.
    var candidate: (index: Int, reason: String)?
    private var eager: Set<Int> = []

    func level(of index: Int) -> Level {
        candidate?.index == index ? .high : eager.contains(index) ? .eager : .lazy
    }

    /// `size`: the intrinsic width of a reference's image, when known; `imgbake scan` has no images and
    /// takes an image of unknown size for a large one (`unknownIsLarge`).
    init(_ references: [ImageReference], output: OutputSettings, unknownIsLarge: Bool = false, size: (Int) -> Int?) {
        for (index, reference) in references.enumerated() {
            guard let placement = reference.placement else { continue }
            if Self.inFirstScreen(placement, fold: output.foldBytes) { eager.insert(index) }
        }
        guard output.lcp == .auto else { return }
        candidate = Self.candidate(references, eager: eager, unknownIsLarge: unknownIsLarge, size: size)
        // What comes after the LCP image is below it: lazy.
        if let chosen = candidate?.index { eager = eager.filter { $0 <= chosen } }
    }

    /// A page's choice, made once per page (`PageModel.priority`): an image's width is the widest file
    /// the page would use of it; without images (`imgbake scan`) an image of unknown size counts as large.
    static func of(_ references: [ImageReference], requests: [VariantRequest]?, output: OutputSettings, plan: VariantPlan,
                   images: ((ImageSource) -> ResolvedImage?)?) -> LoadingPriority {
        LoadingPriority(references, output: output, unknownIsLarge: images == nil) { index in
            guard let requests, let image = images?(references[index].source) else { return nil }
            return plan.widths(for: image.source, request: requests[index]).max() ?? image.source.width
        }
    }

    private static func candidate(_ references: [ImageReference], eager: Set<Int>, unknownIsLarge: Bool,
                                  size: (Int) -> Int?) -> (index: Int, reason: String)? {
        if let chosen = references.indices.first(where: { references[$0].placement?.lcp == true }) {
            return (chosen, "data-imgbake-lcp")
        }
        for index in references.indices where eager.contains(index) {
            let reference = references[index]
            guard let placement = reference.placement, placement.lcp != false, !placement.inFrame, !placement.looksDecorative,
                  reference.kind == .imgSrc || reference.kind == .css else { continue }
            let shown = reference.element?.displayWidth
            let width = shown ?? size(index)
            guard width.map({ $0 >= (shown != nil ? 300 : 400) }) ?? unknownIsLarge else { continue }
            let what = reference.kind == .css ? "the CSS background" : "the image"
            let where_ = placement.inContent ? "in <main>" : "near the top of <body>"
            let wide = width.map { ", \($0) px wide\(shown != nil ? " as shown" : "")" } ?? ""
            return (index, "\(what) first in the first screen \(where_)\(wide), not a logo or icon")
        }
        return nil
    }

    static func inFirstScreen(_ placement: Placement, fold: Int) -> Bool {
        placement.depth <= (placement.measuredFromContent ? fold : 2 * fold)
    }
}
