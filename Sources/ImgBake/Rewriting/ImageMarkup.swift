import Foundation

/// Generates the markup for one image: the author's `<img>` tag (or one made for a Markdown image)
/// with its `src` replaced and the template's attributes added, inside the `picture` or `img`
/// template. The author's attributes are kept byte for byte; what is added is what the page's layout
/// allows (`ImageLayout`): the box rules (`BoxRule`), the wrapper only where it is safe
/// (`MarkupChoice`), no attribute a selector of the page tests.
struct ImageMarkup {
    let output: OutputSettings
    let placeholderKind: Placeholder
    let renderer: MarkupRenderer
    let naming: OutputNaming

    /// An `<img>` start tag and where its parts are, relative to the tag's first byte.
    struct Tag {
        var bytes: [UInt8]
        var src: Range<Int>
        var srcQuote: UInt8?
        var insertion: Int
        /// Lower-cased names of the attributes the tag has.
        var attributes: Set<String>
        var sizes: String?
        /// The width the author shows it at, in CSS pixels (`width` attribute or inline style): what sizes
        /// it where its page's layout is not known.
        var displayWidth: Int? = nil
        /// The author's `width` and `height` attributes, when they are numbers.
        var width: Int? = nil
        var height: Int? = nil
        /// The value of the author's quoted `style` attribute, relative to the tag.
        var style: Range<Int>? = nil
    }

    /// A tag for a Markdown image: `<img src="…" alt="…" title="…">`.
    static func tag(alt: String, title: String?) -> Tag {
        var text = "<img src=\"\" alt=\"\(HTMLEntities.escapeAttribute(alt))\""
        if let title { text += " title=\"\(HTMLEntities.escapeAttribute(title))\"" }
        text += ">"
        let bytes = Array(text.utf8)
        return Tag(bytes: bytes, src: 10..<10, srcQuote: UInt8(ascii: "\""), insertion: bytes.count - 1,
                   attributes: title == nil ? ["src", "alt"] : ["src", "alt", "title"], sizes: nil)
    }

    /// How one image is to be written: its layout, and whether it goes into a `<picture>`.
    struct Placing {
        var layout: ImageLayout
        var wraps: Bool
        var priority: LoadingPriority.Level

        static func unknownPage(_ mode: MarkupMode, priority: LoadingPriority.Level) -> Placing {
            Placing(layout: .unknownPage, wraps: MarkupChoice.wraps(mode, element: nil, layout: .unknownPage), priority: priority)
        }
    }

