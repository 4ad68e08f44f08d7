import Foundation

/// Generates the markup for one image: the author's `<img>` tag (or one made for a Markdown image)
/// with its `src` replaced and the template's attributes added, inside the `picture` or `img`
/// template. The author's attributes are kept byte for byte.
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
        /// The width the author shows it at, in CSS pixels (`width` attribute or inline style).
        var displayWidth: Int? = nil
        /// The author's `width` and `height` attributes, when they are numbers.
        var width: Int? = nil
        var height: Int? = nil
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

    /// The markup's bytes, and the variants it refers to. `inline`: the file's bytes when the image is
    /// small and in the first screen: written into the page as a `data:` URI, no file, no `srcset`.
    func render(_ tag: Tag, image: ResolvedImage, variants: [StoredVariant], priority: LoadingPriority.Level,
                inline: (StoredVariant, [UInt8])? = nil) -> ([UInt8], [StoredVariant])? {
        guard let fallback = variants.widest(in: image.fallbackFormats) else { return nil }
        if let (file, bytes) = inline { return (inlined(tag, file: file, bytes: bytes), []) }
        // An image the author shows at a width of theirs is that wide, or the screen's width where the
        // screen is narrower: themes shrink images to their column (`max-width: 100%`, in Hugo's,
        // Jekyll's, MkDocs-material's and Sphinx's defaults). `600px` alone had a phone 412 px wide at
        // a pixel ratio of 2.625 take a 1,920 px file for a 380 px box.
        let sizes = tag.sizes ?? tag.displayWidth.map { "(max-width: \($0)px) 100vw, \($0)px" } ?? output.sizes
        let candidates: [StoredVariant]
        let sources: [[String: Any]]
        /// The files the `<source>`s offer.
        var sourceFiles: [StoredVariant] = []
        switch output.markup {
        case .img:
            // One srcset in the best widely supported format: WebP where it was made (and not dropped
            // as larger than the fallback), the original format elsewhere. AVIF is not widely enough
            // supported to go without a fallback.
            let widths = Set(variants.map(\.width)).sorted()
            candidates = widths.compactMap { width in
                variants.first { $0.width == width && $0.format == .webp } ?? variants.first { $0.width == width && image.fallbackFormats.contains($0.format) }
            }
            sources = []
        default:
            candidates = variants.inFormat(image.fallbackFormats)
            // Every <source> offers every width: a browser that picks a source never looks at the
            // <img>'s candidates, so a width whose modern variant was dropped (larger than the
            // fallback) is filled with the fallback file (browsers go by content, not the type).
            let widths = Set(variants.map(\.spec.width)).sorted()
            let fallbacks = variants.inFormat(image.fallbackFormats)
            sourceFiles = []
            sources = variants.formats.filter { !image.fallbackFormats.contains($0) }.map { format in
                let filled = widths.compactMap { width -> StoredVariant? in
                    guard let modern = variants.first(where: { $0.format == format && $0.spec.width == width }) else {
                        return fallbacks.first { $0.spec.width == width }
                    }
                    // A variant made alone (one fallback file) was judged against no fallback: where the
                    // fallback file there is, as wide or wider, is no larger (the source itself, a
                    // JPEG compressed harder than the search's target), that file is offered instead.
                    guard modern.spec.alone else { return modern }
                    return fallbacks.filter { $0.width >= modern.width && $0.bytes <= modern.bytes }.min { $0.bytes < $1.bytes } ?? modern
                }
                // One candidate per width descriptor (a fallback file standing for a narrower width has
                // its own): the smaller file.
                var byWidth: [Int: StoredVariant] = [:]
                for file in filled where byWidth[file.width].map({ file.bytes < $0.bytes }) ?? true { byWidth[file.width] = file }
                let offered = byWidth.values.sorted { $0.width < $1.width }
                sourceFiles += offered
                return ["type": format.mimeType, "srcset": naming.srcset(offered, of: image), "sizes": sizes]
            }
        }
        let src = candidates.max { $0.width < $1.width } ?? fallback
        let names = tag.attributes
        var added: [String: Any] = [:]
        // One fallback file (`images.fallback = "one"`) needs no srcset: the browsers that take it take no
        // `<source>` either.
        if candidates.count > 1 || sources.isEmpty {
            added["srcset"] = naming.srcset(candidates, of: image)
            if !names.contains("sizes") { added["sizes"] = sizes }
        }
        // The box the image's widest file gives (whatever format): the same box a srcset of every width gave.
        added.merge(dimensions(tag, src: variants.max { $0.width < $1.width } ?? src)) { $1 }
        if !names.contains("loading") && priority == .lazy { added["loading"] = "lazy" }
        if !names.contains("fetchpriority") && priority == .high { added["fetchpriority"] = "high" }
        if !names.contains("decoding") { added["decoding"] = "async" }
        if !names.contains("style"), let style = placeholderStyle(image) { added["style"] = style }
        if let hash = image.placeholder, placeholderKind == .blurhash { added["blurhash"] = hash }
        // Mustache treats an empty string as true: what is not added is left out entirely.
        let attributes = renderer.render("img-attributes", added)
        let img = (try? Splicer.apply([
            Edit(tag.src, ReplacementText.attribute(naming.url(src, of: image), quote: tag.srcQuote)),
            Edit(tag.insertion..<tag.insertion, attributes),
        ], to: tag.bytes)) ?? tag.bytes

        var context: [String: Any] = [
            "sources": sources,
            "img": Self.imgToken,
            "sizes": sizes,
            "fallback": ["src": naming.url(src, of: image), "width": src.width, "height": src.height,
                         "type": src.format.mimeType] as [String: Any],
        ]
        var credit: [String: Any] = [:]
        if let copyright = image.credits.copyright { credit["copyright"] = copyright }
        if let artist = image.credits.artist { credit["artist"] = artist }
        if let captured = image.credits.captured { credit["captured"] = captured }
        if !credit.isEmpty { context["credit"] = credit }
        if let value = image.placeholder { context["placeholder"] = [placeholderKind.rawValue: value, "value": value] }
        // The files the markup names, and only those.
        let used = output.markup == .img ? candidates : (sourceFiles + candidates + [src]).onePerFile
        // With nothing but the fallback (say, every WebP was larger), a <picture> would only wrap the <img>.
        let template = output.markup == .img || sources.isEmpty ? "img" : "picture"
        return (Self.splice(img, into: renderer.render(template, context)), used)
    }

    /// Where the template puts the author's tag: a token, replaced by the tag's bytes once the template
    /// is rendered, so that a page that is not UTF-8 keeps every byte of its tag (its `alt` in
    /// ISO-8859-1, say) instead of having them decoded and written again as UTF-8.
    static let imgToken = "\u{1}imgbake-img\u{1}"

    static func splice(_ img: [UInt8], into rendered: String) -> [UInt8] {
        Array(rendered.utf8).replacing(Array(imgToken.utf8), with: img)
    }

    /// Width and height give the box its aspect ratio before the image arrives (no layout shift): both
    /// the image's own when the author set neither, the missing one from the image's proportions when
    /// the author set one (their number decides the size).
    private func dimensions(_ tag: Tag, src: StoredVariant) -> [String: Any] {
        switch (tag.attributes.contains("width"), tag.attributes.contains("height")) {
        case (false, false): return ["width": String(src.width), "height": String(src.height)]
        case (true, false):
            guard let width = tag.width, src.width > 0 else { return [:] }
            return ["height": String(Int((Double(width) * Double(src.height) / Double(src.width)).rounded()))]
        case (false, true):
            guard let height = tag.height, src.height > 0 else { return [:] }
            return ["width": String(Int((Double(height) * Double(src.width) / Double(src.height)).rounded()))]
        case (true, true): return [:]
        }
    }

    /// The author's tag with the image itself as its `src`, and its size.
    private func inlined(_ tag: Tag, file: StoredVariant, bytes: [UInt8]) -> [UInt8] {
        let uri = "data:\(file.format.mimeType);base64," + Data(bytes).base64EncodedString()
        var added = dimensions(tag, src: file)
        if !tag.attributes.contains("decoding") { added["decoding"] = "async" }
        let attributes = renderer.render("img-attributes", added)
        let img = (try? Splicer.apply([
            Edit(tag.src, ReplacementText.attribute(uri, quote: tag.srcQuote)),
            Edit(tag.insertion..<tag.insertion, attributes),
        ], to: tag.bytes)) ?? tag.bytes
        return img
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
