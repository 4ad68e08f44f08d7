import Gumbo

/// Finds remote image references in HTML: `<img src>`, `<img srcset>` and `<picture><source srcset>`,
/// each with the exact bytes of its URL. Relative URLs resolve against a remote `<base href>`.
/// The HTML5 tree builder decides what is markup, so image tags inside `<script>`, `<style>`,
/// comments, `<textarea>` or text are never touched. `data-imgbake="skip"` opts an element out.
public enum HTMLScanner {
    /// Scans a whole page.
    public static func scan(_ file: SourceFile) -> PageScan {
        var scan = PageScan(file: file, references: [], diagnostics: [])
        let found = references(in: file, region: 0..<file.bytes.count, honourBase: true)
        scan.references = found.references
        scan.diagnostics = found.diagnostics
        scan.remoteBase = found.remoteBase
        return scan
    }

    /// References in `region` of `file` (a whole page, or a raw HTML block inside Markdown, where
    /// `<base>` has no meaning).
    static func references(in file: SourceFile, region: Range<Int>, honourBase: Bool)
        -> (references: [ImageReference], diagnostics: [Diagnostic], remoteBase: (url: RemoteURL, location: SourceLocation)?) {
        let elements = file.bytes[region].withUnsafeBytes {
            HTMLParser.elements(in: $0, tags: ["img", "source", "base"])
        }
        let shift = region.lowerBound
        var base: RemoteURL?
        var remoteBase: (url: RemoteURL, location: SourceLocation)?
        // The first <base href> applies to the whole document, also to URLs written before it.
        if honourBase, let href = elements.first(where: { $0.tag == "base" && $0.attribute("href") != nil })?.attribute("href"),
           let url = RemoteURL.resolve(href.value) {
            base = url
            remoteBase = (url, file.location(ofByte: href.valueRange.lowerBound + shift))
        }

        var references: [ImageReference] = []
        var diagnostics: [Diagnostic] = []
        for element in elements where element.attribute("data-imgbake")?.value.lowercased() != "skip" {
            switch element.tag {
            case "img":
                if let src = element.attribute("src"),
                   var reference = attributeReference(.imgSrc, src, file: file, shift: shift, base: base) {
                    reference.element = imageElement(element, file: file, shift: shift)
                    references.append(reference)
                }
                if let srcset = element.attribute("srcset") {
                    srcsetReferences(.imgSrcset, srcset, file: file, shift: shift, base: base, into: &references, &diagnostics)
                }
            case "source" where element.parentTag == "picture":
                if let srcset = element.attribute("srcset") {
                    srcsetReferences(.sourceSrcset, srcset, file: file, shift: shift, base: base, into: &references, &diagnostics)
                }
            default:
                break
            }
        }
        return (references, diagnostics, remoteBase)
    }

    private static func attributeReference(_ kind: ImageReference.Kind, _ attribute: HTMLAttribute,
                                           file: SourceFile, shift: Int, base: RemoteURL?) -> ImageReference? {
        guard let url = RemoteURL.resolve(attribute.value, against: base) else { return nil }
        // Replace the URL itself, not the white space a browser ignores around it.
        var range = attribute.valueRange
        while range.lowerBound < range.upperBound, file.bytes[range.lowerBound + shift].isHTMLSpace {
            range = range.lowerBound + 1..<range.upperBound
        }
        while range.lowerBound < range.upperBound, file.bytes[range.upperBound - 1 + shift].isHTMLSpace {
            range = range.lowerBound..<range.upperBound - 1
        }
        let shifted = range.lowerBound + shift..<range.upperBound + shift
        return ImageReference(kind: kind, source: .remote(url), location: file.location(ofByte: shifted.lowerBound),
                              range: shifted, syntax: .attribute(quote: attribute.quote))
    }

    /// The candidates of a srcset, each with the raw bytes of its URL (character references included),
    /// so that only URLs are replaced and every other byte is kept.
    private static func srcsetReferences(_ kind: ImageReference.Kind, _ attribute: HTMLAttribute, file: SourceFile, shift: Int,
                                         base: RemoteURL?, into references: inout [ImageReference], _ diagnostics: inout [Diagnostic]) {
        let valueStart = attribute.valueRange.lowerBound + shift
        let decoded = HTMLEntities.decodeAttribute(file.bytes[valueStart..<attribute.valueRange.upperBound + shift])
        guard decoded.bytes.elementsEqual(attribute.value.utf8) else {
            if SrcsetParser.parse(Array(attribute.value.utf8)).contains(where: { RemoteURL.resolve($0.url, against: base) != nil }) {
                diagnostics.append(Diagnostic(.warning, "srcset left as it is: it has a character reference imgbake cannot map to its bytes",
                                              at: file.location(ofByte: valueStart)))
            }
            return
        }
        for candidate in SrcsetParser.parse(decoded.bytes) {
            guard let url = RemoteURL.resolve(candidate.url, against: base) else { continue }
            let raw = decoded.rawRange(of: candidate.urlRange)
            let range = valueStart + raw.lowerBound..<valueStart + raw.upperBound
            references.append(ImageReference(kind: kind, source: .remote(url), location: file.location(ofByte: range.lowerBound),
                                             range: range, syntax: .attribute(quote: attribute.quote)))
        }
    }

    private static func imageElement(_ element: HTMLElement, file: SourceFile, shift: Int) -> ImageElement? {
        let tag = element.tagRange.lowerBound + shift..<element.tagRange.upperBound + shift
        // A start tag cut off by the end of the file cannot take new attributes safely.
        guard tag.count >= 2, file.bytes[tag.upperBound - 1] == UInt8(ascii: ">") else { return nil }
        var insertion = tag.upperBound - 1
        let lastAttributeEnd = (element.attributes.map(\.range.upperBound).max() ?? 0) + shift
        // `<img src="a"/>`: insert before the slash; but in `<img src=a/>` the slash belongs to the value.
        if file.bytes[insertion - 1] == UInt8(ascii: "/"), lastAttributeEnd <= insertion - 1 {
            insertion -= 1
        }
        return ImageElement(tagRange: tag, insertionOffset: insertion,
                            attributeNames: Set(element.attributes.map(\.name)),
                            sizes: element.attribute("sizes")?.value,
                            inPicture: element.parentTag == "picture",
                            widthsOverride: element.attribute("data-imgbake-widths")?.value,
                            formatsOverride: element.attribute("data-imgbake-formats")?.value)
    }
}

extension UInt8 {
    /// ASCII white space as HTML defines it.
    var isHTMLSpace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0C || self == 0x0D }
}
