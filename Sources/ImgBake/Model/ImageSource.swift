/// Where an image comes from: a remote URL, or a file of the site. Both go through the same manager,
/// cache and transformer; only the first step differs (a download, or a read of the file).
public enum ImageSource: Sendable, Hashable, Comparable, CustomStringConvertible {
    case remote(RemoteURL)
    /// A file of the site: its path relative to the site folder, `/`-separated, without `.` or `..`.
    case local(String)

    /// As messages and reports show it: the URL, or the site path with a leading `/`.
    public var description: String {
        switch self {
        case .remote(let url): url.description
        case .local(let path): "/" + path
        }
    }

    /// The last path segment, percent-decoded (the basis of output file names).
    public var lastPathSegment: String {
        switch self {
        case .remote(let url): url.lastPathSegment
        case .local(let path): String(path.split(separator: "/").last ?? "")
        }
    }

    public var remoteURL: RemoteURL? {
        if case .remote(let url) = self { return url }
        return nil
    }

    /// How the cache index and output records store it: the URL, or `file:` and the site path.
    public var serialized: String {
        switch self {
        case .remote(let url): url.string
        case .local(let path): "file:" + path
        }
    }

    public init?(serialized text: String) {
        if text.hasPrefix("file:") {
            self = .local(String(text.dropFirst(5)))
        } else if let url = RemoteURL.resolve(text) {
            self = .remote(url)
        } else {
            return nil
        }
    }

    public static func < (a: ImageSource, b: ImageSource) -> Bool { a.serialized < b.serialized }
}
