import CommonMark

/// Finds images in Markdown (remote, and the site's own): inline images (`![alt](url "title")`, `<...>` destinations,
/// multi-line alt text), reference-style images (full, collapsed, shortcut) through their
/// `[label]: url` definitions, and `<img>`/`<picture>` in raw HTML. cmark-gfm decides what is an
/// image, so nothing in code spans, code blocks or behind `\![` is touched.
///
/// cmark-gfm reports where an image node is, not where its URL is, and its inline positions are
/// sometimes wrong; so the destination is re-lexed from the reported span and must decode to the URL
/// cmark parsed, else it is searched for in the enclosing block, else the image is reported and left.
public enum MarkdownScanner {
    /// The front matter's images, then the body's; cmark-gfm reads the body with the front matter
    /// blanked, as it would otherwise take it for a thematic break and a heading.
    public static func scan(_ file: SourceFile, settings: ScanSettings = ScanSettings()) -> PageScan {
        // Most pages have none: their file is scanned as it is, not copied and indexed again.
        guard let block = FrontMatterScanner.block(in: file.bytes) else { return scanBody(file, settings: settings) }
        let front = FrontMatterScanner.scan(file, block: block, settings: settings)
        var scan = scanBody(SourceFile(path: file.path, kind: file.kind, bytes: FrontMatterScanner.masked(file.bytes, block: block)),
                            settings: settings)
        scan.file = file
        scan.outputs = front.outputs + scan.outputs
        guard !front.references.isEmpty || !front.diagnostics.isEmpty else { return scan }
        scan.references += front.references
        scan.diagnostics = front.diagnostics + scan.diagnostics
        return inDocumentOrder(scan)
    }

    private static func scanBody(_ file: SourceFile, settings: ScanSettings) -> PageScan {
        let nodes = file.bytes.withUnsafeBytes { MarkdownParser.parse($0) }
        var scan = PageScan(file: file, references: [], diagnostics: [])
        var excluded = Set<Int>()
        var htmlBlocks: [Range<Int>] = []
        for node in nodes where node.type == "code_block" || node.type == "html_block" {
            guard node.start.line >= 1, node.end.line >= node.start.line else { continue }
            excluded.formUnion(node.start.line...node.end.line)
            if node.type == "html_block" {
                let start = file.offset(line: node.start.line, byteColumn: node.start.column)
                htmlBlocks.append(start..<max(start, file.lineRange(node.end.line).upperBound))
            }
        }
        var locator = Locator(file: file, nodes: nodes, definitions: ReferenceDefinitions.find(in: file, excluding: excluded),
                              settings: settings)
        locator.locateImages(into: &scan)
        for region in htmlBlocks {
            let found = HTMLScanner.references(in: file, region: region, honourBase: false, settings: settings)
            scan.references += found.references
            scan.diagnostics += found.diagnostics
            scan.outputs += found.outputs
        }
        locator.locateInlineHTML(into: &scan)
        return inDocumentOrder(scan)
    }

    /// Indices of the image nodes, but those in another image's description: that is alt text
    /// (`![a ![b](x)](y)` renders one `<img>`, alt "a b"). Taken for images, their spans nested in the
    /// outer one's made `markdown = "html"` give up on the page, and nested thousands deep, the scan
    /// took minutes.
    static func images(in nodes: [MarkdownNode]) -> [Int] {
        var inImage = [Bool](repeating: false, count: nodes.count)
        var images: [Int] = []
        for (index, node) in nodes.enumerated() {
            if let parent = node.parent { inImage[index] = inImage[parent] || nodes[parent].type == "image" }
            if node.type == "image" && !inImage[index] { images.append(index) }
        }
        return images
    }

    /// Sorts references by position (fallback searches find some late), keeping slots pointing at them.
    private static func inDocumentOrder(_ scan: PageScan) -> PageScan {
        var sorted = scan
        let order = scan.references.indices.sorted { scan.references[$0].range.lowerBound < scan.references[$1].range.lowerBound }
        var newIndex = [Int](repeating: 0, count: order.count)
        for (new, old) in order.enumerated() { newIndex[old] = new }
        sorted.references = order.map { scan.references[$0] }
        for i in sorted.markdownImages.indices {
            sorted.markdownImages[i].reference = sorted.markdownImages[i].reference.map { newIndex[$0] }
        }
        return sorted
    }
}

/// The per-file state of locating image destinations.
private struct Locator {
    let file: SourceFile
    let nodes: [MarkdownNode]
    let definitions: [ReferenceDefinition]
    /// Reference index already made for a definition (one definition serves many images).
    var definitionReferences: [Int: Int] = [:]
    /// Destination start offsets already attributed to an image.
    var claimed: Set<Int> = []
    /// URLs of links: a definition with one of these may serve a link, which must keep its URL.
    let linkURLs: Set<String>
    let settings: ScanSettings
    let resolver: ReferenceResolver

    init(file: SourceFile, nodes: [MarkdownNode], definitions: [ReferenceDefinition], settings: ScanSettings) {
        self.file = file
        self.nodes = nodes
        self.definitions = definitions
        self.settings = settings
        resolver = ReferenceResolver(settings: settings, pagePath: file.path)
        linkURLs = Set(nodes.filter { $0.type == "link" }.compactMap(\.url))
    }

