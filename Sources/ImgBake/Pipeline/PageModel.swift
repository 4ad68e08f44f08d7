/// Everything one page refers to, from its one scan: the images it localises (each with its kind,
/// place, byte range and the variants it asks for), the files of the images folder it already names
/// (as a reference of any kind, or mentioned anywhere in its bytes), and why its references stay as
/// they are when they do.
///
/// Every consumer derives from this value alone: the rewrite, which images load first (`priority`,
/// chosen once), the files in use (`uses`: the clean-up, `--check`, healing, the seal), the report,
/// and the page's recorded state. Adding a kind of reference means a scanner that yields it; nothing
/// downstream counts kinds.
struct PageModel: Sendable {
    /// The scan, with the bytes it was made from.
    var scan: PageScan
    /// What each reference asks for, aligned with `scan.references`; nil when the page is left alone.
    var requests: [VariantRequest]?
    /// Why the page's references stay as they are.
    var leftAlone: String?
    /// The scan's, and bad per-element overrides.
    var diagnostics: [Diagnostic]
    /// Files of the images folder named in the bytes under the public path wherever they are (a code
    /// block, a comment, a script), with the offset of the first mention: they stay in use too.
    var mentions: [String: Int]
    /// For each `<img>` given markup, by reference index: what its page lets imgbake write without
    /// changing how it lays out (`PageLayout`).
    var layouts: [Int: ImageLayout] = [:]

    var path: String { scan.file.path }

    /// What making a model of a page needs to know of the build's settings.
    struct Settings: Sendable {
        /// With a CDN `public_path`, references to what imgbake itself wrote look remote: they start with this.
        var ownOutputPrefix: String?
        /// Every way a page can write the start of a reference to an output (`ScanSettings.ownPrefixes`).
        var publicPaths: [String]
        /// What a reference asks for unless its element says otherwise.
        var defaultRequest: VariantRequest
        /// How images are given markup (`output.markup`, `output.markdown`).
        var markup = MarkupMode.auto
        var markdown = MarkdownMode.localize
        /// What a page's stylesheets' `@import`s resolve against.
        var scanSettings = ScanSettings()
        /// The width of the one fallback file of a `<picture>` (`ImageSettings.oneFallbackWidth`); nil: one
        /// per width.
        var fallbackWidth: Int?
    }

    /// Which references to localise: all of them, but none on a page whose remote `<base href>` would
    /// make a local path wrong; each with its element's variant overrides, or the configured ones, and
    /// the size its page shows it at. References to imgbake's own outputs under a CDN `public_path` are
    /// taken out. `styles`: where the page's stylesheets and scripts are read (nil: the page's layout
    /// is not looked at, as `imgbake scan` does not).
    init(_ scanned: PageScan, settings: Settings, styles: (any StyleLibrary)? = nil) {
        scan = scanned
        if let own = settings.ownOutputPrefix { scan.references.removeAll { $0.source.remoteURL?.string.hasPrefix(own) == true } }
        diagnostics = scan.diagnostics
        mentions = OwnImageReferences.mentions(in: scan.file.bytes, publicPaths: settings.publicPaths)
        if let base = scan.remoteBase, !scan.references.isEmpty, settings.ownOutputPrefix == nil {
            let why = "page has a remote <base href> (\(base.url)); its \(scan.references.count) image references are left as they are, because a local path would resolve against that base too (set public_path to an absolute URL to localise them)"
            diagnostics.append(Diagnostic(.warning, why, at: base.location))
            leftAlone = "remote <base href>"
            requests = nil
            return
        }
        let defaultRequest = settings.defaultRequest
        var problems: [Diagnostic] = []
        let file = scan.file
        let laidOut = Self.layouts(of: scan, settings, styles: styles)
        var layouts: [Int: ImageLayout] = [:]
        requests = scan.references.enumerated().map { index, reference -> VariantRequest in
            var shown = reference.element?.displayWidth.map(ShownSize.width)
            var markup: Bool?
            if Self.getsMarkup(reference, in: file, settings) {
                let layout = reference.element?.treeIndex.flatMap { laidOut[$0] } ?? .unknownPage
                layouts[index] = layout
                if layout.pageKnown { shown = layout.shown(authorWidth: reference.element?.width, authorHeight: reference.element?.height) }
                markup = MarkupChoice.wraps(settings.markup, element: reference.element, layout: layout)
            }
            switch reference.request(over: defaultRequest, shown: shown) {
            case .success(let request): return Self.used(by: reference, of: request, wrapped: markup, settings)
            case .failure(let problem):
                problems.append(Diagnostic(.warning, problem.description, at: reference.location))
                return Self.used(by: reference, of: defaultRequest, wrapped: markup, settings)
            }
        }
        self.layouts = layouts
        diagnostics += problems
    }

