/// Mentions of files of imgbake's own images folder in a page's raw bytes: every URL that starts with
/// one of the site's forms of the public path at the start of a URL, followed by a file name, wherever
/// it is (a code block, a comment, a link the scanners do not read). With the scanners' references to
/// outputs (`PageScan.outputs`), what keeps a file in use (`PageModel.uses`): they err on the side of
/// keeping.
public enum OwnImageReferences {
    /// The files `bytes` mention under any of `publicPaths`, each with the offset of its first mention.
    static func mentions(in bytes: [UInt8], publicPaths: [String]) -> [String: Int] {
        var found: [String: Int] = [:]
        for path in publicPaths {
            names(in: bytes, after: Array(path.utf8), accept: { startsURL(bytes, at: $0) }) { name, offset in
                if found[name].map({ offset < $0 }) ?? true { found[name] = offset }
            }
        }
        return found
    }

    /// The files a page too deeply nested to parse (`NestingDepth`: gumbo's time is quadratic in the
    /// depth) uses: every output name after the images folder's name counts, however the URL around it
    /// is written (page-relative ones included), which keeps more rather than less.
    static func unparsedUses(in bytes: [UInt8], ownPrefix: String, publicPaths: [String]) -> Set<String> {
        fileNames(in: bytes, publicPaths: publicPaths).union(outputNames(in: bytes, after: ownPrefix))
    }

    /// Output names (`isOutputName`) that follow the last folder of `publicPath` anywhere: `_img/`, or
    /// `_img\\/` as JSON writers escape it (Hugo's templates in JSON-LD, PHP's `json_encode`).
    static func outputNames(in bytes: [UInt8], after publicPath: String) -> Set<String> {
        guard let folder = publicPath.split(separator: "/").last else { return [] }
        var found = Set<String>()
        for slash in ["/", "\\/"] {
            names(in: bytes, after: Array((folder + slash).utf8), accept: { _ in true }) { name, _ in
                if isOutputName(name) { found.insert(name) }
            }
        }
        return found
    }

    /// File names (no folder) referred to by `bytes` under any of `publicPaths`.
    public static func fileNames(in bytes: [UInt8], publicPaths: [String]) -> Set<String> {
        publicPaths.reduce(into: Set<String>()) { $0.formUnion(fileNames(in: bytes, publicPath: $1)) }
    }

    /// File names (no folder) referred to by `bytes` under `publicPath`, where a URL starts.
    public static func fileNames(in bytes: [UInt8], publicPath: String) -> Set<String> {
        var found = Set<String>()
        names(in: bytes, after: Array(publicPath.utf8), accept: { startsURL(bytes, at: $0) }) { name, _ in found.insert(name) }
        return found
    }

    /// Each file name that follows `prefix` wherever `accept` takes its position, with the offset of the
    /// prefix; a trailing dot ends a sentence, not a name.
    private static func names(in bytes: [UInt8], after prefix: [UInt8], accept: (Int) -> Bool, _ found: (String, Int) -> Void) {
        guard let first = prefix.first, bytes.count > prefix.count else { return }
        var index = 0
        let last = bytes.count - prefix.count
        while index <= last {
            // A cheap first-byte check before comparing the whole prefix.
            guard bytes[index] == first, accept(index), bytes[index..<index + prefix.count].elementsEqual(prefix) else {
                index += 1
                continue
            }
            var end = index + prefix.count
            while end < bytes.count, isFileNameByte(bytes[end]) { end += 1 }
            while end > index + prefix.count, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
            if end > index + prefix.count {
                found(String(decoding: bytes[index + prefix.count..<end], as: UTF8.self), index)
            }
            index = max(end, index + 1)
        }
    }

    /// `https://example.com/_img/x.jpg` is not a reference to `/_img/x.jpg`: a URL starts after a
    /// quote, a space, `(`, `=`, `,`, `<`, `>`, or at the start of the file.
    private static func startsURL(_ bytes: [UInt8], at index: Int) -> Bool {
        guard index > 0 else { return true }
        switch bytes[index - 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: "="), UInt8(ascii: ","),
             UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "["), UInt8(ascii: "`"):
            return true
        default:
            return bytes[index - 1].isHTMLSpace
        }
    }

    /// Output names are `<stem>-<hash>-<width>.<ext>`: ASCII letters, digits, `-`, `_` and `.`.
    private static func isFileNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }

    /// True for names imgbake gives its files: `<stem>-<10 hex digits>[-<width>].<ext>`.
    public static func isOutputName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].isEmpty else { return false }
        let fields = parts[0].split(separator: "-")
        guard fields.count >= 2 else { return false }
        let hex = { (s: Substring) in s.count == 10 && s.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
        if hex(fields[fields.count - 1]) { return true } // an SVG without a width
        return fields.count >= 3 && hex(fields[fields.count - 2]) && fields[fields.count - 1].allSatisfy(\.isNumber)
    }
}
