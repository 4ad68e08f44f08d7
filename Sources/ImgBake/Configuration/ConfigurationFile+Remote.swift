/// `cache.remote`; the `remote_*` keys that refine it are in `ConfigurationKey.all`.
extension Reader {
    func remoteSettings(_ key: String, _ node: TOMLNode) throws(ConfigurationError) -> RemoteSettings {
        switch RemoteLocation.parse(try string(key, node)) {
        case .success(let location): return RemoteSettings(location: location)
        case .failure(let error): throw fail(key, node, error.description)
        }
    }
}
