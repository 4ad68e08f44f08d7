import Foundation
import Gumbo

/// Finds image references in HTML, each with the exact bytes of its URL: `<img src>` and `srcset`,
/// `<picture><source srcset>`, `<video poster>`, `<input type=image>`, SVG `<image href>`, icons and
/// preloaded images (`<link>`), social cards (`<meta property=og:image>`, `twitter:image`), the
/// images of JSON-LD structured data, a link around an image to the same image, and CSS
/// `url()`/`image-set()` in `style` attributes and `<style>` elements. Relative URLs resolve against
/// the page and its `<base href>`. The HTML5 tree builder decides what is markup, so image tags inside
/// `<script>`, comments, `<textarea>` or text are never touched. `data-imgbake="skip"` opts an element
/// out.
public enum HTMLScanner {
    /// Scans a whole page.
    public static func scan(_ file: SourceFile, settings: ScanSettings = ScanSettings()) -> PageScan {
        var scan = PageScan(file: file, references: [], diagnostics: [])
        let found = references(in: file, region: 0..<file.bytes.count, honourBase: true, settings: settings)
        scan.references = found.references
        scan.diagnostics = found.diagnostics
        scan.outputs = found.outputs
        scan.remoteBase = found.remoteBase
        scan.headEnd = found.headEnd
        scan.allowsDataImages = found.allowsDataImages
        scan.links = found.links
        scan.styles = found.styles
        return scan
    }

    static let tags: Set<String> = ["img", "source", "base", "video", "input", "link", "meta", "style", "script", "head", "svg:image", "a"]

    public static let missingAltMessage = "<img> without alt: screen readers read its file name instead (alt=\"\" for decoration; build.require_alt)"

    /// References in `region` of `file` (a whole page, or a raw HTML block inside Markdown, where
    /// `<base>` has no meaning). `base`: what relative URLs resolve against instead of the file's folder
    /// (a feed item's link, for the HTML the item carries).
    static func references(in file: SourceFile, region: Range<Int>, honourBase: Bool, base: String? = nil,
                           settings: ScanSettings = ScanSettings()) -> RegionScan {
        // A whole page gets its element tree too, for how it lays out (`PageLayout`); a fragment (HTML in
        // Markdown, a feed item's) has no layout of its own.
        let wholePage = honourBase && region == 0..<file.bytes.count
        let (elements, tree) = file.bytes[region].withUnsafeBytes { bytes -> ([HTMLElement], HTMLTree?) in
            guard wholePage else { return (HTMLParser.elements(in: bytes, tags: tags, attributes: ["style"], textOf: ["style", "script"]), nil) }
            let document = HTMLParser.document(in: bytes, tags: tags, attributes: ["style"], textOf: ["style", "script"])
            return (document.elements, document.tree)
        }
        var found = Found(file: file, shift: region.lowerBound,
                          resolver: ReferenceResolver(settings: settings, pagePath: file.path))
        found.styles = tree.map(PageStyleInputs.init(tree:))
        if let base { found.applyBase(base, at: region.lowerBound) }
        // The first <base href> applies to the whole document, also to URLs written before it.
        if honourBase, let href = elements.first(where: { $0.tag == "base" && $0.attribute("href") != nil })?.attribute("href") {
            found.applyBase(href.value, at: href.valueRange.lowerBound + region.lowerBound)
        }
        for element in elements where element.attribute("data-imgbake")?.value.lowercased() != "skip" {
            found.add(element, missingAlt: settings.missingAlt)
        }
        // In document order: a link around an image is found after the image.
        return RegionScan(references: found.references.sorted { $0.range.lowerBound < $1.range.lowerBound }, diagnostics: found.diagnostics,
                        outputs: found.outputs, remoteBase: found.remoteBase, headEnd: found.headEnd, allowsDataImages: found.allowsDataImages,
                        links: found.ownLinks, styles: found.styles)
    }

    /// What scanning a region of HTML found.
    struct RegionScan {
        var references: [ImageReference]
        var diagnostics: [Diagnostic]
        var outputs: [OutputUse]
        var remoteBase: (url: RemoteURL, location: SourceLocation)?
        var headEnd: Int?
        var allowsDataImages: Bool
        var links: PageLinks
        var styles: PageStyleInputs?
    }
}

