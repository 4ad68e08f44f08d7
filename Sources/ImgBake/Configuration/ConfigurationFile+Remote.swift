/// The remote cache's keys of `[cache]`: `remote`, then `remote_*` refining it.
enum RemoteKeys {
    static let all = ["remote_write", "remote_endpoint", "remote_region", "remote_path_style", "remote_timeout"]
    /// Meaningful for an S3 remote only.
    static let s3Only: Set<String> = ["remote_endpoint", "remote_region", "remote_path_style"]
}

extension Reader {
    func remoteSettings(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> RemoteSettings {
        switch RemoteLocation.parse(try string(key, node)) {
        case .success(let location): return RemoteSettings(location: location)
        case .failure(let error): throw fail(key, node, error.description)
        }
    }

    func applyRemote(_ key: String, _ node: TOMLNode, to cache: inout CacheSettings) throws(ConfigurationError) {
        let name = "cache." + key
        guard var remote = cache.remote else { throw fail(name, node, "needs cache.remote (s3://bucket/prefix or an http(s) URL)") }
        if RemoteKeys.s3Only.contains(key), case .http = remote.location {
            throw fail(name, node, "only for an s3:// remote; cache.remote is \(remote.location)")
        }
        switch key {
        case "remote_write": remote.write = try bool(name, node)
        case "remote_endpoint":
            let endpoint = try string(name, node)
            guard let url = RemoteURL.resolve(endpoint), url.userinfo == nil, url.path == "/" || url.path.isEmpty, url.query == nil,
                  endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") else {
                throw fail(name, node, "expected http(s)://host[:port] of an S3-compatible server, not \"\(endpoint)\"")
            }
            remote.endpoint = url.scheme + "://" + url.host + (url.port.map { ":\($0)" } ?? "")
        case "remote_region":
            let region = try string(name, node)
            guard !region.isEmpty, region.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
                throw fail(name, node, "\"\(region)\" is not a region name such as \"eu-west-1\"")
            }
            remote.region = region
        case "remote_path_style": remote.pathStyle = try bool(name, node)
        case "remote_timeout":
            remote.timeout = try duration(name, node)
            guard remote.timeout >= .seconds(1) else { throw fail(name, node, "must be at least 1s") }
        default: throw unknown(name, node, known: RemoteKeys.all)
        }
        cache.remote = remote
    }
}