    /// The markup's bytes, and the variants it refers to. `inline`: the file's bytes when the image is
    /// small and in the first screen: written into the page as a `data:` URI, no file, no `srcset`.
    func render(_ tag: Tag, image: ResolvedImage, variants: [StoredVariant], placing: Placing,
                inline: (StoredVariant, [UInt8])? = nil) -> ([UInt8], [StoredVariant])? {
        guard let fallback = variants.widest(in: image.fallbackFormats) else { return nil }
        let layout = placing.layout, tested = layout.testedAttributes
        let box = box(tag, image: image, layout: layout)
        // A file narrower than the image would show smaller where nothing but its own size sizes it.
        if let (file, bytes) = inline, !box.naturalSizes || file.width == image.source.width {
            return (inlined(tag, file: file, bytes: bytes, box: box), [])
        }
        let files = FileChoice(variants: variants, image: image, mode: output.markup, wraps: placing.wraps)
        let lazy = placing.priority == .lazy && !tag.attributes.contains("loading") && !tested.contains("loading")
        let sizes = self.sizes(tag, image: image, layout: layout, box: box, lazy: lazy)
        let src = placing.wraps || output.markup == .img ? files.candidates.max { $0.width < $1.width } ?? fallback : fallback
        var added: [String: Any] = [:]
        // One fallback file in a `<picture>` needs no srcset: the browsers that take it take no
        // `<source>` either.
        if !tested.contains("srcset"), files.candidates.count > 1 || files.sources.isEmpty {
            added["srcset"] = naming.srcset(files.candidates, of: image)
            if !tag.attributes.contains("sizes") && !tested.contains("sizes") { added["sizes"] = sizes }
        }
        if let width = box.width { added["width"] = String(width) }
        if let height = box.height { added["height"] = String(height) }
        if lazy { added["loading"] = "lazy" }
        if !tag.attributes.contains("fetchpriority") && !tested.contains("fetchpriority") && placing.priority == .high { added["fetchpriority"] = "high" }
        if !tag.attributes.contains("decoding") && !tested.contains("decoding") { added["decoding"] = "async" }
        var edits = [Edit(tag.src, ReplacementText.attribute(naming.url(src, of: image), quote: tag.srcQuote))]
        edits += style(tag, image: image, box: box, tested: tested, into: &added)
        if let hash = image.placeholder, placeholderKind == .blurhash, !tested.contains("data-blurhash") { added["blurhash"] = hash }
        // Mustache treats an empty string as true: what is not added is left out entirely.
        edits.append(Edit(tag.insertion..<tag.insertion, renderer.render("img-attributes", added)))
        let img = (try? Splicer.apply(edits, to: tag.bytes)) ?? tag.bytes

        // The files the markup names, and only those.
        let used = output.markup == .img && !placing.wraps ? files.candidates : (files.sources.flatMap(\.files) + files.candidates + [src]).onePerFile
        // With nothing but the fallback (say, every WebP was larger), a <picture> would only wrap the <img>.
        let template = files.sources.isEmpty ? "img" : "picture"
        return (Self.splice(img, into: renderer.render(template, context(image, sources: files.sources, src: src, sizes: sizes))), used)
    }

    /// What the `img` and `picture` templates are given around the author's tag.
    private func context(_ image: ResolvedImage, sources: [(format: ImageFormat, files: [StoredVariant])], src: StoredVariant,
                         sizes: String) -> [String: Any] {
        var context: [String: Any] = [
            "sources": sources.map { ["type": $0.format.mimeType, "srcset": naming.srcset($0.files, of: image), "sizes": sizes] },
            "img": Self.imgToken,
            "sizes": sizes,
            "fallback": ["src": naming.url(src, of: image), "width": src.width, "height": src.height,
                         "type": src.format.mimeType] as [String: Any],
            // The wrapper makes no box of its own, and its sources none (`hidden`): the `<img>` stays the
            // flex or grid item, the line's content, as it was.
            "style": "display:contents",
        ]
        var credit: [String: Any] = [:]
        if let copyright = image.credits.copyright { credit["copyright"] = copyright }
        if let artist = image.credits.artist { credit["artist"] = artist }
        if let captured = image.credits.captured { credit["captured"] = captured }
        if !credit.isEmpty { context["credit"] = credit }
        if let value = image.placeholder { context["placeholder"] = [placeholderKind.rawValue: value, "value": value] }
        return context
    }

    /// Where the template puts the author's tag: a token, replaced by the tag's bytes once the template
    /// is rendered, so that a page that is not UTF-8 keeps every byte of its tag (its `alt` in
    /// ISO-8859-1, say) instead of having them decoded and written again as UTF-8.
    static let imgToken = "\u{1}imgbake-img\u{1}"

    static func splice(_ img: [UInt8], into rendered: String) -> [UInt8] {
        Array(rendered.utf8).replacing(Array(imgToken.utf8), with: img)
    }

    /// What is written about the image's size (`BoxRule`).
    private func box(_ tag: Tag, image: ResolvedImage, layout: ImageLayout) -> BoxChoice {
        let tested = layout.testedAttributes
        return BoxRule.choose(layout.box, author: (tag.width, tag.height),
                              authorWrote: (tag.attributes.contains("width"), tag.attributes.contains("height")),
                              natural: (image.source.width, image.source.height),
                              canAdd: (!tested.contains("width"), !tested.contains("height")),
                              style: layout.styleAttributes && !tested.contains("style") && (tag.style != nil || !tag.attributes.contains("style")))
    }

