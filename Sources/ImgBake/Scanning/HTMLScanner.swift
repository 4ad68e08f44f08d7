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
        scan.remoteBase = found.remoteBase
        return scan
    }

    /// References in `region` of `file` (a whole page, or a raw HTML block inside Markdown, where
    /// `<base>` has no meaning).
    static func references(in file: SourceFile, region: Range<Int>, honourBase: Bool)
        -> (references: [ImageReference], remoteBase: (url: RemoteURL, location: SourceLocation)?) {
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
        for element in elements where element.attribute("data-imgbake")?.value.lowercased() != "skip" {
            switch element.tag {
            case "img":
                if let src = element.attribute("src"),
                   var reference = attributeReference(.imgSrc, src, file: file, shift: shift, base: base) {
                    reference.element = imageElement(element, file: file, shift: shift)
                    references.append(reference)
                }
                if let srcset = element.attribute("srcset") {
                    references += srcsetReferences(.imgSrcset, srcset, file: file, shift: shift, base: base)
                }
            case "source" where element.parentTag == "picture":
                if let srcset = element.attribute("srcset") {
                    references += srcsetReferences(.sourceSrcset, srcset, file: file, shift: shift, base: base)
                }
            default:
                break
            }
        }
        return (references, remoteBase)
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
        return ImageReference(kind: kind, url: url, location: file.location(ofByte: shifted.lowerBound),
                              range: shifted, syntax: .attribute(quote: attribute.quote))
    }

    private static func srcsetReferences(_ kind: ImageReference.Kind, _ attribute: HTMLAttribute,
                                         file: SourceFile, shift: Int, base: RemoteURL?) -> [ImageReference] {
        let valueStart = attribute.valueRange.lowerBound + shift
        let raw = SrcsetParser.parse(file.bytes[valueStart..<attribute.valueRange.upperBound + shift])
        let decoded = SrcsetParser.parse(Array(attribute.value.utf8))
        // Raw bytes can be spliced candidate by candidate when they decode to what the parser saw.
        let exact = raw.count == decoded.count && zip(raw, decoded).allSatisfy { HTMLEntities.decode($0.url) == $1.url }
        var references: [ImageReference] = []
        for (index, candidate) in decoded.enumerated() {
            guard let url = RemoteURL.resolve(candidate.url, against: base) else { continue }
            if exact {
                let range = valueStart + raw[index].urlRange.lowerBound..<valueStart + raw[index].urlRange.upperBound
                references.append(ImageReference(kind: kind, url: url, location: file.location(ofByte: range.lowerBound),
                                                 range: range, syntax: .attribute(quote: attribute.quote)))
            } else {
                let range = valueStart..<attribute.valueRange.upperBound + shift
                references.append(ImageReference(kind: kind, url: url, location: file.location(ofByte: valueStart), range: range,
                                                 syntax: .srcsetValue(quote: attribute.quote, candidates: decoded, index: index)))
            }
        }
        return references
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
