/// RSS 2.0 and Atom: images in attributes (enclosures, Media RSS), the channel's `<image><url>`, and
/// `<img>` in escaped or CDATA HTML content.
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
        var open: [(name: String, html: Bool)] = []
        for token in tokens {
            switch token.kind {
            case .start(let name, let attributes, let selfClosing):
                if root == nil { root = name }
                guard root == "rss" || root == "feed" else { return }
                let values = attributeValues(attributes)
                attributeImage(name, values, atom: root == "feed")
                let html = root == "feed" ? Self.atomHTML.contains(name) && values["type"]?.value == "html" : Self.rssHTML.contains(name)
                if !selfClosing { open.append((name, html)) }
            case .end:
                if !open.isEmpty { open.removeLast() }
            case .text:
                let raw = file.bytes[token.range]
                if open.last?.html == true {
                    embeddedImages(HTMLEntities.decodeAttribute(raw), at: token.range.lowerBound) { .escapedHTML(quote: $0) }
                } else if open.last?.name == "url", open.dropLast().last?.name == "image" {
                    imageURL(HTMLEntities.decodeAttribute(raw), at: token.range.lowerBound)
                }
            case .cdata:
                if open.last?.html == true {
                    let raw = Array(file.bytes[token.range])
                    let decoded = HTMLEntities.Decoded(bytes: raw, sources: Array(0...raw.count))
                    embeddedImages(decoded, at: token.range.lowerBound) { .attribute(quote: $0) }
                }
            }
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
