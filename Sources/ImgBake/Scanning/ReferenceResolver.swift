/// What scanning needs to know about the site: whether its own images are localised, where it is
/// served, and where imgbake's own outputs are (never images to localise again).
public struct ScanSettings: Sendable {
    /// `images.local`: references to the site's own images are localised too.
    public var localImages = true
    /// The URL path the site folder is served at (`/`, or `/blog/` under a sub-path).
    public var siteRoot = "/"
    /// The absolute URL the site is served at: URLs under it are the site's own files.
    public var baseURL: RemoteURL?
    /// Where references to imgbake's own outputs start (`/_img/`, or a CDN URL).
    public var ownPrefix = "/_img/"
    /// Every way a page can write the start of a reference to an output: the public path, and under
    /// `base_url` when the public path is root-relative (social cards, feeds).
    public var ownPrefixes: [String] {
        guard ownPrefix.hasPrefix("/"), let baseURL else { return [ownPrefix] }
        return [ownPrefix, baseURL.scheme + "://" + baseURL.host + (baseURL.port.map { ":\($0)" } ?? "") + ownPrefix]
    }
    /// A link around an image to the same image is a reference (`output.image_links`).
    public var imageLinks = true
    /// Front-matter keys whose values are images.
    public var frontMatterKeys = ["image", "cover", "thumbnail", "images", "og_image"]
    /// How an `<img>` without `alt` is reported (nil: not at all).
    public var missingAlt: Diagnostic.Severity?

    public init() {}
}

/// Turns what a page wrote into the image it means: a remote URL, or a file of the site, or one of
/// imgbake's own outputs, or a reason it is none of these (outside the site). Everything else —
/// `data:`, fragments, other schemes — is not an image.
///
/// Every scanner asks this for every URL it finds, whatever the kind of reference, so an output a
/// page uses is known the same way an image to localise is: the clean-up at the end of a build keeps
/// what this found, and a reference kind added later is counted without anyone remembering to.
public struct ReferenceResolver: Sendable {
    public enum Meaning: Sendable, Equatable {
        case image(ImageSource)
        /// A file of imgbake's own images folder (by its name): in use, never localised again. Found
        /// however it is written: under `public_path`, under `base_url`, or relative to the page.
        case output(String)
        /// Not an image imgbake localises.
        case ignored
        /// Looks local but cannot be a file of the site; a warning, the reference stays.
        case problem(String)
    }

    public var settings: ScanSettings
    /// The page's path in the site (relative references resolve against its folder).
    public var pagePath: String
    /// A `<base href>`: remote (relative references become remote), or a local path.
    public var base: RemoteURL?
    public var localBase: String?

    public init(settings: ScanSettings, pagePath: String, base: RemoteURL? = nil, localBase: String? = nil) {
        self.settings = settings
        self.pagePath = pagePath
        self.base = base
        self.localBase = localBase
    }

    /// - Parameter imageExtensionRequired: in contexts where a URL may be anything (CSS), only paths
    ///   with an image file extension are images.
    public func resolve(_ written: String, imageExtensionRequired: Bool = false) -> Meaning {
        // Only ASCII white space, as browsers strip it (a no-break space is part of a relative URL).
        let text = String(written.unicodeScalars.drop { $0.value <= 0x20 }.reversed().drop { $0.value <= 0x20 }.reversed()
            .map(Character.init))
        guard !text.isEmpty, !text.hasPrefix("#"), text.utf8.count <= 8192 else { return .ignored }
        if let scheme = Self.scheme(of: text), scheme != "http", scheme != "https" { return .ignored }
        if text.hasPrefix(settings.ownPrefix) { return Self.output(text.dropFirst(settings.ownPrefix.count)) }
        let meaning: Meaning
        if let remote = RemoteURL.resolve(text, against: base) {
            meaning = local(of: remote).map { localPath($0) } ?? .image(.remote(remote))
        } else {
            guard Self.scheme(of: text) == nil, !text.hasPrefix("//") else { return .ignored }
            meaning = localPath(text)
        }
        if imageExtensionRequired, case .image(let source) = meaning, !Self.hasImageExtension(source.lastPathSegment) {
            return .ignored
        }
        return meaning
    }

