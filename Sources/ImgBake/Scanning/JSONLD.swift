/// Where JSON-LD structured data (schema.org) names images: `image`, `logo` and `thumbnailUrl`, at any
/// depth (an article's author, its publisher's logo, a `@graph`), each a URL, a list, or an
/// `ImageObject` whose `url` or `contentUrl` is the image.
enum JSONLD {
    static let imageKeys: Set<String> = ["image", "logo", "thumbnailUrl"]
    static let objectURLKeys = ["url", "contentUrl"]

    /// Each image URL with the raw range of its string's contents.
    static func images(in tree: JSONTree, into found: inout [(String, Range<Int>)]) {
        switch tree {
        case .object(let members):
            for (key, value) in members {
                if imageKeys.contains(key) { urls(of: value, into: &found) }
                images(in: value, into: &found)
            }
        case .array(let items):
            for item in items { images(in: item, into: &found) }
        case .string, .other:
            break
        }
    }

    private static func urls(of value: JSONTree, into found: inout [(String, Range<Int>)]) {
        switch value {
        case .string(let decoded, let contents): found.append((decoded.string, contents))
        case .array(let items): for item in items { urls(of: item, into: &found) }
        case .object:
            for key in objectURLKeys {
                if case .string(let decoded, let contents)? = value[key] { found.append((decoded.string, contents)) }
            }
        case .other: break
        }
    }
}