/// What one scan collects, element by element.
private struct Found {
    let file: SourceFile
    let shift: Int
    var resolver: ReferenceResolver
    var references: [ImageReference] = []
    var diagnostics: [Diagnostic] = []
    var outputs: [OutputUse] = []
    var remoteBase: (url: RemoteURL, location: SourceLocation)?
    /// Links around images already taken (one link may hold several images of it).
    var links: Set<Int> = []
    var headEnd: Int?
    var allowsDataImages = true
    var ownLinks = PageLinks()
    /// A whole page's: its tree, stylesheets and scripts as they come.
    var styles: PageStyleInputs?

    init(file: SourceFile, shift: Int, resolver: ReferenceResolver) {
        self.file = file
        self.shift = shift
        self.resolver = resolver
    }

    /// A remote `<base href>` makes relative references remote (unless it is the site's own URL); a
    /// local one is where relative local references start.
    mutating func applyBase(_ href: String, at offset: Int) {
        // What a file named `x` in the base's folder would be: remote, or a path in the site.
        let probe = href.hasSuffix("/") ? href + "x" : href
        switch resolver.resolve(probe) {
        case .image(.remote):
            guard let url = RemoteURL.resolve(href, against: resolver.base) else { return }
            resolver.base = url
            remoteBase = (url, file.location(ofByte: offset))
        case .image(.local(let path)):
            resolver.localBase = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : ""
        default:
            break
        }
    }

    mutating func add(_ element: HTMLElement, missingAlt: Diagnostic.Severity?) {
        switch (element.namespace, element.tag) {
        case ("html", "img"):
            if let src = element.attribute("src"), var reference = attribute(.imgSrc, src) {
                reference.element = imageElement(element)
                reference.placement = placement(of: element, naming: src.value)
                references.append(reference)
                if let link = element.enclosingLink { imageLink(link, to: reference.source) }
            }
            if let srcset = element.attribute("srcset") { self.srcset(.imgSrcset, srcset) }
            if let missingAlt, element.attribute("alt") == nil {
                diagnostics.append(Diagnostic(missingAlt, HTMLScanner.missingAltMessage,
                                              at: file.location(ofByte: element.tagRange.lowerBound + shift), code: .missingAlt))
            }
        case ("html", "source") where element.parentTag == "picture":
            if let srcset = element.attribute("srcset") { self.srcset(.sourceSrcset, srcset) }
        case ("html", "video"):
            if let poster = element.attribute("poster"), let reference = attribute(.videoPoster, poster) { references.append(reference) }
        case ("html", "input") where element.attribute("type")?.value.lowercased() == "image":
            if let src = element.attribute("src"), let reference = attribute(.inputImage, src) { references.append(reference) }
        case ("svg", "image"):
            if let href = element.attribute("href") ?? element.attribute("xlink:href"), let reference = attribute(.svgImage, href) {
                references.append(reference)
            }
        case ("html", "link"):
            link(element)
        case ("html", "meta"):
            meta(element)
            if element.attribute("http-equiv")?.value.lowercased() == "content-security-policy",
               let policy = element.attribute("content")?.value {
                if !ContentSecurityPolicy.allowsDataImages(policy) { allowsDataImages = false }
                if !ContentSecurityPolicy.allowsStyleAttributes(policy) { styles?.forbidsStyleAttributes = true }
            }
        case ("html", "head"):
            headEnd = element.endTagRange.map { $0.lowerBound + shift }
        case ("html", "style"):
            if let text = element.textRange {
                css(file.bytes[text.lowerBound + shift..<text.upperBound + shift], at: text.lowerBound + shift)
                let type = element.attribute("type")?.value.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
                if type.isEmpty || type == "text/css" {
                    styles?.stylesheets.append(.inline(String(decoding: file.bytes[text.lowerBound + shift..<text.upperBound + shift], as: UTF8.self),
                                                       media: element.attribute("media")?.value))
                }
            }
        case ("html", "a"):
            ownLink(element.attribute("href"))
        case ("html", "base") where element.attribute("href") != nil:
            ownLinks.hasBase = true
        case ("html", "script"):
            ownLink(element.attribute("src"))
            let type = element.attribute("type")?.value.trimmingCharacters(in: .whitespaces).lowercased()
            if type == "application/ld+json", let text = element.textRange { jsonLD(text.lowerBound + shift..<text.upperBound + shift) }
            if Self.runs(type) { script(element) }
        default:
            break
        }
        if let style = element.attribute("style") { styleAttribute(style, of: element) }
    }