    /// Where a stylesheet or script `written` is (the site's own, whatever `images.local` says); nil
    /// for nothing at all (empty, a fragment).
    public func asset(_ written: String) -> AssetPlace? {
        var local = self
        local.settings.localImages = true
        switch local.resolve(written) {
        case .image(.local(let path)): return .site(path)
        case .image(.remote), .problem: return .elsewhere
        case .output: return .elsewhere
        case .ignored:
            let text = written.trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty || text.hasPrefix("#") ? nil : .elsewhere
        }
    }

    /// The image `written` means, or nil; where it looks local but cannot be a file of the site, a
    /// warning at `location` (the reference stays as it is); where it is one of imgbake's outputs, the
    /// use is noted in `outputs`.
    public func image(_ written: String, at location: SourceLocation, imageExtensionRequired: Bool = false,
                      diagnostics: inout [Diagnostic], outputs: inout [OutputUse]) -> ImageSource? {
        switch resolve(written, imageExtensionRequired: imageExtensionRequired) {
        case .image(let source): return source
        case .output(let name):
            outputs.append(OutputUse(name: name, location: location))
            return nil
        case .ignored: return nil
        case .problem(let why):
            diagnostics.append(Diagnostic(.warning, "\(why); left as it is", at: location))
            return nil
        }
    }

    /// The path under `base_url` when a remote URL is one of the site's own.
    private func local(of url: RemoteURL) -> String? {
        guard let baseURL = settings.baseURL, url.scheme == baseURL.scheme, url.host == baseURL.host,
              url.port == baseURL.port, url.path.hasPrefix(baseURL.path) else { return nil }
        return url.path
    }

    /// A path as written in the page (relative, or root-relative), made a path in the site. Outputs are
    /// recognised whether or not the site's own images are localised (`images.local`).
    private func localPath(_ written: String) -> Meaning {
        var path = written
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<cut]) }
        path = path.replacingOccurrences(of: "\\", with: "/").removingPercentEncoding()
        guard !path.isEmpty else { return .ignored }
        if path.hasPrefix(settings.ownPrefix) { return Self.output(path.dropFirst(settings.ownPrefix.count)) }
        let absolute: String
        if path.hasPrefix("/") {
            let root = settings.siteRoot
            guard path.hasPrefix(root) || path + "/" == root else {
                return notInSite("\(written) is outside the site (it is served at \(root))")
            }
            absolute = String(path.dropFirst(root.count))
        } else {
            let folder = localBase ?? (pagePath.contains("/") ? String(pagePath[..<pagePath.lastIndex(of: "/")!]) : "")
            absolute = folder.isEmpty ? path : folder + "/" + path
        }
        var segments: [Substring] = []
        for segment in absolute.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..":
                guard !segments.isEmpty else { return notInSite("\(written) is outside the site folder") }
                segments.removeLast()
            default: segments.append(segment)
            }
        }
        guard !segments.isEmpty else { return .ignored }
        let joined = segments.joined(separator: "/")
        let own = String(settings.ownPrefix.dropFirst(settings.siteRoot.count))
        if !own.isEmpty, (joined + "/").hasPrefix(own) { return Self.output(joined.dropFirst(own.count)) }
        guard settings.localImages else { return .ignored }
        return .image(.local(joined))
    }

    /// A local path that cannot be a file of the site: a problem when the site's images are localised.
    private func notInSite(_ why: String) -> Meaning { settings.localImages ? .problem(why) : .ignored }

    /// What follows the images folder's path: a file name (the folder is flat), without a query or
    /// fragment. Anything deeper is no file imgbake wrote.
    private static func output(_ rest: Substring) -> Meaning {
        let name = rest.prefix { $0 != "?" && $0 != "#" }
        let decoded = String(name).removingPercentEncoding()
        guard !decoded.isEmpty, !decoded.contains("/") else { return .ignored }
        return .output(decoded)
    }

    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isLetter,
              scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else { return nil }
        return scheme.lowercased()
    }

    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "gif", "webp", "avif", "svg"]

    static func hasImageExtension(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: ".") else { return false }
        return imageExtensions.contains(name[name.index(after: dot)...].lowercased())
    }
}
