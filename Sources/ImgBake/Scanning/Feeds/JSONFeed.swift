/// JSON Feed (https://jsonfeed.org/version/1.1): the feed's and its items' `image` and `banner_image`,
/// and `<img>` in items' `content_html` (relative to the item's `url`, as readers resolve them).
extension FeedReferences {
    static let jsonFeedVersion = "https://jsonfeed.org/version/1"
    static let jsonImageKeys = ["image", "banner_image"]

    mutating func jsonFeed() {
        guard let tree = JSONTree.parse(file.bytes), tree["version"]?.string?.hasPrefix(Self.jsonFeedVersion) == true else { return }
        jsonImages(of: tree)
        guard case .array(let items)? = tree["items"] else { return }
        for item in items {
            jsonImages(of: item)
            if case .string(let decoded, let contents)? = item["content_html"] {
                embeddedImages(decoded, at: contents.lowerBound, base: item["url"]?.string) { .htmlInJSON(quote: $0) }
            }
        }
    }

    private mutating func jsonImages(of object: JSONTree) {
        for key in Self.jsonImageKeys {
            if case .string(let decoded, let contents)? = object[key] { add(.feed, decoded.string, range: contents, syntax: .json) }
        }
    }
}
