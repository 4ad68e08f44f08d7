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
