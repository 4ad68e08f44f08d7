/// With `--out` and `output.originals = "referenced"`: the site's image files that nothing mentions
/// once the pages are rewritten, which stay out of the output: a site whose every picture became
/// variants deploys the variants alone, not the originals beside them, which are often larger than
/// all the variants together.
///
/// "Mentions" errs on the side of keeping: a file stays while any page, feed, stylesheet, script or
/// other text file of the output names it, in any URL or none (a download link, a script, a sitemap),
/// as the raw bytes have it; a name that cannot be told apart from the text around it (a space in it)
/// always stays.
enum Originals {
    /// Files whose text can name a file of the site.
    static let textExtensions: Set<String> = ["html", "htm", "md", "markdown", "css", "xml", "rss", "atom", "json", "js", "mjs",
                                              "txt", "svg", "webmanifest", "yml", "yaml", "toml", "csv", "map"]

    static func isText(_ path: String) -> Bool {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return false }
        return textExtensions.contains(path[path.index(after: dot)...].lowercased())
    }

    /// Of `images` (site paths), those not named in any of `texts`; nil when a text could not be read
    /// (then nothing is left out).
    static func unmentioned(_ images: [String], texts: [String], read: (String) -> [UInt8]?) -> Set<String>? {
        var byName: [String: [String]] = [:]
        for path in images {
            let name = PathName.name(path)
            guard name.utf8.allSatisfy(isNameByte) else { continue } // cannot be told apart: kept
            byName[name, default: []].append(path)
        }
        guard !byName.isEmpty else { return [] }
        for text in texts {
            guard let bytes = read(text) else { return nil }
            forEachName(in: bytes) { byName.removeValue(forKey: $0) }
            if byName.isEmpty { break }
        }
        return Set(byName.values.joined())
    }

    /// Of `names` (file names of the site's images), those `bytes` mention.
    static func mentioned(in bytes: [UInt8], among names: Set<String>) -> Set<String> {
        var found = Set<String>()
        forEachName(in: bytes) { if names.contains($0) { found.insert($0) } }
        return found
    }

    /// Every run of name bytes (a path segment as written), as written and percent-decoded.
    private static func forEachName(in bytes: [UInt8], _ body: (String) -> Void) {
        var start = 0
        for index in 0...bytes.count where index == bytes.count || !isNameByte(bytes[index]) {
            if index > start {
                let name = String(decoding: bytes[start..<index], as: UTF8.self)
                body(name)
                if name.contains("%") { body(name.removingPercentEncoding()) }
            }
            start = index + 1
        }
    }

    /// Letters, digits, `.`, `_`, `-`, `~`, `+`, `%` and anything not ASCII.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "%"):
            return true
        default:
            return byte >= 0x80
        }
    }
}
