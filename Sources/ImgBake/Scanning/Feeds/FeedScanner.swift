/// Finds the images of the site's feeds: JSON Feed (`image`, `banner_image`, the same of each item, and
/// `<img>` in items' `content_html`), RSS and Atom (`<enclosure type="image/…">`, `<media:content>`,
/// `<media:thumbnail>`, the channel's `<image><url>`, Atom `<link rel=enclosure type="image/…">`, and
/// `<img>` in the escaped HTML of `content:encoded`, `description` and Atom `content`/`summary`
/// `type="html"`). Feed readers fetch images from anywhere, so every reference is written as an
/// absolute URL. A `.json` or `.xml` file that is not a feed has no references.
public enum FeedScanner {
    public static func scan(_ file: SourceFile, settings: ScanSettings = ScanSettings()) -> PageScan {
        var found = FeedReferences(file: file, settings: settings)
        let first = file.bytes.first { !$0.isHTMLSpace && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }
        if first == UInt8(ascii: "{") { found.jsonFeed() } else if first == UInt8(ascii: "<") { found.xmlFeed() }
        var scan = PageScan(file: file, references: found.references, diagnostics: found.diagnostics)
        scan.outputs = found.outputs
        scan.references.sort { $0.range.lowerBound < $1.range.lowerBound }
        return scan
    }
}

/// What scanning one feed collects.
struct FeedReferences {
    let file: SourceFile
    let settings: ScanSettings
    let resolver: ReferenceResolver
    var references: [ImageReference] = []
    var diagnostics: [Diagnostic] = []
    var outputs: [OutputUse] = []

    init(file: SourceFile, settings: ScanSettings) {
        self.file = file
        self.settings = settings
        resolver = ReferenceResolver(settings: settings, pagePath: file.path)
    }

    /// A URL written at `range` (decoded: `written`).
    mutating func add(_ kind: ImageReference.Kind, _ written: String, range: Range<Int>, syntax: ImageReference.Syntax) {
        let location = file.location(ofByte: range.lowerBound)
        guard let source = resolver.image(written, at: location, diagnostics: &diagnostics, outputs: &outputs) else { return }
        references.append(ImageReference(kind: kind, source: source, location: location, range: range, syntax: syntax, absolute: true))
    }

    /// `<img src>`, its `srcset` and a `<picture>`'s `<source srcset>` candidates in HTML that the feed
    /// carries escaped (a generator's resized copies in a `srcset` are images too): found in the decoded HTML, replaced in the raw
    /// bytes (`decoded.sources` are offsets from `start`), written with `syntax` for the attribute's quote.
    /// `base`: what relative URLs in it resolve against (the item's link), if not the feed's folder.
    mutating func embeddedImages(_ decoded: HTMLEntities.Decoded, at start: Int, base: String? = nil, syntax: (UInt8?) -> ImageReference.Syntax) {
        // Escaped HTML escapes the page-level nesting check; gumbo would take minutes on deep nesting.
        guard NestingDepth.estimate(decoded.bytes) <= NestingDepth.limit else {
            diagnostics.append(Diagnostic(.warning, "HTML content nested more than \(NestingDepth.limit) deep; its images are left as they are",
                                          at: file.location(ofByte: start)))
            return
        }
        var quiet = settings
        quiet.missingAlt = nil
        let html = SourceFile(path: file.path, kind: .html, bytes: decoded.bytes)
        let found = HTMLScanner.references(in: html, region: 0..<html.bytes.count, honourBase: false, base: base, settings: quiet)
        for reference in found.references where [.imgSrc, .imgSrcset, .sourceSrcset].contains(reference.kind) {
            guard case .attribute(let quote) = reference.syntax else { continue }
            let raw = decoded.rawRange(of: reference.range)
            let range = start + raw.lowerBound..<start + raw.upperBound
            references.append(ImageReference(kind: .feedHTML, source: reference.source, location: file.location(ofByte: range.lowerBound),
                                             range: range, syntax: syntax(quote), absolute: true))
        }
        diagnostics += found.diagnostics.map { Diagnostic($0.severity, $0.message, at: file.location(ofByte: start)) }
        outputs += found.outputs.map { OutputUse(name: $0.name, location: file.location(ofByte: start)) }
    }
}