    /// Where on the page an element is, and whether it looks like a logo or an icon.
    private func placement(of element: HTMLElement, naming source: String? = nil) -> Placement {
        let inContent = element.landmarks.contains { $0 == "main" || $0 == "article" }
        // Navigation, footers and sidebars, also inside main (MkDocs-material's sidebars are); a header
        // is not the frame: a hero image is often in the page's header (Hugo's ananke).
        let inFrame = element.landmarks.contains { ["nav", "footer", "aside"].contains($0) }
        let names = [element.attribute("class")?.value, element.attribute("id")?.value, element.attribute("alt")?.value,
                     source.map { String($0.split(separator: "/").last ?? "") }]
        let decorative = names.compactMap { $0?.lowercased() }.contains { name in
            ["logo", "icon", "avatar", "emoji", "badge", "sprite", "favicon"].contains { name.contains($0) }
        }
        let lcp: Bool? = switch element.attribute("data-imgbake-lcp")?.value.lowercased() {
        case "true", "": true
        case "false": false
        default: nil
        }
        return Placement(inContent: inContent, inFrame: inFrame, depth: element.tagRange.lowerBound - (element.contentStart ?? 0),
                         measuredFromContent: inContent, looksDecorative: decorative, lcp: lcp)
    }

    /// A `<script>` type a browser runs: none, a JavaScript MIME type, `module`.
    static func runs(_ type: String?) -> Bool {
        guard let type, !type.isEmpty else { return true }
        let essence = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? type
        return essence == "module" || essence.hasSuffix("javascript") || essence.hasSuffix("ecmascript") || essence == "text/jscript"
            || essence == "text/livescript"
    }

    /// A script the page runs, for what it may do to images (`PageLayout`).
    private mutating func script(_ element: HTMLElement) {
        if let src = element.attribute("src") {
            switch resolver.asset(src.value) {
            case .site(let path)?: styles?.scripts.append(.file(path))
            case .elsewhere?: styles?.scripts.append(.elsewhere(src.value))
            case nil: break
            }
        } else if let text = element.textRange {
            styles?.scripts.append(.inline(String(decoding: file.bytes[text.lowerBound + shift..<text.upperBound + shift], as: UTF8.self)))
        }
    }

    /// `<link rel=icon|apple-touch-icon>`, `<link rel=preload as=image href imagesrcset>`, and a
    /// stylesheet the page applies.
    private mutating func link(_ element: HTMLElement) {
        let rel = Set((element.attribute("rel")?.value.lowercased() ?? "").split(whereSeparator: \.isWhitespace).map(String.init))
        if rel.contains("stylesheet"), !rel.contains("alternate"), element.attribute("disabled") == nil, let href = element.attribute("href") {
            switch resolver.asset(href.value) {
            case .site(let path)?: styles?.stylesheets.append(.file(path, media: element.attribute("media")?.value))
            case .elsewhere?: styles?.stylesheets.append(.elsewhere(href.value, media: element.attribute("media")?.value))
            case nil: break
            }
        }
        let icon = !rel.isDisjoint(with: ["icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon"])
        let preload = rel.contains("preload") && element.attribute("as")?.value.lowercased() == "image"
        guard icon || preload else { return ownLink(element.attribute("href")) }
        // An .ico favicon (MkDocs' default theme has one) holds several sizes for the browser to choose
        // from, in a container imgbake does not decode: left as it is, not reported.
        if icon, let href = element.attribute("href"), Self.isIconContainer(href.value) { return }
        if let href = element.attribute("href"), let reference = attribute(.link, href) { references.append(reference) }
        if preload, let srcset = element.attribute("imagesrcset") { self.srcset(.linkSrcset, srcset) }
    }

    /// `favicon.ico`, `cursor.cur`: Windows icon containers, by their extension.
    static func isIconContainer(_ url: String) -> Bool {
        let path = url.prefix { $0 != "?" && $0 != "#" }.lowercased()
        return path.hasSuffix(".ico") || path.hasSuffix(".cur")
    }

    /// A link of the page's own, counted by how it is written (`PageLinks`).
    private mutating func ownLink(_ attribute: HTMLAttribute?) {
        guard let text = attribute.map({ $0.value.trimmingCharacters(in: .whitespacesAndNewlines) }), !text.isEmpty,
              !text.hasPrefix("#"), !text.hasPrefix("//"), ReferenceResolver.scheme(of: text) == nil else { return }
        let path = text.prefix { $0 != "?" && $0 != "#" }
        if ReferenceResolver.hasImageExtension(String(path.split(separator: "/").last ?? "")) { return }
        if case .output = resolver.resolve(text) { return }
        if text.hasPrefix("/") || text.hasPrefix("\\") { ownLinks.rootRelative += 1 } else { ownLinks.pageRelative += 1 }
    }

