/// Link reference definitions (`[label]: url "title"`). cmark-gfm consumes them without leaving a
/// node, so they are found by scanning the lines that are not code or raw HTML.
struct ReferenceDefinition {
    var label: String
    var destination: MarkdownSyntax.Destination
}

enum ReferenceDefinitions {
    /// Definitions in document order (the first one of a label is the one CommonMark uses).
    /// `excluded` holds 1-based line numbers inside code blocks and HTML blocks.
    static func find(in file: SourceFile, excluding excluded: Set<Int>) -> [ReferenceDefinition] {
        var found: [ReferenceDefinition] = []
        let bytes = file.bytes
        for line in 1...max(file.lineCount, 1) where !excluded.contains(line) {
            let range = file.lineRange(line)
            var i = skipContainerMarkers(bytes, range)
            // Up to three spaces of indentation, then `[label]:`.
            let indentStart = i
            i = MarkdownSyntax.skipSpaces(bytes, i, range.upperBound)
            guard i - indentStart <= 3, i < range.upperBound, bytes[i] == UInt8(ascii: "["),
                  i + 1 < range.upperBound, bytes[i + 1] != UInt8(ascii: "^") // footnotes are not links
            else { continue }
            // The label may go on over following lines, up to 999 characters and not past a blank line.
            let labelLimit = min(paragraphEnd(file, from: line, excluding: excluded), i + 1001)
            guard let close = MarkdownSyntax.closingBracket(in: bytes, from: i + 1, limit: labelLimit),
                  close > i + 1, close + 1 < labelLimit, bytes[close + 1] == UInt8(ascii: ":")
            else { continue }
            // The destination may be on the next line, so the lexer may read past this one.
            let closeLine = file.lineIndex(ofByte: close) + 1
            let limit = closeLine < file.lineCount ? file.lineRange(closeLine + 1).upperBound : file.lineRange(closeLine).upperBound
            guard let destination = MarkdownSyntax.destination(in: bytes, at: close + 2, limit: limit),
                  !destination.range.isEmpty || destination.angle
            else { continue }
            found.append(ReferenceDefinition(label: MarkdownSyntax.normalizedLabel(bytes[i + 1..<close]),
                                             destination: destination))
        }
        return found
    }

    /// End of the last line before a blank line, a code or HTML line, or the end of the file.
    private static func paragraphEnd(_ file: SourceFile, from line: Int, excluding excluded: Set<Int>) -> Int {
        var last = line
        while last < file.lineCount, !excluded.contains(last + 1),
              !file.bytes[file.lineRange(last + 1)].allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            last += 1
        }
        return file.lineRange(last).upperBound
    }

    /// Skips block-quote markers (`>`) and list-item markers (`-`, `*`, `+`, `1.`, `1)`) that open
    /// container blocks at the start of a line.
    private static func skipContainerMarkers(_ bytes: [UInt8], _ range: Range<Int>) -> Int {
        var i = range.lowerBound
        while true {
            let j = MarkdownSyntax.skipSpaces(bytes, i, range.upperBound)
            guard j < range.upperBound else { return i }
            let c = bytes[j]
            if c == UInt8(ascii: ">") {
                i = j + 1
                if i < range.upperBound, bytes[i] == 0x20 { i += 1 }
                continue
            }
            if (c == UInt8(ascii: "-") || c == UInt8(ascii: "*") || c == UInt8(ascii: "+")),
               j + 1 < range.upperBound, bytes[j + 1] == 0x20 {
                i = j + 2
                continue
            }
            var k = j
            while k < range.upperBound, k - j < 9, (0x30...0x39).contains(bytes[k]) { k += 1 }
            if k > j, k + 1 < range.upperBound, bytes[k] == UInt8(ascii: ".") || bytes[k] == UInt8(ascii: ")"),
               bytes[k + 1] == 0x20 {
                i = k + 2
                continue
            }
            return i
        }
    }
}
