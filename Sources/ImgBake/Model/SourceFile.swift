/// A page of the site as bytes, with what is needed to turn byte offsets into line and column.
/// Pages are handled as bytes, never as decoded text, so that every byte not rewritten is kept
/// (BOM, CRLF, odd encodings). Stylesheets and feeds are "pages" too: scanned, rewritten and kept
/// track of the same way, each by its own scanner.
public struct SourceFile: Sendable {
    public enum Kind: String, Sendable {
        case html, markdown, css
        /// `.json`, `.xml`, `.rss`, `.atom`: a feed when its contents say so (JSON Feed, RSS, Atom);
        /// any other such file has no references and is left as it is.
        case feed
    }

    /// Path relative to the site root, with `/` separators.
    public var path: String
    public var kind: Kind
    public var bytes: [UInt8]
    /// Byte offset at which each line starts.
    private let lineStarts: [Int]
    /// Characters (UTF-8 lead bytes) before every `block`-th byte, so that a column is counted from
    /// the nearest of them rather than from the start of its line: a minified page is one line, and
    /// counting from there for each of its images took time in images × page size.
    private let charactersBefore: [Int]
    private static let block = 1024

    public init(path: String, kind: Kind, bytes: [UInt8]) {
        self.path = path
        self.kind = kind
        self.bytes = bytes
        var starts = [0]
        var counts: [Int] = []
        var characters = 0
        for (offset, byte) in bytes.enumerated() {
            if offset % Self.block == 0 { counts.append(characters) }
            if byte & 0xC0 != 0x80 { characters += 1 }
            // A line ends at LF, CRLF or a lone CR, as CommonMark (cmark's positions) and YAML (Yams')
            // count lines: with LF alone, a page with a lone CR put cmark's positions on other lines.
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") && (offset + 1 == bytes.count || bytes[offset + 1] != UInt8(ascii: "\n")) {
                starts.append(offset + 1)
            }
        }
        lineStarts = starts
        charactersBefore = counts
    }

    /// Kind by file extension (`.html`, `.htm`, `.md`, `.markdown`, `.css`, `.json`, `.xml`, `.rss`,
    /// `.atom`), nil for anything else.
    public static func kind(forPath path: String) -> Kind? {
        let lower = path.lowercased()
        guard let dot = lower.lastIndex(of: ".") else { return nil }
        switch lower[lower.index(after: dot)...] {
        case "html", "htm": return .html
        case "md", "markdown": return .markdown
        case "css": return .css
        case "json", "xml", "rss", "atom": return .feed
        default: return nil
        }
    }

    /// Line and column (1-based; the column counts characters, a CR before LF is not counted).
    public func location(ofByte offset: Int) -> SourceLocation {
        let line = lineIndex(ofByte: offset)
        let start = lineStarts[line]
        let column = characters(before: min(max(offset, start), bytes.count)) - characters(before: start) + 1
        return SourceLocation(file: path, line: line + 1, column: column)
    }

    /// Characters in `bytes[..<offset]`.
    private func characters(before offset: Int) -> Int {
        guard !charactersBefore.isEmpty else { return 0 }
        let block = min(offset / Self.block, charactersBefore.count - 1)
        return bytes[block * Self.block..<offset].reduce(charactersBefore[block]) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
    }

    /// Byte offset of a 1-based line and 1-based byte column (cmark's positions), clamped to the file.
    public func offset(line: Int, byteColumn: Int) -> Int {
        guard line >= 1 else { return 0 }
        guard line <= lineStarts.count else { return bytes.count }
        return min(lineStarts[line - 1] + max(byteColumn - 1, 0), bytes.count)
    }

    /// Byte range of a 1-based line, without its line ending.
    public func lineRange(_ line: Int) -> Range<Int> {
        guard line >= 1, line <= lineStarts.count else { return bytes.count..<bytes.count }
        let start = lineStarts[line - 1]
        var end = line < lineStarts.count ? lineStarts[line] : bytes.count
        if end > start, bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        if end > start, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return start..<end
    }

    public var lineCount: Int { lineStarts.count }

    /// 0-based index of the line containing `offset`.
    public func lineIndex(ofByte offset: Int) -> Int {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return low
    }
}