    /// The layout of each `<img>` of the page that gets markup, by its index in the page's tree: those
    /// `output.markup = "auto"` would wrap checked wrapped together.
    static func layouts(of scan: PageScan, _ settings: Settings, styles: (any StyleLibrary)?) -> [Int: ImageLayout] {
        guard let styles, let inputs = scan.styles else { return [:] }
        var elements: [Int] = [], wrappable: Set<Int> = []
        for reference in scan.references where getsMarkup(reference, in: scan.file, settings) {
            guard let element = reference.element, let index = element.treeIndex else { continue }
            elements.append(index)
            if settings.markup == .auto && element.markupOverride != "img" { wrappable.insert(index) }
        }
        guard !elements.isEmpty else { return [:] }
        let page = PageLayout(inputs, page: scan.file.path, settings: settings.scanSettings, library: styles)
        return page.images(at: elements, wrappable: wrappable)
    }

    /// What the rewrite of `reference` uses of what it asks for, and so all that is made for it: an image
    /// given markup (`wrapped` not nil) every width, the fallback at one, and in no `<picture>` only the
    /// formats an `<img>` takes; `image-set()` the widest of each format; a social card its one width;
    /// any other reference, replaced by one file, the widest in the source's own format.
    static func used(by reference: ImageReference, of request: VariantRequest, wrapped: Bool?, _ settings: Settings) -> VariantRequest {
        switch reference.target {
        case .social: return request
        // JPEG XL only in a <picture> (`image-set()` in CSS is not where it is offered).
        case .formatSet: return VariantRequest(widths: Array(request.widths.suffix(1)), formats: request.formats.filter { $0 != .jxl })
        case .fallback:
            guard let wrapped else { return request.widestFallback }
            let marked = request.inPicture(oneFallbackAt: settings.fallbackWidth)
            return wrapped ? marked : MarkupChoice.unwrapped(marked)
        }
    }

    /// Whether the rewrite gives the reference's image markup (`PageRewriter`): an `<img src>` not in a
    /// `<picture>` and without a `srcset` of its author's, in HTML (or Markdown written as HTML); a
    /// Markdown image (and the definition a reference-style one uses) with `output.markdown = "html"`.
    static func getsMarkup(_ reference: ImageReference, in file: SourceFile, _ settings: Settings) -> Bool {
        guard settings.markup != .localize else { return false }
        let markdownAsHTML = file.kind == .markdown && settings.markdown == .html
        switch reference.kind {
        case .imgSrc:
            guard let element = reference.element, case .attribute = reference.syntax else { return false }
            return (file.kind == .html || markdownAsHTML) && !element.inPicture && !element.hasSrcset
        case .markdownImage, .markdownDefinition: return markdownAsHTML
        default: return false
        }
    }

    /// Each image the page localises once, with the union of what its references ask for.
    var demand: [(ImageSource, VariantRequest)] {
        guard let requests else { return [] }
        var merged: [ImageSource: VariantRequest] = [:]
        var order: [ImageSource] = []
        for (reference, request) in zip(scan.references, requests) {
            if let known = merged[reference.source] { merged[reference.source] = known.union(request) } else {
                merged[reference.source] = request
                order.append(reference.source)
            }
        }
        return order.map { ($0, merged[$0]!) }
    }

    /// Which of the page's images load first, and its likely LCP image: chosen once, here. An image's
    /// width is the widest file this page would use; without images (`imgbake scan`) one of unknown
    /// size counts as large.
    func priority(output: OutputSettings, plan: VariantPlan, images: PageImages?) -> LoadingPriority {
        LoadingPriority.of(scan.references, requests: requests, output: output, plan: plan, images: images.map { $0.image(for:) })
    }

    /// The files of the images folder the page uses once written: every reference to one in the
    /// source (of any kind, however written), every mention of one in the bytes as written, and every
    /// file the rewrite put in. The one definition of "in use": what the clean-up keeps, what `--check`
    /// proves exists, what healing writes again, what the seal checks. Each with where the page first
    /// names it (the rewrite's own files at the page's start).
    func uses(_ rewrite: PageRewrite?, publicPaths: [String]) -> [OutputUse] {
        var first: [String: SourceLocation] = [:]
        for use in scan.outputs where first[use.name].map({ use.location < $0 }) ?? true { first[use.name] = use.location }
        // Where the source mentions a name: the rewrite splices references only, so a mention that is
        // still in the page is where it was in the source; a file the rewrite put in, at the start.
        let start = SourceLocation(file: path, line: 1, column: 1)
        func location(_ name: String) -> SourceLocation {
            first[name] ?? mentions[name].map(scan.file.location(ofByte:)) ?? start
        }
        let mentioned = rewrite?.bytes.map { OwnImageReferences.mentions(in: $0, publicPaths: publicPaths) } ?? mentions
        var uses = first
        for name in mentioned.keys where uses[name] == nil { uses[name] = location(name) }
        for output in rewrite?.outputs ?? [] where uses[output.fileName] == nil { uses[output.fileName] = start }
        return uses.map { OutputUse(name: $0.key, location: $0.value) }.sorted { ($0.location, $0.name) < ($1.location, $1.name) }
    }