    /// `og:image` and `twitter:image`: one absolute URL of a social-card-sized image.
    private mutating func meta(_ element: HTMLElement) {
        let names: Set<String> = ["og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"]
        let key = (element.attribute("property") ?? element.attribute("name"))?.value.lowercased() ?? ""
        guard names.contains(key), let content = element.attribute("content"), var reference = attribute(.meta, content) else { return }
        reference.target = .social
        reference.absolute = true
        references.append(reference)
    }

    /// `<a href>` around an `<img>`, when it points at the same image or at another image file (a
    /// thumbnail linking to the full picture): a viewer of the full image (Sphinx's image references,
    /// lightboxes) gets that image's widest variant (`output.image_links`), instead of staying remote.
    private mutating func imageLink(_ link: [HTMLAttribute], to image: ImageSource) {
        guard resolver.settings.imageLinks, let href = link.first(where: { $0.name == "href" }), !links.contains(href.valueRange.lowerBound),
              link.first(where: { $0.name == "data-imgbake" })?.value.lowercased() != "skip",
              case .image(let target) = resolver.resolve(href.value),
              target == image || ReferenceResolver.hasImageExtension(target.lastPathSegment),
              let reference = attribute(.imageLink, href) else { return }
        links.insert(href.valueRange.lowerBound)
        references.append(reference)
    }

    /// JSON-LD structured data (`<script type="application/ld+json">`, written by jekyll-seo-tag and
    /// many themes): the `image`, `logo` and `thumbnailUrl` of any object, as a URL, a list of them or
    /// an `ImageObject` (`url`, `contentUrl`); rewritten like a social card, every other byte kept.
    private mutating func jsonLD(_ text: Range<Int>) {
        guard let tree = JSONTree.parse(Array(file.bytes[text])) else { return }
        var strings: [(String, Range<Int>)] = []
        JSONLD.images(in: tree, into: &strings)
        var seen = Set<Int>()
        for (value, contents) in strings where seen.insert(contents.lowerBound).inserted {
            let range = text.lowerBound + contents.lowerBound..<text.lowerBound + contents.upperBound
            guard let source = resolve(value, at: range.lowerBound) else { continue }
            references.append(ImageReference(kind: .jsonLD, source: source, location: file.location(ofByte: range.lowerBound),
                                             range: range, syntax: .json, target: .social, absolute: true))
        }
    }

    private mutating func attribute(_ kind: ImageReference.Kind, _ attribute: HTMLAttribute) -> ImageReference? {
        // A value whose bytes were not found is left as it is (it would be spliced at the name's end).
        guard !attribute.valueRange.isEmpty || attribute.value.isEmpty else { return nil }
        // Replace the URL itself, not the white space a browser ignores around it.
        var range = attribute.valueRange
        while range.lowerBound < range.upperBound, file.bytes[range.lowerBound + shift].isHTMLSpace {
            range = range.lowerBound + 1..<range.upperBound
        }
        while range.lowerBound < range.upperBound, file.bytes[range.upperBound - 1 + shift].isHTMLSpace {
            range = range.lowerBound..<range.upperBound - 1
        }
        let shifted = range.lowerBound + shift..<range.upperBound + shift
        guard let source = resolve(attribute.value, at: shifted.lowerBound) else { return nil }
        return ImageReference(kind: kind, source: source, location: file.location(ofByte: shifted.lowerBound),
                              range: shifted, syntax: .attribute(quote: attribute.quote))
    }

    /// The image `written` means, with a warning where it cannot be a file of the site.
    private mutating func resolve(_ written: String, at offset: Int, imageExtensionRequired: Bool = false) -> ImageSource? {
        resolver.image(written, at: file.location(ofByte: offset), imageExtensionRequired: imageExtensionRequired,
                       diagnostics: &diagnostics, outputs: &outputs)
    }

