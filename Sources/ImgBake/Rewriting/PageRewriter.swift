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
/// `<picture>`, without the author's `srcset`) becomes the `picture` template's markup with the
/// author's tag kept byte for byte apart from `src` and the added attributes; everything else —
/// author `srcset` and `<source>` candidates, Markdown destinations — is localised one for one.
public struct PageRewriter: Sendable {
    public var output: OutputSettings
    public var renderer: MarkupRenderer
    public var naming: OutputNaming

    public init(output: OutputSettings, renderer: MarkupRenderer) {
        self.output = output
        self.renderer = renderer
        naming = OutputNaming(publicPath: output.publicPath)
    }

    public func rewrite(_ scan: PageScan, images: (RemoteURL) -> ResolvedImage?) -> PageRewrite {
        var edits: [Edit] = []
        var outputs = Set<OutputImage>()
        var written: [Int: String] = [:] // reference index → the URL now in the page
        var srcsetGroups: [Range<Int>: (quote: UInt8?, candidates: [SrcsetCandidate], replaced: [Int: String])] = [:]

        for (index, reference) in scan.references.enumerated() {
            guard let image = images(reference.url), let fallback = image.fallback else { continue }
            if reference.kind == .imgSrc, let element = reference.element, wraps(element, image, in: scan.file) {
                edits.append(pictureEdit(reference, element, image, file: scan.file))
                for variant in image.variants { outputs.insert(output(variant, image)) }
                written[index] = naming.url(fallback, of: image)
                continue
            }
            let url = naming.url(fallback, of: image)
            outputs.insert(output(fallback, image))
            written[index] = url
            switch reference.syntax {
            case .attribute(let quote):
                edits.append(Edit(reference.range, ReplacementText.attribute(url, quote: quote)))
            case .markdownDestination(let angle):
                edits.append(Edit(reference.range, ReplacementText.markdownDestination(url, angle: angle)))
            case .srcsetValue(let quote, let candidates, let candidateIndex):
                srcsetGroups[reference.range, default: (quote, candidates, [:])].replaced[candidateIndex] = url
            }
        }
        for (range, group) in srcsetGroups {
            let value = SrcsetParser.serialize(group.candidates.enumerated().map { index, candidate in
                (group.replaced[index] ?? candidate.url, candidate.descriptors)
            })
            edits.append(Edit(range, ReplacementText.attribute(value, quote: group.quote)))
        }

        guard !edits.isEmpty else { return PageRewrite(bytes: nil, outputs: [], diagnostics: [], localised: 0) }
        let bytes: [UInt8]
        do { bytes = try Splicer.apply(edits, to: scan.file.bytes) } catch {
            return unchanged(scan, "internal error: \(error); page left unchanged")
        }
        if scan.file.kind == .markdown, let problem = MarkdownCheck.verify(scan, rewritten: bytes, written: written) {
            return unchanged(scan, "the rewritten Markdown did not parse as intended (\(problem)); page left unchanged")
        }
        return PageRewrite(bytes: bytes, outputs: outputs, diagnostics: [], localised: written.count)
    }

    private func unchanged(_ scan: PageScan, _ message: String) -> PageRewrite {
        PageRewrite(bytes: nil, outputs: [],
                    diagnostics: [Diagnostic(.warning, message, at: SourceLocation(file: scan.file.path, line: 1, column: 1))],
                    localised: 0)
    }

    private func output(_ variant: StoredVariant, _ image: ResolvedImage) -> OutputImage {
        OutputImage(fileName: naming.fileName(variant, of: image), blob: variant.blob, bytes: variant.bytes, key: image.key)
    }

    private func wraps(_ element: ImageElement, _ image: ResolvedImage, in file: SourceFile) -> Bool {
        let markupHere = file.kind == .html || output.markdown == .html
        return markupHere && output.markup != .localize && !element.inPicture && !element.hasSrcset
            && image.source.format != .svg
    }

    /// The author's `<img>` with `src` replaced and the generated attributes added, inside the
    /// `picture` (or `img`) template's markup.
    private func pictureEdit(_ reference: ImageReference, _ element: ImageElement, _ image: ResolvedImage,
                             file: SourceFile) -> Edit {
        let fallback = image.fallback!
        let fallbackVariants = image.variants(in: image.fallbackFormat)
        let sizes = element.sizes ?? output.sizes
        let names = element.attributeNames
        let authorSizedIt = names.contains("width") || names.contains("height")
        // Mustache treats an empty string as true: attributes the author set are left out entirely.
        var added: [String: Any] = ["srcset": naming.srcset(fallbackVariants, of: image)]
        if !names.contains("sizes") { added["sizes"] = sizes }
        if !authorSizedIt {
            added["width"] = String(fallback.width)
            added["height"] = String(fallback.height)
        }
        let attributes = renderer.render("img-attributes", added)
        let tagStart = element.tagRange.lowerBound
        guard case .attribute(let quote) = reference.syntax else { fatalError("img src is always an attribute") }
        let tag = (try? Splicer.apply([
            Edit(reference.range.lowerBound - tagStart..<reference.range.upperBound - tagStart,
                 ReplacementText.attribute(naming.url(fallback, of: image), quote: quote)),
            Edit(element.insertionOffset - tagStart..<element.insertionOffset - tagStart, attributes),
        ], to: Array(file.bytes[element.tagRange]))) ?? Array(file.bytes[element.tagRange])

        let sources: [[String: Any]] = output.markup == .picture ? image.formats.dropLast().map { format in
            ["type": format.mimeType, "srcset": naming.srcset(image.variants(in: format), of: image), "sizes": sizes]
        } : []
        let context: [String: Any] = [
            "sources": sources,
            "img": String(decoding: tag, as: UTF8.self),
            "sizes": sizes,
            "fallback": ["src": naming.url(fallback, of: image), "width": fallback.width, "height": fallback.height,
                         "type": fallback.format.mimeType] as [String: Any],
        ]
        return Edit(element.tagRange, renderer.render(output.markup == .picture ? "picture" : "img", context))
    }
}

/// Markdown rewrites are checked by parsing the result again: every image must now have the URL the
/// rewrite meant to give it (and every other image its old one).
enum MarkdownCheck {
    static func verify(_ scan: PageScan, rewritten: [UInt8], written: [Int: String]) -> String? {
        let images = rewritten.withUnsafeBytes { MarkdownParser.parse($0) }.filter { $0.type == "image" }
        guard images.count == scan.markdownImages.count else {
            return "\(scan.markdownImages.count) images before, \(images.count) after"
        }
        for (number, (slot, node)) in zip(scan.markdownImages, images).enumerated() {
            let expected = slot.reference.flatMap { written[$0] } ?? slot.written
            if node.url != expected {
                return "image \(number + 1) would point at \(node.url ?? "nothing") instead of \(expected)"
            }
        }
        return nil
    }
}
