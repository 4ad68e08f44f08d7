import Locking

/// A build's stylesheets and scripts, from the site folder: each file read and parsed once however
/// many pages apply it, each `<style>` text parsed once however many pages repeat it. In place, a
/// stylesheet imgbake rewrote differs from its source only in URLs, which the rules leave out.
final class SiteStyles: StyleLibrary {
    private let site: String
    /// Files larger than this are not read (a stylesheet that large is not one a page applies).
    static let maxBytes = 8 << 20
    private let sheets = Locked([String: StyleSheet?]())
    private let inlines = Locked([BlobID: StyleSheet]())
    private let scripts = Locked([String: Bool?]())
    /// Stylesheets read for the layout that the page stage may build too (a site's `.css` files are
    /// pages, for their `url()`s): handed over once, so that a file is read once a build.
    private let unclaimed = Locked([String: ([UInt8], FileStamp)]())

    init(site: String) { self.site = site }

    func stylesheet(_ path: String) -> StyleSheet? {
        if let known = sheets.withLock({ $0[path] }) { return known }
        let read = self.read(path)
        let sheet = read.map { StyleSheet.parse($0.0) }
        sheets.withLock { $0[path] = sheet }
        if let read { unclaimed.withLock { $0[path] = read } }
        return sheet
    }

    /// The bytes and stamp of a stylesheet read for the layout and not handed over yet.
    func take(_ path: String) -> ([UInt8], FileStamp)? {
        unclaimed.withLock { $0.removeValue(forKey: path) }
    }

    func inline(_ text: String) -> StyleSheet {
        let key = BlobID(of: Array(text.utf8))
        if let known = inlines.withLock({ $0[key] }) { return known }
        let sheet = StyleSheet.parse(Array(text.utf8))
        inlines.withLock { $0[key] = sheet }
        return sheet
    }

    func scriptMayRestructureImages(_ path: String) -> Bool? {
        if let known = scripts.withLock({ $0[path] }) { return known }
        let verdict = read(path).map { ScriptCheck.mayRestructureImages($0.0) }
        scripts.withLock { $0[path] = verdict }
        return verdict
    }

    /// What every stylesheet and script among `paths` says of the site's layout, hashed: each
    /// stylesheet's rules and each script's verdict (`ScriptCheck`).
    func digest(of paths: [String]) -> String {
        var text = ""
        for path in paths.sorted() {
            let lowered = path.lowercased()
            if lowered.hasSuffix(".css") {
                text += "\(path)\n\(stylesheet(path).map { "\($0.rules)\($0.imports)\($0.layers)" } ?? "-")\n"
            } else if lowered.hasSuffix(".js") || lowered.hasSuffix(".mjs") {
                text += "\(path) \(scriptMayRestructureImages(path).map(String.init(describing:)) ?? "-")\n"
            }
        }
        return BlobID(of: Array(text.utf8)).hex
    }

    private func read(_ path: String) -> ([UInt8], FileStamp)? {
        let file = site + "/" + path
        guard let size = FileStamp.of(file)?.size, size <= Self.maxBytes else { return nil }
        return try? AtomicFile.readWithStamp(file)
    }
}
