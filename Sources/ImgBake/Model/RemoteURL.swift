import Locking
/// An absolute `http` or `https` URL, normalised the way a browser would request it: scheme and host
/// lower-cased, default port dropped, dot segments removed, unsafe characters percent-encoded, no
/// fragment. Built with `RemoteURL.resolve(_:against:)`.
public struct RemoteURL: Sendable, Hashable, Comparable, CustomStringConvertible {
    public private(set) var scheme: String
    /// `user:password` before the host, if the page wrote one (kept, never printed in messages).
    public private(set) var userinfo: String?
    /// Lower-cased host; an IPv6 literal keeps its brackets.
    public private(set) var host: String
    /// Nil for the scheme's default port.
    public private(set) var port: Int?
    /// Starts with `/`, percent-encoded.
    public private(set) var path: String
    /// Without the `?`; nil when there is none.
    public private(set) var query: String?

    public var string: String {
        var s = scheme + "://"
        if let userinfo { s += userinfo + "@" }
        s += host
        if let port { s += ":\(port)" }
        s += path
        if let query { s += "?" + query }
        return s
    }

    /// The URL without credentials, for messages and reports.
    public var description: String {
        var copy = self
        copy.userinfo = nil
        return copy.string
    }

    /// `host[:port]` as libcurl's `--connect-to` matches it.
    public var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// `scheme://host[:port]`: what fetch statistics and unreachable hosts are counted by.
    public var hostKey: String { scheme + "://" + host + (port.map { ":\($0)" } ?? "") }

    /// The last path segment, percent-decoded (the basis of output file names).
    public var lastPathSegment: String {
        let segment = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        return segment.removingPercentEncoding()
    }

    public func replacing(query newQuery: String?) -> RemoteURL {
        var copy = self
        copy.query = newQuery
        return copy
    }

    public static func < (a: RemoteURL, b: RemoteURL) -> Bool { a.string < b.string }

    /// Parses what a page wrote, resolving it against `base` (the page's remote `<base href>`, if any).
    /// Returns nil for anything that does not denote an http(s) resource: local paths without a remote
    /// base, `data:`, `mailto:`, a bare fragment, malformed authorities.
    public static func resolve(_ written: String, against base: RemoteURL? = nil) -> RemoteURL? {
        guard base == nil else { return parse(written, against: base) }
        if let known = parsed.withLock({ $0[written] }) { return known }
        let url = parse(written, against: nil)
        parsed.withLock { memo in
            if memo.count >= 4096 { memo.removeAll(keepingCapacity: true) }
            memo[written] = .some(url)
        }
        return url
    }

    /// Every URL a site writes without a base, parsed once: a few hundred images recur among a million
    /// references, and parsing a URL costs more than finding it in a page.
    private static let parsed = Locked([String: RemoteURL?]())