    private enum SpanResult {
        case inline(MarkdownSyntax.Destination)
        /// A reference image: its normalised label, and the bytes from the `]` closing its description
        /// to its end (`]`, `][]` or `][label]`).
        case label(String, reference: Range<Int>)
    }

    mutating func locateImages(into scan: inout PageScan) {
        var fallbacks: [(slot: Int, node: Int, url: ImageSource)] = []
        for index in MarkdownScanner.images(in: nodes) {
            let node = nodes[index]
            let written = node.url ?? ""
            var url: ImageSource?
            switch resolver.resolve(written) {
            case .image(let source): url = source
            case .output(let name):
                url = nil
                let location = file.location(ofByte: file.offset(line: node.start.line, byteColumn: node.start.column))
                scan.outputs.append(OutputUse(name: name, location: location))
            case .ignored: url = nil
            case .problem(let why):
                let location = file.location(ofByte: file.offset(line: node.start.line, byteColumn: node.start.column))
                scan.diagnostics.append(Diagnostic(.warning, "\(why); left as it is", at: location))
            }
            scan.markdownImages.append(MarkdownImageSlot(written: written, reference: nil, alt: altText(of: index),
                                                         title: node.title.flatMap { $0.isEmpty ? nil : $0 }, source: url))
            let slot = scan.markdownImages.count - 1
            guard let url else { continue }
            let located = locateBySpan(node)
            if located != nil { scan.markdownImages[slot].span = span(of: node) }
            switch located {
            case .inline(let destination) where !claimed.contains(destination.range.lowerBound):
                scan.markdownImages[slot].reference = addInline(destination, url: url, to: &scan)
            case .label(let label, let reference):
                if let definition = definitions.firstIndex(where: { $0.label == label }),
                   definitions[definition].destination.decoded == written {
                    scan.markdownImages[slot].reference = linkURLs.contains(written)
                        ? addInlined(reference, title: node.title.flatMap { $0.isEmpty ? nil : $0 }, url: url, to: &scan)
                        : addDefinition(definition, url: url, to: &scan)
                } else {
                    fallbacks.append((slot, index, url))
                }
            default:
                fallbacks.append((slot, index, url))
            }
        }
        for (slot, index, url) in fallbacks {
            let node = nodes[index]
            let written = node.url ?? ""
            let candidates = MarkdownSyntax.inlineDestinations(in: file.bytes, range: enclosingBlock(of: index)).filter {
                $0.decoded == written && !claimed.contains($0.range.lowerBound)
            }
            let location = file.location(ofByte: file.offset(line: node.start.line, byteColumn: node.start.column))
            if candidates.count == 1 {
                scan.markdownImages[slot].reference = addInline(candidates[0], url: url, to: &scan)
            } else if candidates.isEmpty, !linkURLs.contains(written),
                      let definition = definitions.firstIndex(where: { $0.destination.decoded == written }) {
                scan.markdownImages[slot].reference = addDefinition(definition, url: url, to: &scan)
            } else {
                let why = !candidates.isEmpty ? "its destination is written \(candidates.count) times in this paragraph"
                    : linkURLs.contains(written) ? "a link has its URL, and the image's own place in the source was not found"
                    : "its destination was not found in the source"
                scan.diagnostics.append(Diagnostic(.warning, "\(url): image left as it is: \(why)", at: location))
            }
        }
    }

    /// Raw `<img>`/`<source>` inside paragraphs. Each tag's text must occur in its block exactly as
    /// often as cmark found it, otherwise (say, the same tag also inside a code span) it is left alone.
    func locateInlineHTML(into scan: inout PageScan) {
        var perBlock: [Int: [String]] = [:]
        for (index, node) in nodes.enumerated() where node.type == "html_inline" {
            guard let literal = node.literal?.lowercased(), literal.hasPrefix("<img") || literal.hasPrefix("<source")
            else { continue }
            perBlock[enclosingBlockIndex(of: index), default: []].append(node.literal!)
        }
        for (block, literals) in perBlock.sorted(by: { $0.key < $1.key }) {
            let range = blockRange(nodes[block])
            for literal in Set(literals).sorted() {
                let occurrences = file.bytes.occurrences(of: Array(literal.utf8), in: range)
                let expected = literals.filter { $0 == literal }.count
                guard occurrences.count == expected else {
                    let location = file.location(ofByte: occurrences.first ?? range.lowerBound)
                    scan.diagnostics.append(Diagnostic(.warning, "inline HTML image left as it is: its tag text occurs \(occurrences.count) times in this paragraph", at: location))
                    continue
                }
                for start in occurrences {
                    let found = HTMLScanner.references(in: file, region: start..<start + literal.utf8.count, honourBase: false,
                                                       settings: settings)
                    scan.references += found.references
                    scan.diagnostics += found.diagnostics
                    scan.outputs += found.outputs
                }
            }
        }
    }

    // MARK: Locating

