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

    /// - Parameters:
    ///   - requests: the variant request of each reference (aligned with `scan.references`).
    ///   - layouts: what each `<img>` given markup may have written (`PageModel.layouts`, by reference index).
    ///   - priority: which images load first, chosen once for the page (`LoadingPriority`).
    ///   - inline: a small file's bytes, to write it into the page as a `data:` URI (nil: not inlined);
    ///     the page's images bring them (`PageImages.inline`).
    ///   - pending: `imgbake serve`: the URL standing for an image not made yet (`PageImages.pending`);
    ///     a reference to it is given that URL alone, as the image's widest file would be written.
    func rewrite(_ scan: PageScan, requests: [VariantRequest], layouts: [Int: ImageLayout] = [:], images: (ImageSource) -> ResolvedImage?,
                 priority: LoadingPriority, inline: (StoredVariant) -> [UInt8]? = { _ in nil },
                 pending: (ImageSource) -> String? = { _ in nil }) -> PageRewrite {
        // Files named as the page refers to them: the public path, or relative to the page.
        let naming = OutputNaming.forPage(scan.file.path, kind: scan.file.kind, links: scan.links, output: output)
        let markup = ImageMarkup(output: output, placeholderKind: plan.settings.placeholder, renderer: renderer, naming: naming)
        let writer = ReferenceWriter(naming: naming, rootNaming: self.naming, output: output)
        var draft = Draft()
        let converted = convertMarkdownImages(scan, markup: markup, images: images, into: &draft)
        let convertedSlots = Set(converted.keys)
        var preloads: [String] = []

        for (index, reference) in scan.references.enumerated() {
            if converted.values.contains(where: { $0.contains(reference.range.lowerBound) }) { continue }
            if reference.kind == .markdownDefinition {
                // Left alone when every image using it became HTML.
                let users = scan.markdownImages.indices.filter { scan.markdownImages[$0].reference == index }
                if !users.isEmpty && users.allSatisfy(convertedSlots.contains) { continue }
            }
            guard let image = images(reference.source) else {
                if let url = pending(reference.source) {
                    draft.edits.append(Edit(reference.range, ReplacementText.value(url, in: reference.syntax)))
                    draft.written[index] = url
                }
                continue
            }
            let variants = image.variants(for: requests[index], plan: plan)
            guard let fallback = variants.widest(in: image.fallbackFormats) else { continue }
            if reference.kind == .imgSrc, let element = reference.element,
               let warning = AspectCheck.check(element, image: fallback, at: reference.location) {
                draft.diagnostics.append(warning)
            }
            let layout = layouts[index] ?? .unknownPage
            let placing = ImageMarkup.Placing(layout: layout, wraps: MarkupChoice.wraps(output.markup, element: reference.element, layout: layout),
                                              priority: priority.level(of: index))
            if let edit = elementMarkup(reference, image: image, variants: variants, placing: placing, scan: scan,
                                        markup: markup, inline: inline, draft: &draft) {
                draft.edits.append(edit)
                draft.written[index] = naming.url(fallback, of: image)
                continue
            }
            switch writer.write(reference, image: image, variants: variants) {
            case .edit(let edit, let used, let url)?:
                draft.edits.append(edit)
                for variant in used { draft.outputs.insert(outputImage(variant, image)) }
                draft.written[index] = url
                // A background that is the page's likely LCP image is asked for before the stylesheet is.
                if priority.level(of: index) == .high, reference.kind == .css { preloads.append(url) }
            case .problem(let why)?:
                draft.diagnostics.append(Diagnostic(.warning, why, at: reference.location, kept: .unwritable))
            case nil:
                break
            }
        }

        if let headEnd = scan.headEnd, !preloads.isEmpty {
            draft.edits.append(Edit(headEnd..<headEnd, preloads.map {
                "<link rel=\"preload\" as=\"image\" href=\"\(HTMLEntities.escapeAttribute($0))\" fetchpriority=\"high\">"
            }.joined()))
        }
        return finish(scan, draft, converted: convertedSlots)
    }

    /// What a page's rewrite gathers as it goes.
    private struct Draft {
        var edits: [Edit] = []
        var diagnostics: [Diagnostic] = []
        var outputs = Set<OutputImage>()
        /// Reference index → the URL now in the page.
        var written: [Int: String] = [:]
        /// Images given markup so far, for `eager`.
        var marked = 0
    }

    /// Markdown images that become HTML (markdown = "html"), when their whole span is known: slot → span.
    private func convertMarkdownImages(_ scan: PageScan, markup: ImageMarkup, images: (ImageSource) -> ResolvedImage?,
                                       into draft: inout Draft) -> [Int: Range<Int>] {
        guard scan.file.kind == .markdown && output.markdown == .html && output.markup != .localize else { return [:] }
        var converted: [Int: Range<Int>] = [:]
        for (slot, image) in scan.markdownImages.enumerated() {
            guard let span = image.span, let url = image.source, let resolved = images(url), resolved.source.format != .svg,
                  let (html, used) = markup.render(ImageMarkup.tag(alt: image.alt, title: image.title), image: resolved,
                                                   variants: resolved.variants(for: plan.markupRequest(plan.defaultRequest), plan: plan),
                                                   placing: .unknownPage(output.markup, priority: draft.marked < output.eager ? .eager : .lazy))
            else { continue }
            draft.marked += 1
            draft.edits.append(Edit(span, html))
            converted[slot] = span
            for variant in used { draft.outputs.insert(outputImage(variant, resolved)) }
        }
        return converted
    }

    /// The edit writing an `<img>` whole again (srcset, sizes, dimensions, `<picture>`, loading), if the
    /// reference is one that imgbake wraps; nil leaves the reference to the reference writer.
    private func elementMarkup(_ reference: ImageReference, image: ResolvedImage, variants: [StoredVariant], placing: ImageMarkup.Placing,
                               scan: PageScan, markup: ImageMarkup, inline fileBytes: (StoredVariant) -> [UInt8]?,
                               draft: inout Draft) -> Edit? {
        guard reference.kind == .imgSrc, let element = reference.element, getsMarkup(element, image, in: scan.file),
              case .attribute(let quote) = reference.syntax else { return nil }
        let start = element.tagRange.lowerBound
        let tag = ImageMarkup.Tag(bytes: Array(scan.file.bytes[element.tagRange]),
                                  src: reference.range.lowerBound - start..<reference.range.upperBound - start,
                                  srcQuote: quote, insertion: element.insertionOffset - start,
                                  attributes: element.attributeNames, sizes: element.sizes,
                                  displayWidth: element.displayWidth, width: element.width, height: element.height,
                                  style: element.style.map { $0.valueRange.lowerBound - start..<$0.valueRange.upperBound - start })
        var placing = placing
        if placing.priority == .lazy && draft.marked < output.eager { placing.priority = .eager }
        let inline = placing.priority != .lazy && scan.allowsDataImages ? inlined(variants, fileBytes) : nil
        guard let (html, used) = markup.render(tag, image: image, variants: variants, placing: placing, inline: inline) else { return nil }
        draft.marked += 1
        for variant in used { draft.outputs.insert(outputImage(variant, image)) }
        return Edit(element.tagRange, html)
    }

    /// The page's new bytes from the draft's edits, checked (a Markdown page must parse as intended).
    private func finish(_ scan: PageScan, _ draft: Draft, converted: Set<Int>) -> PageRewrite {
        guard !draft.edits.isEmpty else {
            return PageRewrite(bytes: nil, outputs: [], diagnostics: draft.diagnostics, localised: 0)
        }
        let bytes: [UInt8]
        do { bytes = try Splicer.apply(draft.edits, to: scan.file.bytes) } catch {
            return unchanged(scan, "internal error: \(error); page left unchanged")
        }
        if scan.file.kind == .markdown,
           let problem = MarkdownCheck.verify(scan, rewritten: bytes, written: draft.written, converted: converted) {
            return unchanged(scan, "the rewritten Markdown did not parse as intended (\(problem)); page left unchanged")
        }
        return PageRewrite(bytes: bytes, outputs: draft.outputs, diagnostics: draft.diagnostics,
                           localised: draft.written.count + converted.count)
    }

    /// The smallest file of the variants, with its bytes, when it is small enough to be written into the
    /// page (`output.inline_images`).
    private func inlined(_ variants: [StoredVariant], _ fileBytes: (StoredVariant) -> [UInt8]?) -> (StoredVariant, [UInt8])? {
        guard output.inlineBytes > 0, let smallest = variants.min(by: { $0.bytes < $1.bytes }),
              smallest.bytes <= output.inlineBytes, smallest.format != .svg, let bytes = fileBytes(smallest) else { return nil }
        return (smallest, bytes)
    }

    private func unchanged(_ scan: PageScan, _ message: String) -> PageRewrite {
        PageRewrite(bytes: nil, outputs: [],
                    diagnostics: [Diagnostic(.warning, message, at: SourceLocation(file: scan.file.path, line: 1, column: 1))],
                    localised: 0)
    }

    private func outputImage(_ variant: StoredVariant, _ image: ResolvedImage) -> OutputImage {
        OutputImage(fileName: naming.fileName(variant, of: image), blob: variant.blob, bytes: variant.bytes, key: image.key)
    }

    private func getsMarkup(_ element: ImageElement, _ image: ResolvedImage, in file: SourceFile) -> Bool {
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
