import CommonMark

/// The result of rewriting one page.
public struct PageRewrite: Sendable {
    /// The new bytes, or nil when nothing changed (the page is then not written).
    public var bytes: [UInt8]?
    /// The image files this page now refers to.
    public var outputs: Set<OutputImage>
    public var diagnostics: [Diagnostic]
    /// References replaced.
    public var localised: Int
    /// The new bytes' blob in the cache (`--out`), for writing the page again if its output is lost.
    public var rendered: BlobID? = nil
}

/// Turns a scanned page and the resolved images into byte splices. An `<img src>` (not in a
/// `<picture>`, without the author's `srcset`) becomes the template's markup; with
/// `markdown = "html"`, so does a Markdown image; everything else — author `srcset` and `<source>`
/// candidates, Markdown destinations — is localised one for one, to the widest variant in the original
/// format.
public struct PageRewriter: Sendable {
    public var output: OutputSettings
    public var plan: VariantPlan
    public var renderer: MarkupRenderer
    public var naming: OutputNaming

    public init(output: OutputSettings, images: ImageSettings, renderer: MarkupRenderer) {
        self.output = output
        self.plan = VariantPlan(settings: images)
        self.renderer = renderer
        naming = OutputNaming(publicPath: output.publicPath)
    }

    /// - Parameter requests: the variant request of each reference (aligned with `scan.references`).
    public func rewrite(_ scan: PageScan, requests: [VariantRequest], images: (ImageSource) -> ResolvedImage?) -> PageRewrite {
        let markup = ImageMarkup(output: output, placeholderKind: plan.settings.placeholder, renderer: renderer, naming: naming)
        let writer = ReferenceWriter(naming: naming, output: output)
        var edits: [Edit] = []
        var diagnostics: [Diagnostic] = []
        var outputs = Set<OutputImage>()
        var written: [Int: String] = [:] // reference index → the URL now in the page
        var marked = 0 // images given markup so far, for `eager`

        // Markdown images that become HTML (markdown = "html"), when their whole span is known.
        var converted: [Int: Range<Int>] = [:] // slot → span
        if scan.file.kind == .markdown && output.markdown == .html && output.markup != .localize {
            for (slot, image) in scan.markdownImages.enumerated() {
                guard let span = image.span, let url = image.source, let resolved = images(url), resolved.source.format != .svg,
                      let (html, used) = markup.render(ImageMarkup.tag(alt: image.alt, title: image.title), image: resolved,
                                                       variants: resolved.variants(for: plan.defaultRequest, plan: plan),
                                                       eager: marked < output.eager)
                else { continue }
                marked += 1
                edits.append(Edit(span, html))
                converted[slot] = span
                for variant in used { outputs.insert(outputImage(variant, resolved)) }
            }
        }
        let convertedSlots = Set(converted.keys)

        for (index, reference) in scan.references.enumerated() {
            if converted.values.contains(where: { $0.contains(reference.range.lowerBound) }) { continue }
            if reference.kind == .markdownDefinition {
                // Left alone when every image using it became HTML.
                let users = scan.markdownImages.indices.filter { scan.markdownImages[$0].reference == index }
                if !users.isEmpty && users.allSatisfy(convertedSlots.contains) { continue }
            }
            guard let image = images(reference.source) else { continue }
            let variants = image.variants(for: requests[index], plan: plan)
            guard let fallback = variants.widest(in: image.fallbackFormat) else { continue }
            if reference.kind == .imgSrc, let element = reference.element,
               let warning = AspectCheck.check(element, image: fallback, at: reference.location) {
                diagnostics.append(warning)
            }
            if reference.kind == .imgSrc, let element = reference.element, wraps(element, image, in: scan.file),
               case .attribute(let quote) = reference.syntax {
                let start = element.tagRange.lowerBound
                let tag = ImageMarkup.Tag(bytes: Array(scan.file.bytes[element.tagRange]),
                                          src: reference.range.lowerBound - start..<reference.range.upperBound - start,
                                          srcQuote: quote, insertion: element.insertionOffset - start,
                                          attributes: element.attributeNames, sizes: element.sizes)
                if let (html, used) = markup.render(tag, image: image, variants: variants, eager: marked < output.eager) {
                    marked += 1
                    edits.append(Edit(element.tagRange, html))
                    for variant in used { outputs.insert(outputImage(variant, image)) }
                    written[index] = naming.url(fallback, of: image)
                    continue
                }
            }
            switch writer.write(reference, image: image, variants: variants) {
            case .edit(let edit, let used, let url)?:
                edits.append(edit)
                for variant in used { outputs.insert(outputImage(variant, image)) }
                written[index] = url
            case .problem(let why)?:
                diagnostics.append(Diagnostic(.error, why, at: reference.location))
            case nil:
                break
            }
        }

        guard !edits.isEmpty else { return PageRewrite(bytes: nil, outputs: [], diagnostics: diagnostics, localised: 0) }
        let bytes: [UInt8]
        do { bytes = try Splicer.apply(edits, to: scan.file.bytes) } catch {
            return unchanged(scan, "internal error: \(error); page left unchanged")
        }
        if scan.file.kind == .markdown,
           let problem = MarkdownCheck.verify(scan, rewritten: bytes, written: written, converted: convertedSlots) {
            return unchanged(scan, "the rewritten Markdown did not parse as intended (\(problem)); page left unchanged")
        }
        return PageRewrite(bytes: bytes, outputs: outputs, diagnostics: diagnostics, localised: written.count + converted.count)
    }

    private func unchanged(_ scan: PageScan, _ message: String) -> PageRewrite {
        PageRewrite(bytes: nil, outputs: [],
                    diagnostics: [Diagnostic(.warning, message, at: SourceLocation(file: scan.file.path, line: 1, column: 1))],
                    localised: 0)
    }

    private func outputImage(_ variant: StoredVariant, _ image: ResolvedImage) -> OutputImage {
        OutputImage(fileName: naming.fileName(variant, of: image), blob: variant.blob, bytes: variant.bytes, key: image.key)
    }

    private func wraps(_ element: ImageElement, _ image: ResolvedImage, in file: SourceFile) -> Bool {
        let markupHere = file.kind == .html || (file.kind == .markdown && output.markdown == .html)
        return markupHere && output.markup != .localize && !element.inPicture && !element.hasSrcset
            && image.source.format != .svg
    }
}

/// Markdown rewrites are checked by parsing the result again: every image that was not turned into
/// HTML must now have the URL the rewrite meant to give it (and every other image its old one).
enum MarkdownCheck {
    static func verify(_ scan: PageScan, rewritten: [UInt8], written: [Int: String], converted: Set<Int>) -> String? {
        let nodes = FrontMatterScanner.masked(rewritten).withUnsafeBytes { MarkdownParser.parse($0) }
        let images = MarkdownScanner.images(in: nodes).map { nodes[$0] }
        let expected = scan.markdownImages.enumerated().filter { !converted.contains($0.offset) }.map(\.element)
        guard images.count == expected.count else {
            return "\(expected.count) Markdown images expected, \(images.count) found"
        }
        for (number, (slot, node)) in zip(expected, images).enumerated() {
            let want = slot.reference.flatMap { written[$0] } ?? slot.written
            if node.url != want {
                return "image \(number + 1) would point at \(node.url ?? "nothing") instead of \(want)"
            }
        }
        return nil
    }
}
