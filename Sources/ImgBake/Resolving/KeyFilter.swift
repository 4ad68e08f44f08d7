/// SDWebImage's cache-key filter, declarative: the original key is the URL with configured query
/// parameters removed (`utm_*`, `fbclid`, `gclid` by default), and per-host rules that keep only some
/// parameters or ignore the query. URLs that differ only in removed parameters are one download.
public struct KeyFilter: Sendable {
    public var stripQuery: [String]
    public var hostRules: [String: HostKeyRule]

    public init(stripQuery: [String], hostRules: [String: HostKeyRule]) {
        self.stripQuery = stripQuery
        self.hostRules = Dictionary(hostRules.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    public func key(for url: RemoteURL) -> OriginalKey {
        OriginalKey(filtered(url).string)
    }

    public func filtered(_ url: RemoteURL) -> RemoteURL {
        guard let query = url.query else { return url }
        let rule = hostRules[url.host]
        if rule == .ignoreQuery { return url.replacing(query: nil) }
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { parameter in
            let name = String(parameter.prefix { $0 != "=" }).removingPercentEncoding()
            if case .keepOnly(let names)? = rule { return names.contains(name) }
            return !stripQuery.contains { Glob.matches($0, name) }
        }
        return url.replacing(query: kept.isEmpty ? nil : kept.joined(separator: "&"))
    }
}

/// `*` (any run) and `?` (any one character) globs.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern), t = Array(text)
        var pi = 0, ti = 0, star = -1, mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] == "?" || p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
