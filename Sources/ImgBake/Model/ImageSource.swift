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

    /// A file-name-safe stem from the URL's last path segment: lower-case letters, digits and dashes,
    /// at most 40 characters, `image` when nothing is left.
    public var fileStem: String {
        var name = lastPathSegment
        if let dot = name.lastIndex(of: "."), dot > name.startIndex { name = String(name[..<dot]) }
        // On the bytes: only ASCII letters and digits are kept, and a run of anything else (a
        // multi-byte character too) becomes one dash. Looking up Unicode properties per character
        // would cost a warm build, which names every file it refers to, more than the rest of this.
        var out: [UInt8] = []
        var lastWasDash = true
        for byte in name.lowercased().utf8 {
            if (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) {
                out.append(byte)
                lastWasDash = false
            } else if !lastWasDash {
                out.append(UInt8(ascii: "-"))
                lastWasDash = true
            }
        }
        while out.last == UInt8(ascii: "-") { out.removeLast() }
        if out.count > 40 { out.removeLast(out.count - 40) }
        if out.last == UInt8(ascii: "-") { out.removeLast() }
        return out.isEmpty ? "image" : String(decoding: out, as: UTF8.self)
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