    /// The candidates of a srcset, each with the raw bytes of its URL (character references included),
    /// so that only URLs are replaced and every other byte is kept.
    private mutating func srcset(_ kind: ImageReference.Kind, _ attribute: HTMLAttribute) {
        let valueStart = attribute.valueRange.lowerBound + shift
        let decoded = HTMLEntities.decodeAttribute(file.bytes[valueStart..<attribute.valueRange.upperBound + shift])
        guard decoded.bytes.elementsEqual(attribute.value.utf8) else {
            var images = false
            for candidate in SrcsetParser.parse(Array(attribute.value.utf8)) {
                switch resolver.resolve(candidate.url) {
                case .output(let name): outputs.append(OutputUse(name: name, location: file.location(ofByte: valueStart)))
                case .image, .problem: images = true
                case .ignored: break
                }
            }
            if images {
                diagnostics.append(Diagnostic(.warning, "srcset left as it is: it has a character reference imgbake cannot map to its bytes",
                                              at: file.location(ofByte: valueStart)))
            }
            return
        }
        for candidate in SrcsetParser.parse(decoded.bytes) {
            let raw = decoded.rawRange(of: candidate.urlRange)
            let range = valueStart + raw.lowerBound..<valueStart + raw.upperBound
            guard let source = resolve(candidate.url, at: range.lowerBound) else { continue }
            references.append(ImageReference(kind: kind, source: source, location: file.location(ofByte: range.lowerBound),
                                             range: range, syntax: .attribute(quote: attribute.quote)))
        }
    }

    /// CSS text as it is in the file (a `<style>` element).
    private mutating func css(_ bytes: ArraySlice<UInt8>, at start: Int) {
        references += CSSScanner.references(in: Array(bytes), .text(at: start), file: file) { resolve($0, at: $1, imageExtensionRequired: true) }
    }

    /// CSS in a `style` attribute: found in the decoded value, replaced in the raw bytes.
    private mutating func styleAttribute(_ attribute: HTMLAttribute, of element: HTMLElement) {
        let valueStart = attribute.valueRange.lowerBound + shift
        let decoded = HTMLEntities.decodeAttribute(file.bytes[valueStart..<attribute.valueRange.upperBound + shift])
        guard decoded.bytes.elementsEqual(attribute.value.utf8) else { return }
        var found = CSSScanner.references(in: decoded.bytes, .attribute(valueStart: valueStart, decoded: decoded, quote: attribute.quote),
                                          file: file) { resolve($0, at: $1, imageExtensionRequired: true) }
        for index in found.indices where found[index].kind == .css { found[index].placement = placement(of: element) }
        references += found
    }

    private func imageElement(_ element: HTMLElement) -> ImageElement? {
        let tag = element.tagRange.lowerBound + shift..<element.tagRange.upperBound + shift
        // A start tag cut off by the end of the file cannot take new attributes safely.
        guard tag.count >= 2, file.bytes[tag.upperBound - 1] == UInt8(ascii: ">") else { return nil }
        var insertion = tag.upperBound - 1
        let lastAttributeEnd = (element.attributes.map(\.range.upperBound).max() ?? 0) + shift
        // `<img src="a"/>`: insert before the slash; but in `<img src=a/>` the slash belongs to the value.
        if file.bytes[insertion - 1] == UInt8(ascii: "/"), lastAttributeEnd <= insertion - 1 {
            insertion -= 1
        }
        var style: ImageElement.StyleAttribute?
        if let attribute = element.attribute("style"), attribute.quote != nil {
            style = ImageElement.StyleAttribute(valueRange: attribute.valueRange.lowerBound + shift..<attribute.valueRange.upperBound + shift,
                                                value: attribute.value)
        }
        return ImageElement(tagRange: tag, insertionOffset: insertion, treeIndex: element.treeIndex, style: style,
                            attributeNames: Set(element.attributes.map(\.name)),
                            sizes: element.attribute("sizes")?.value,
                            inPicture: element.parentTag == "picture",
                            widthsOverride: element.attribute("data-imgbake-widths")?.value,
                            formatsOverride: element.attribute("data-imgbake-formats")?.value,
                            markupOverride: element.attribute("data-imgbake-markup")?.value.trimmingCharacters(in: .whitespaces).lowercased(),
                            width: element.attribute("width").flatMap { Int($0.value.trimmingCharacters(in: .whitespaces)) },
                            height: element.attribute("height").flatMap { Int($0.value.trimmingCharacters(in: .whitespaces)) },
                            styleWidth: element.attribute("style").flatMap { CSSScanner.pixels("width", in: $0.value) },
                            styleHeight: element.attribute("style").flatMap { CSSScanner.pixels("height", in: $0.value) })
    }
}

extension UInt8 {
    /// ASCII white space as HTML defines it.
    var isHTMLSpace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0C || self == 0x0D }
}