    /// The author's `sizes`; else the image's own width where nothing else fixes its box; else the width
    /// the page shows it at, where it fixes one; else the configured one. A lazy image whose width
    /// does not follow its own size lets the browser use its laid-out width (`auto`).
    private func sizes(_ tag: Tag, image: ResolvedImage, layout: ImageLayout, box: BoxChoice, lazy: Bool) -> String {
        if let authored = tag.sizes { return authored }
        if box.naturalSizes { return "\(image.source.width)px" }
        let shown = layout.pageKnown ? layout.shown(authorWidth: tag.width, authorHeight: tag.height) : tag.displayWidth.map(ShownSize.width)
        let width: Int? = switch shown {
        case .width(let width)?: width
        case .height(let height)? where image.source.height > 0: Int((Double(height) * Double(image.source.width) / Double(image.source.height)).rounded())
        default: nil
        }
        let base = width.map { "(max-width: \($0)px) 100vw, \($0)px" } ?? output.sizes
        return lazy && box.widthIsPinned ? "auto, " + base : base
    }

    /// The placeholder and the box's shape, in the style the author has (added to its value) or in one
    /// of imgbake's; the edits to the author's value, if any.
    private func style(_ tag: Tag, image: ResolvedImage, box: BoxChoice, tested: Set<String>, into added: inout [String: Any]) -> [Edit] {
        let shape = box.aspectRatio.map { "aspect-ratio:auto \($0.width) / \($0.height)" }
        if let value = tag.style {
            guard let shape else { return [] }
            return [Self.appending(shape, toStyle: value, of: tag)]
        }
        guard !tag.attributes.contains("style"), !tested.contains("style") else { return [] }
        let declarations = [placeholderStyle(image), shape].compactMap { $0 }
        if !declarations.isEmpty { added["style"] = declarations.joined(separator: ";") }
        return []
    }

    /// The author's tag with the image itself as its `src`, and its size.
    private func inlined(_ tag: Tag, file: StoredVariant, bytes: [UInt8], box: BoxChoice) -> [UInt8] {
        let uri = "data:\(file.format.mimeType);base64," + Data(bytes).base64EncodedString()
        var added: [String: Any] = [:]
        if let width = box.width { added["width"] = String(width) }
        if let height = box.height { added["height"] = String(height) }
        if !tag.attributes.contains("decoding") { added["decoding"] = "async" }
        var edits = [Edit(tag.src, ReplacementText.attribute(uri, quote: tag.srcQuote))]
        if let shape = box.aspectRatio.map({ "aspect-ratio:auto \($0.width) / \($0.height)" }) {
            if let value = tag.style { edits.append(Self.appending(shape, toStyle: value, of: tag)) } else if !tag.attributes.contains("style") { added["style"] = shape }
        }
        edits.append(Edit(tag.insertion..<tag.insertion, renderer.render("img-attributes", added)))
        return (try? Splicer.apply(edits, to: tag.bytes)) ?? tag.bytes
    }

    /// A declaration added at the end of the author's `style` value, after a `;` unless it ends with one.
    private static func appending(_ declaration: String, toStyle value: Range<Int>, of tag: Tag) -> Edit {
        let last = tag.bytes[value].last { !$0.isHTMLSpace }
        let separator = last == nil || last == UInt8(ascii: ";") ? "" : ";"
        return Edit(value.upperBound..<value.upperBound, separator + declaration)
    }

    /// A background that shows while the image loads: the dominant colour or the blurred preview.
    private func placeholderStyle(_ image: ResolvedImage) -> String? {
        guard let value = image.placeholder else { return nil }
        switch placeholderKind {
        case .color: return "background-color:\(value)"
        case .lqip: return "background-size:cover;background-image:url(\(value))"
        default: return nil
        }
    }
}