    /// The bytes cmark says the image occupies (checked by `locateBySpan` before use).
    private func span(of node: MarkdownNode) -> Range<Int> {
        file.offset(line: node.start.line, byteColumn: node.start.column)..<file.offset(line: node.end.line, byteColumn: node.end.column) + 1
    }

    /// The image description as plain text: its text and code descendants, line breaks as spaces.
    private func altText(of index: Int) -> String {
        var text = ""
        var inside: Set<Int> = [index]
        for child in nodes.indices.dropFirst(index + 1) {
            guard let parent = nodes[child].parent, inside.contains(parent) else { break }
            inside.insert(child)
            switch nodes[child].type {
            case "text", "code": text += nodes[child].literal ?? ""
            case "softbreak", "linebreak": text += " "
            default: break
            }
        }
        return text
    }

    private func locateBySpan(_ node: MarkdownNode) -> SpanResult? {
        let bytes = file.bytes
        let start = file.offset(line: node.start.line, byteColumn: node.start.column)
        let end = file.offset(line: node.end.line, byteColumn: node.end.column)
        guard end > start, end < bytes.count, start + 1 < bytes.count,
              bytes[start] == UInt8(ascii: "!"), bytes[start + 1] == UInt8(ascii: "["),
              let altClose = MarkdownSyntax.closingBracket(in: bytes, from: start + 2, limit: end + 1)
        else { return nil }
        switch bytes[end] {
        case UInt8(ascii: ")"):
            guard altClose + 1 < end, bytes[altClose + 1] == UInt8(ascii: "("),
                  let destination = MarkdownSyntax.destination(in: bytes, at: altClose + 2, limit: end),
                  destination.decoded == node.url
            else { return nil }
            return .inline(destination)
        case UInt8(ascii: "]"):
            let reference = altClose..<end + 1
            if altClose == end { return .label(MarkdownSyntax.normalizedLabel(bytes[start + 2..<altClose]), reference: reference) }
            guard bytes[altClose + 1] == UInt8(ascii: "[") else { return nil }
            let label = bytes[altClose + 2..<end]
            return .label(MarkdownSyntax.normalizedLabel(label.isEmpty ? bytes[start + 2..<altClose] : label), reference: reference)
        default:
            return nil
        }
    }

    private func enclosingBlockIndex(of index: Int) -> Int {
        var current = index
        while let parent = nodes[current].parent {
            current = parent
            if nodes[current].isBlock { return current }
        }
        return current
    }

    private func enclosingBlock(of index: Int) -> Range<Int> {
        blockRange(nodes[enclosingBlockIndex(of: index)])
    }

    /// Whole lines of a block (block positions from cmark are reliable; columns of continuation lines
    /// are not needed).
    private func blockRange(_ node: MarkdownNode) -> Range<Int> {
        guard node.start.line >= 1 else { return 0..<file.bytes.count }
        return file.lineRange(node.start.line).lowerBound..<file.lineRange(max(node.end.line, node.start.line)).upperBound
    }

    // MARK: Recording

    private mutating func addInline(_ destination: MarkdownSyntax.Destination, url: ImageSource, to scan: inout PageScan) -> Int {
        claimed.insert(destination.range.lowerBound)
        scan.references.append(ImageReference(
            kind: .markdownImage, source: url, location: file.location(ofByte: destination.range.lowerBound),
            range: destination.range, syntax: .markdownDestination(angle: destination.angle)))
        return scan.references.count - 1
    }

    /// A reference image whose definition may also serve a link gets a destination of its own:
    /// `](url "title")` replaces its `]`, `][]` or `][label]`, and the definition is left to the link.
    private mutating func addInlined(_ reference: Range<Int>, title: String?, url: ImageSource, to scan: inout PageScan) -> Int {
        scan.references.append(ImageReference(
            kind: .markdownImage, source: url, location: file.location(ofByte: reference.lowerBound),
            range: reference, syntax: .markdownInlinedReference(title: title)))
        return scan.references.count - 1
    }

    private mutating func addDefinition(_ definition: Int, url: ImageSource, to scan: inout PageScan) -> Int {
        if let existing = definitionReferences[definition] { return existing }
        let destination = definitions[definition].destination
        claimed.insert(destination.range.lowerBound)
        scan.references.append(ImageReference(
            kind: .markdownDefinition, source: url, location: file.location(ofByte: destination.range.lowerBound),
            range: destination.range, syntax: .markdownDestination(angle: destination.angle)))
        definitionReferences[definition] = scan.references.count - 1
        return scan.references.count - 1
    }
}

extension Array where Element == UInt8 {
    /// Start offsets of every occurrence of `needle` in `range` (non-overlapping).
    func occurrences(of needle: [UInt8], in range: Range<Int>) -> [Int] {
        guard !needle.isEmpty, range.count >= needle.count else { return [] }
        var found: [Int] = []
        var i = range.lowerBound
        while i + needle.count <= range.upperBound {
            if self[i] == needle[0], self[i..<i + needle.count].elementsEqual(needle) {
                found.append(i)
                i += needle.count
            } else {
                i += 1
            }
        }
        return found
    }
}
