/// What a page's Content-Security-Policy says about images written as `data:` URIs: allowed unless
/// `img-src` (or, without it, `default-src`) is given and does not list `data:`.
enum ContentSecurityPolicy {
    static func allowsDataImages(_ policy: String) -> Bool {
        var directives: [String: [String]] = [:]
        for directive in policy.split(separator: ";") {
            let words = directive.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
            guard let name = words.first, directives[name] == nil else { continue } // the first of a name counts
            directives[name] = Array(words.dropFirst())
        }
        guard let sources = directives["img-src"] ?? directives["default-src"] else { return true }
        return sources.contains("data:")
    }
}