/// Which files an image's markup offers: per `<source>` (best format first) the files at each width,
/// and the `<img>`'s own candidates. A pure choice over the variants made.
struct FileChoice {
    var sources: [(format: ImageFormat, files: [StoredVariant])] = []
    var candidates: [StoredVariant] = []

    init(variants: [StoredVariant], image: ResolvedImage, mode: MarkupMode, wraps: Bool) {
        let fallbacks = variants.inFormat(image.fallbackFormats)
        let modern = variants.formats.filter { !image.fallbackFormats.contains($0) }
        if wraps {
            candidates = fallbacks
            // Best first; a source whose every file is another format's (it wins at no width) is left out.
            for (index, format) in modern.enumerated() {
                let files = Self.offered(format, below: Array(modern.dropFirst(index + 1)), variants: variants, fallbacks: fallbacks)
                if files.contains(where: { $0.format == format }) { sources.append((format, files)) }
            }
        } else if mode == .img {
            // One srcset in the best widely supported format: WebP where it was made (and not dropped as
            // larger than the fallback), the original format elsewhere, every width.
            let widths = Set(variants.map(\.width)).sorted()
            candidates = widths.compactMap { width in
                variants.first { $0.width == width && $0.format == .webp } ?? variants.first { $0.width == width && image.fallbackFormats.contains($0.format) }
            }
        } else {
            // No <picture>: the <img> takes WebP, the files a WebP <source> would offer.
            candidates = modern.contains(.webp) ? Self.offered(.webp, below: [], variants: variants, fallbacks: fallbacks) : fallbacks
        }
    }

    /// The files a `<source>` of `format` offers: one per width. A browser that picks a source never
    /// looks at the `<img>`'s candidates, so a width without a file in the format takes the smallest
    /// file there any browser taking this source takes too (browsers go by content, not the type): one
    /// of a format `below` it (every browser with JPEG XL has AVIF and WebP, every one with AVIF has
    /// WebP) or the fallback's. An AVIF dropped at a width as larger than the WebP gives that width the
    /// WebP, not a lossless PNG many times its size. A variant made alone (one fallback file) gives way
    /// the same way, and to a fallback file as wide or wider (the source itself, a JPEG compressed
    /// harder than the search's target). So each format is offered only where it is the smallest at
    /// the same quality.
    static func offered(_ format: ImageFormat, below: [ImageFormat], variants: [StoredVariant], fallbacks: [StoredVariant]) -> [StoredVariant] {
        let widths = Set(variants.map(\.spec.width)).sorted()
        let filled = widths.compactMap { width -> StoredVariant? in
            let lower = variants.filter { below.contains($0.format) && $0.spec.width == width }
            guard let modern = variants.first(where: { $0.format == format && $0.spec.width == width }) else {
                return (lower + fallbacks.filter { $0.spec.width == width }).min { $0.bytes < $1.bytes }
            }
            guard modern.spec.alone else { return modern }
            let wider = fallbacks.filter { $0.width >= modern.width }
            return (lower + wider).filter { $0.bytes < modern.bytes && $0.isAtLeastAsGood(as: modern) }.min { $0.bytes < $1.bytes } ?? modern
        }
        // One candidate per width descriptor (a fallback file standing for a narrower width has its own): the smaller file.
        var byWidth: [Int: StoredVariant] = [:]
        for file in filled where byWidth[file.width].map({ file.bytes < $0.bytes }) ?? true { byWidth[file.width] = file }
        return byWidth.values.sorted { $0.width < $1.width }
    }
}

extension StoredVariant {
    /// Whether this file stands in for `other` at no loss: anything but a lossy file searched to SSIM
    /// alone stands in for one searched to SSIMULACRA2 too (a smaller WebP may not reach that target).
    func isAtLeastAsGood(as other: StoredVariant) -> Bool {
        guard other.spec.auto?.ssimulacra2 != nil, spec.auto?.ssimulacra2 == nil, case .quality = made else { return true }
        return false
    }
}
