/// The files of the images folder a page refers to. This is what decides which image files are still
/// in use, so it errs on the side of keeping. Two readings, united:
/// - the scanner's (`PageScan.outputs`): every reference of every kind, however it is written (under
///   `public_path`, absolute under `base_url`, relative to the page), as the reference model sees it;
/// - the raw bytes': every URL that starts with one of the site's forms of the public path at the start
///   of a URL, followed by a file name, wherever it is (a mention in a code block, a comment, a link
///   the scanners do not read keeps a file too).
/// Both see references whatever way they got into the page (rewritten this build, by an earlier
/// build, by another build at the same time, or written by hand).
public enum OwnImageReferences {
    /// The files a scanned page uses: its scan's outputs and its bytes' mentions.
    static func inUse(_ scan: PageScan, bytes: [UInt8], settings: ScanSettings) -> Set<String> {
        fileNames(in: bytes, publicPaths: settings.ownPrefixes).union(scan.outputs.map(\.name))
    }

    /// The files a page as it is on disk uses (scanned here). A page nested deeper than the parser is
    /// given (`NestingDepth`: gumbo's time is quadratic in the depth, 20 s for 100,000 levels) is not
    /// parsed here either: every output name after the images folder's name counts, however the URL
    /// around it is written (page-relative ones included), which keeps more rather than less.
    static func inUse(page path: String, bytes: [UInt8], settings: ScanSettings) -> Set<String> {
        guard let kind = SourceFile.kind(forPath: path) else { return fileNames(in: bytes, publicPaths: settings.ownPrefixes) }
        guard NestingDepth.estimate(bytes) <= NestingDepth.limit else {
            return fileNames(in: bytes, publicPaths: settings.ownPrefixes).union(outputNames(in: bytes, after: settings.ownPrefix))
        }
        let scan = SourceScanner.scan(SourceFile(path: path, kind: kind, bytes: bytes), settings: settings)
        return inUse(scan, bytes: bytes, settings: settings)
    }

    /// Output names (`isOutputName`) that follow the last folder of `publicPath` anywhere: `_img/`, or
    /// `_img\/` as JSON writers escape it (Hugo's templates in JSON-LD, PHP's `json_encode`).
    static func outputNames(in bytes: [UInt8], after publicPath: String) -> Set<String> {
        guard let folder = publicPath.split(separator: "/").last else { return [] }
        return ["/", "\\/"].reduce(into: Set<String>()) { found, slash in
            found.formUnion(names(in: bytes, after: Array((folder + slash).utf8)) { _ in true }.filter(isOutputName))
        }
    }

    /// File names (no folder) referred to by `bytes` under any of `publicPaths`.
    public static func fileNames(in bytes: [UInt8], publicPaths: [String]) -> Set<String> {
        publicPaths.reduce(into: Set<String>()) { $0.formUnion(fileNames(in: bytes, publicPath: $1)) }
    }

    /// File names (no folder) referred to by `bytes` under `publicPath`, where a URL starts.
    public static func fileNames(in bytes: [UInt8], publicPath: String) -> Set<String> {
        names(in: bytes, after: Array(publicPath.utf8)) { startsURL(bytes, at: $0) }
    }

    /// The file names that follow `prefix` wherever `accept` takes its position; a trailing dot ends a
    /// sentence, not a name.
    private static func names(in bytes: [UInt8], after prefix: [UInt8], accept: (Int) -> Bool) -> Set<String> {
        guard let first = prefix.first, bytes.count > prefix.count else { return [] }
        var names = Set<String>()
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
                names.insert(String(decoding: bytes[index + prefix.count..<end], as: UTF8.self))
            }
            index = max(end, index + 1)
        }
        return names
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