    /// The references as reports and page states keep them.
    var recordedReferences: [RecordedReference] {
        scan.references.map {
            RecordedReference(line: $0.location.line, column: $0.location.column, kind: $0.kind, url: $0.source.description)
        }
    }
}

/// How the images a page asked for resolved: what its rewrite, its warnings and its state read.
struct PageImages: Sendable {
    var resolutions: [ImageSource: Resolution] = [:]
    /// The key of each image the page asked for.
    var keys: [ImageSource: OriginalKey] = [:]
    /// The bytes of the files small enough to be written into a page (`output.inline_images`), by blob.
    var inline: [BlobID: [UInt8]] = [:]
    /// `imgbake serve`: the URL that stands for each image not made yet, made when the browser asks for
    /// it (its files' names hold their hashes, unknown until then).
    var pending: [ImageSource: String] = [:]

    func image(for source: ImageSource) -> ResolvedImage? {
        guard case .resolved(let image, _)? = resolutions[source] else { return nil }
        return image
    }

    func failure(for source: ImageSource) -> ImageFailure? {
        guard case .failed(let failure)? = resolutions[source] else { return nil }
        return failure
    }

    /// The bytes of the resolved images' files of at most `limit` bytes (not SVG): what may be written
    /// into a page (`output.inline_images`); `read` gives a blob's bytes, nil when it cannot.
    func smallFiles(limit: Int, read: (BlobID) -> [UInt8]?) -> [BlobID: [UInt8]] {
        var small: [BlobID: [UInt8]] = [:]
        for case .resolved(let image, _) in resolutions.values {
            for variant in image.variants where variant.bytes <= limit && variant.format != .svg && small[variant.blob] == nil {
                if let bytes = read(variant.blob) { small[variant.blob] = bytes }
            }
        }
        return small
    }

    /// What became of an image a page waited for.
    enum Waited: Sendable {
        case resolution(Resolution)
        /// `imgbake serve`: not made yet, named by this URL.
        case pending(String)
    }

    /// A page's images, asked of the demand in one call: the one way a build and `imgbake serve` ask.
    /// Each image's key; those resolved already (a warm build's pages find all of theirs so); the
    /// others, one per key, handed to `wait` together, which resolves them (a build) or names each by a
    /// pending URL (serve). `fetchedFrom` is the URL an image is fetched by, where it is not the one the
    /// page wrote (serve fetches a site's own image from the dev server).
    static func ask(_ wanted: [(ImageSource, VariantRequest)], of demand: ImageDemand,
                    fetchedFrom: (ImageSource) -> ImageSource = { $0 },
                    wait: ([ImageDemand.Wanted]) async -> [OriginalKey: Waited]) async -> PageImages {
        guard !wanted.isEmpty else { return PageImages() }
        let fetched = wanted.map { (fetchedFrom($0.0), $0.1) }
        let (keys, served, waiting) = await demand.ask(fetched)
        var known = served.mapValues(Waited.resolution)
        if !waiting.isEmpty { known.merge(await wait(waiting)) { $1 } }
        var images = PageImages()
        for ((source, _), (asked, _)) in zip(wanted, fetched) {
            guard let key = keys[asked], images.keys[source] == nil else { continue }
            images.keys[source] = key
            switch known[key] {
            case .resolution(let resolution)?: images.resolutions[source] = resolution
            case .pending(let url)?: images.pending[source] = url
            case nil: break
            }
        }
        return images
    }

    /// Every reference resolved.
    func resolvesAll(_ model: PageModel) -> Bool { model.scan.references.allSatisfy { image(for: $0.source) != nil } }

    /// The originals the page was built from, fingerprinted.
    var sources: SourceDigest {
        var pairs: [OriginalKey: BlobID] = [:]
        for case .resolved(let image, _) in resolutions.values { pairs[image.key] = image.originalBlob }
        return SourceDigest.of(pairs.map { ($0.key, $0.value) })
    }

    /// A warning at every reference of an image that failed.
    func failureWarnings(_ model: PageModel) -> [Diagnostic] {
        model.scan.references.compactMap { reference in
            failure(for: reference.source).map {
                Diagnostic(.warning, "\(reference.source): \($0.reason)", at: reference.location,
                           kept: $0.kind == .offlineMiss ? .notInCache : .imageFailed)
            }
        }
    }
}
