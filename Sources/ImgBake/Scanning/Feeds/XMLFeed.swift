/// RSS 2.0 and Atom: images in attributes (enclosures, Media RSS), the channel's `<image><url>`, and
/// `<img>` in escaped or CDATA HTML content. A relative URL in an item's content resolves as feed
/// readers resolve it: against the `xml:base` in scope, else the item's own link (the page it came
/// from), else the feed's folder.
extension FeedReferences {
    /// Elements whose text is HTML (Atom's only with `type="html"`).
    static let rssHTML: Set<String> = ["content:encoded", "description"]
    static let atomHTML: Set<String> = ["content", "summary"]

    mutating func xmlFeed() {
        guard let tokens = XMLTokens.tokenize(file.bytes) else {
            if looksLikeFeed() {
                diagnostics.append(Diagnostic(.warning, "feed not read: it is not well-formed XML; left as it is",
                                              at: file.location(ofByte: 0)))
            }
            return
        }
        var root: String?
        // Each open element: its name, whether its text is HTML, and the `xml:base` in scope inside it.
        var open: [(name: String, html: Bool, base: String?)] = []
        var itemLink: String?
        for (index, token) in tokens.enumerated() {
            switch token.kind {
            case .start(let name, let attributes, let selfClosing):
                if root == nil { root = name }
                guard root == "rss" || root == "feed" else { return }
                let values = attributeValues(attributes)
                attributeImage(name, values, atom: root == "feed")
                let html = root == "feed" ? Self.atomHTML.contains(name) && values["type"]?.value == "html" : Self.rssHTML.contains(name)
                let base = Self.base(values["xml:base"]?.value, within: open.last?.base)
                if name == "item" || name == "entry" { itemLink = link(of: tokens, item: index, atom: root == "feed", base: base) }
                if !selfClosing { open.append((name, html, base)) }
            case .end(let name):
                if !open.isEmpty { open.removeLast() }
                if name == "item" || name == "entry" { itemLink = nil }
            case .text, .cdata:
                if let element = open.last {
                    content(token, of: (element.name, element.html), in: open.dropLast().last?.name, base: element.base ?? itemLink)
                }
            }
        }
    }

    /// `xml:base` resolved against the one around it (a relative one within nothing stays relative:
    /// it is a path of the site).
    private static func base(_ value: String?, within outer: String?) -> String? {
        guard let value else { return outer }
        guard let outer, let outerURL = RemoteURL.resolve(outer) else { return value }
        return RemoteURL.resolve(value, against: outerURL)?.string ?? value
    }

    /// The link of the item or entry starting at token `start`: RSS `<link>` text, Atom's
    /// `<link rel="alternate" href>` (or without `rel`), resolved against `base`.
    private func link(of tokens: [XMLToken], item start: Int, atom: Bool, base: String?) -> String? {
        var depth = 0
        for index in start..<tokens.count {
            switch tokens[index].kind {
            case .start(let name, let attributes, let selfClosing):
                if !selfClosing { depth += 1 }
                guard depth <= 2 || selfClosing, name == "link" else { continue }
                if atom {
                    let values = attributeValues(attributes)
                    if let href = values["href"]?.value, (values["rel"]?.value ?? "alternate") == "alternate" { return Self.base(href, within: base) }
                } else if index + 1 < tokens.count, case .text = tokens[index + 1].kind {
                    let text = HTMLEntities.decodeAttribute(file.bytes[tokens[index + 1].range]).string.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !text.isEmpty { return Self.base(text, within: base) }
                }
            case .end:
                depth -= 1
                if depth <= 0 { return nil }
            case .text, .cdata:
                continue
            }
        }
        return nil
    }

    /// Text or CDATA: HTML whose `<img>` are images, or the URL of the channel's `<image>`.
    private mutating func content(_ token: XMLToken, of element: (name: String, html: Bool), in parent: String?, base: String?) {
        let raw = file.bytes[token.range]
        let cdata = if case .cdata = token.kind { true } else { false }
        if element.html {
            // CDATA holds the HTML as it is; text holds it escaped once more.
            let decoded = cdata ? HTMLEntities.Decoded(bytes: Array(raw), sources: Array(0...raw.count)) : HTMLEntities.decodeAttribute(raw)
            embeddedImages(decoded, at: token.range.lowerBound, base: base) { cdata ? .attribute(quote: $0) : .escapedHTML(quote: $0) }
        } else if element.name == "url", parent == "image", !cdata {
            imageURL(HTMLEntities.decodeAttribute(raw), at: token.range.lowerBound)
        }
    }

    private func looksLikeFeed() -> Bool {
        let head = String(decoding: file.bytes.prefix(512), as: UTF8.self)
        return head.contains("<rss") || head.contains("<feed")
    }

    private func attributeValues(_ attributes: [XMLAttribute]) -> [String: (value: String, attribute: XMLAttribute)] {
        var values: [String: (value: String, attribute: XMLAttribute)] = [:]
        for attribute in attributes where values[attribute.name] == nil {
            values[attribute.name] = (HTMLEntities.decodeAttribute(file.bytes[attribute.valueRange]).string, attribute)
        }
        return values
    }

    /// `<enclosure url type="image/…">`, `<media:content url>` (an image by `medium` or `type`),
    /// `<media:thumbnail url>`, Atom `<link rel="enclosure" type="image/…" href>`.
    private mutating func attributeImage(_ name: String, _ values: [String: (value: String, attribute: XMLAttribute)], atom: Bool) {
        let isImageType = values["type"]?.value.lowercased().hasPrefix("image/") == true
        let urlAttribute: String?
        switch name {
        case "enclosure" where isImageType: urlAttribute = "url"
        case "media:content" where isImageType || values["medium"]?.value == "image": urlAttribute = "url"
        case "media:thumbnail": urlAttribute = "url"
        case "link" where atom && isImageType && values["rel"]?.value == "enclosure": urlAttribute = "href"
        default: urlAttribute = nil
        }
        guard let urlAttribute, let (value, attribute) = values[urlAttribute] else { return }
        add(.feed, value, range: attribute.valueRange, syntax: .xml(quote: attribute.quote))
    }

    /// The text of `<image><url>`, without the white space around it.
    private mutating func imageURL(_ decoded: HTMLEntities.Decoded, at start: Int) {
        guard let first = decoded.bytes.firstIndex(where: { !$0.isHTMLSpace }),
              let last = decoded.bytes.lastIndex(where: { !$0.isHTMLSpace }) else { return }
        let raw = decoded.rawRange(of: first..<last + 1)
        add(.feed, String(decoding: decoded.bytes[first...last], as: UTF8.self),
            range: start + raw.lowerBound..<start + raw.upperBound, syntax: .xml(quote: nil))
    }
}
