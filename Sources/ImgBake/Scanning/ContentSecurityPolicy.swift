/// What a page's Content-Security-Policy says about images written as `data:` URIs: allowed unless
/// `img-src` (or, without it, `default-src`) is given and does not list `data:`.
enum ContentSecurityPolicy {
    static func allowsDataImages(_ policy: String) -> Bool {
        let directives = self.directives(policy)
        guard let sources = directives["img-src"] ?? directives["default-src"] else { return true }
        return sources.contains("data:")
    }

    /// Whether `style` attributes apply: `style-src-attr` (else `style-src`, else `default-src`) absent,
    /// or with `'unsafe-inline'` and no nonce or hash (which make browsers ignore it).
    static func allowsStyleAttributes(_ policy: String) -> Bool {
        let directives = self.directives(policy)
        guard let sources = directives["style-src-attr"] ?? directives["style-src"] ?? directives["default-src"] else { return true }
        let pinned = sources.contains { $0.hasPrefix("'nonce-") || $0.hasPrefix("'sha") }
        return sources.contains("'unsafe-inline'") && !pinned
    }

    private static func directives(_ policy: String) -> [String: [String]] {
        var directives: [String: [String]] = [:]
        for directive in policy.split(separator: ";") {
            let words = directive.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
            guard let name = words.first, directives[name] == nil else { continue } // the first of a name counts
            directives[name] = Array(words.dropFirst())
        }
        return directives
    }
}
