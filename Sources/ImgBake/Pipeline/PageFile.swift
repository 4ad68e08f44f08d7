/// Reading and scanning a page file, the one way the build and `imgbake scan` do it.
enum PageFile {
    struct ReadError: Error {
        var path: String
        var reason: String

        var diagnostic: Diagnostic {
            Diagnostic(.warning, "page not read: \(reason); left as it is", at: SourceLocation(file: path, line: 1, column: 1))
        }
    }

    /// The page's bytes and stamp, read once; a page over `maxBytes` is not read.
    static func read(_ path: String, site: String, maxBytes: Int) -> Result<([UInt8], FileStamp), ReadError> {
        let file = site + "/" + path
        guard SourceFile.kind(forPath: path) != nil else { return .failure(ReadError(path: path, reason: "not a page")) }
        if let size = FileStamp.of(file)?.size, size > maxBytes {
            return .failure(ReadError(path: path, reason: "\(ByteCount.describe(size)), over the \(ByteCount.describe(maxBytes)) limit (build.max_page_size)"))
        }
        do { return .success(try AtomicFile.readWithStamp(file)) } catch {
            return .failure(ReadError(path: path, reason: error.reason))
        }
    }

    /// The page's one scan; nil for a page nested too deep to parse (gumbo's time is quadratic in the
    /// depth: minutes for 100,000 levels).
    static func scan(_ path: String, _ bytes: [UInt8], settings: ScanSettings) -> PageScan? {
        guard let kind = SourceFile.kind(forPath: path), NestingDepth.estimate(bytes) <= NestingDepth.limit else { return nil }
        return SourceScanner.scan(SourceFile(path: path, kind: kind, bytes: bytes), settings: settings)
    }

    /// Why a page was not scanned: nested too deep.
    static func tooDeep(_ path: String, _ bytes: [UInt8]) -> ReadError {
        ReadError(path: path, reason: "elements nested \(NestingDepth.estimate(bytes)) deep, more than \(NestingDepth.limit) (parsing it would take minutes)")
    }
}