    private static func parse(_ written: String, against base: RemoteURL?) -> RemoteURL? {
        // Browsers strip leading/trailing C0 controls and spaces, and drop tabs and newlines anywhere.
        var text = Substring(written.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" })
        while let c = text.first, c.isASCII, c.asciiValue! <= 0x20 { text.removeFirst() }
        while let c = text.last, c.isASCII, c.asciiValue! <= 0x20 { text.removeLast() }
        guard !text.isEmpty, text.utf8.count <= 8192 else { return nil }
        // Web URLs treat backslashes as slashes before the query.
        let fixed = Self.slashesNormalised(String(text))

        if let colon = fixed.firstIndex(of: ":"), Self.isScheme(fixed[..<colon]) {
            let scheme = fixed[..<colon].lowercased()
            guard scheme == "http" || scheme == "https" else { return nil }
            let rest = fixed[fixed.index(after: colon)...]
            guard rest.hasPrefix("//") else {
                // `http:photo.jpg` is relative when the base has the same scheme.
                guard let base, base.scheme == scheme else { return nil }
                return base.resolvingRelative(String(rest))
            }
            return parseAuthorityAndRest(scheme: scheme, String(rest.dropFirst(2)))
        }
        if fixed.hasPrefix("//") {
            return parseAuthorityAndRest(scheme: base?.scheme ?? "https", String(fixed.dropFirst(2)))
        }
        return base?.resolvingRelative(fixed)
    }

    private static func isScheme(_ s: Substring) -> Bool {
        guard let first = s.first, first.isASCII, first.isLetter else { return false }
        return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    private static func slashesNormalised(_ s: String) -> String {
        guard s.contains("\\") else { return s }
        let cut = s.firstIndex { $0 == "?" || $0 == "#" } ?? s.endIndex
        return s[..<cut].replacingAll("\\", with: "/") + s[cut...]
    }

    private static func parseAuthorityAndRest(scheme: String, _ text: String) -> RemoteURL? {
        let end = text.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        var authority = Substring(text[..<end])
        var userinfo: String?
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        var host = authority
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = parsePort(after.dropFirst()) else { return nil }
                port = p
            } else if !after.isEmpty { return nil }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let p = parsePort(authority[authority.index(after: colon)...]) else { return nil }
            port = p
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "<" || $0 == ">" || $0 == "\"" }) else { return nil }
        if port == (scheme == "https" ? 443 : 80) { port = nil }
        let (path, query) = splitPathQuery(String(text[end...]))
        return RemoteURL(scheme: scheme, userinfo: userinfo, host: host.lowercased(), port: port,
                         path: removeDotSegments(path.isEmpty ? "/" : path), query: query)
    }

    /// Empty port text means the default port (`http://host:/x`).
    private static func parsePort(_ text: Substring) -> Int?? {
        if text.isEmpty { return .some(nil) }
        guard text.allSatisfy(\.isASCII), let value = Int(text), value > 0, value < 65536 else { return nil }
        return .some(value)
    }

    /// Splits `path?query#fragment`, percent-encoding what a browser would, dropping the fragment.
    private static func splitPathQuery(_ text: String) -> (String, String?) {
        let withoutFragment = text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
        guard let mark = withoutFragment.firstIndex(of: "?") else {
            return (percentEncoded(withoutFragment, keeping: pathSafe), nil)
        }
        return (percentEncoded(String(withoutFragment[..<mark]), keeping: pathSafe),
                percentEncoded(String(withoutFragment[withoutFragment.index(after: mark)...]), keeping: querySafe))
    }

    /// RFC 3986 §5.2 for a reference without scheme and authority.
    private func resolvingRelative(_ reference: String) -> RemoteURL? {
        if reference.isEmpty || reference.hasPrefix("#") { return nil } // the page itself, not an image
        var copy = self
        let (refPath, refQuery) = Self.splitPathQuery(reference)
        if refPath.isEmpty {
            copy.query = refQuery ?? query
        } else if refPath.hasPrefix("/") {
            copy.path = Self.removeDotSegments(refPath)
            copy.query = refQuery
        } else {
            let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
            copy.path = Self.removeDotSegments(directory + refPath)
            copy.query = refQuery
        }
        return copy
    }

    static func removeDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment.lowercased() {
            case ".", "%2e":
                if isLast { output.append("") }
            case "..", ".%2e", "%2e.", "%2e%2e":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }

    private static let pathSafe: Set<UInt8> = Set("!$&'()*+,-./0123456789:;=@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~|^".utf8)
    private static let querySafe: Set<UInt8> = pathSafe.union("?/".utf8)

    /// Percent-encodes every byte not in `safe`; an existing `%XX` escape is kept.
    private static func percentEncoded(_ text: String, keeping safe: Set<UInt8>) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "%"), i + 2 < bytes.count, bytes[i + 1].isHexDigit, bytes[i + 2].isHexDigit {
                out.append(contentsOf: bytes[i...i + 2])
                i += 3
                continue
            }
            if safe.contains(b) {
                out.append(b)
            } else {
                out.append(contentsOf: Array(String(format2Hex: b).utf8))
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    var hexValue: UInt8? {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x41...0x46: self - 0x41 + 10
        case 0x61...0x66: self - 0x61 + 10
        default: nil
        }
    }
}

extension String {
    /// `%XX` for one byte, upper-case hex.
    init(format2Hex byte: UInt8) {
        let digits = Array("0123456789ABCDEF".utf8)
        self = String(decoding: [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
    }

    /// Decodes `%XX` escapes; invalid UTF-8 is replaced.
    func removingPercentEncoding() -> String {
        let bytes = Array(utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let h = bytes[i + 1].hexValue, let l = bytes[i + 2].hexValue {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension StringProtocol {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for c in self { if c == target { result += replacement } else { result.append(c) } }
        return result
    }
}
