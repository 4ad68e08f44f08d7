/// The text a page's state is stored as in the index. Not JSON: with Foundation's coders, decoding the
/// states of 10,000 unchanged pages and encoding them again was two thirds of a no-op rebuild (1.5 s
/// of 10k pages, measured with perf); this is a line per field, read with a few splits.
///
/// ```
/// S1            version
/// path          one line per scalar field, in declaration order; strings escaped (\\ \n \t)
/// ...
/// 3             a count, then that many lines (keys, images, references: line \t column \t kind \t url)
/// .             the end
/// ```
/// Anything else (a state written by an older imgbake, a damaged row) decodes to nil: the page is
/// then read again, as a new page would be.
enum PageStateCodec {
    static func encode(_ state: PageState) -> String {
        var lines = ["S1", escape(state.path), escape(state.fingerprint), escape(state.sourceHash),
                     String(state.size), String(state.modified),
                     state.output.map { "\($0.size) \($0.modified)" } ?? "-",
                     state.complete ? "1" : "0", state.imagesKnown ? "1" : "0"]
        for list in [state.keys, state.images] {
            lines.append(String(list.count))
            lines += list.map(escape)
        }
        lines.append(String(state.references.count))
        lines += state.references.map { "\($0.line)\t\($0.column)\t\($0.kind.rawValue)\t\(escape($0.url))" }
        lines.append(".") // a row cut short anywhere is not a state
        return lines.joined(separator: "\n")
    }

    static func decode(_ text: String) -> PageState? {
        var text = text
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// Works on the UTF-8 bytes: going through `Character`s (grapheme breaking) cost more than the JSON
    /// it replaced.
    private static func decode(bytes: UnsafeBufferPointer<UInt8>) -> PageState? {
        var reader = Lines(bytes)
        guard reader.next().map(reader.text) == "S1", let path = reader.string(), let fingerprint = reader.string(),
              let sourceHash = reader.string(), let size = reader.int(), let modified = reader.int64(),
              let output = reader.next().map(reader.text), let complete = reader.flag(), let imagesKnown = reader.flag(),
              let keys = reader.list({ $0.string() }), let images = reader.list({ $0.string() }),
              let references = reader.list({ $0.reference() }), reader.next().map(reader.text) == ".", reader.atEnd
        else { return nil }
        var stamp: FileStamp?
        if output != "-" {
            let parts = output.split(separator: " ")
            guard parts.count == 2, let size = Int(parts[0]), let modified = Int64(parts[1]) else { return nil }
            stamp = FileStamp(size: size, modified: modified)
        }
        return PageState(path: path, fingerprint: fingerprint, sourceHash: sourceHash, size: size, modified: modified,
                         output: stamp, complete: complete, keys: keys, images: images, imagesKnown: imagesKnown,
                         references: references)
    }

    static func escape(_ text: String) -> String {
        guard text.contains(where: { $0 == "\\" || $0 == "\n" || $0 == "\t" || $0 == "\r" }) else { return text }
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default: out.append(character)
            }
        }
        return out
    }

    static func unescape(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence) -> String? {
        guard bytes.contains(UInt8(ascii: "\\")) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var escaped = false
        for byte in bytes {
            if escaped {
                switch byte {
                case UInt8(ascii: "\\"): out.append(byte)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                default: return nil
                }
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else {
                out.append(byte)
            }
        }
        return escaped ? nil : String(decoding: out, as: UTF8.self)
    }

    /// The lines of a state, as byte ranges.
    private struct Lines {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var atEnd: Bool { position > bytes.count }

        mutating func next() -> UnsafeBufferPointer<UInt8>.SubSequence? {
            guard position <= bytes.count else { return nil }
            var end = position
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            defer { position = end + 1 }
            return bytes[position ..< end]
        }

        func text(_ line: UnsafeBufferPointer<UInt8>.SubSequence) -> String { String(decoding: line, as: UTF8.self) }

        mutating func string() -> String? { next().flatMap(PageStateCodec.unescape) }
        mutating func int() -> Int? { next().flatMap { Int(text($0)) } }
        mutating func int64() -> Int64? { next().flatMap { Int64(text($0)) } }

        mutating func flag() -> Bool? {
            switch next().map(text) {
            case "1": true
            case "0": false
            default: nil
            }
        }

        mutating func list<T>(_ item: (inout Lines) -> T?) -> [T]? {
            guard let count = int(), count >= 0, count <= bytes.count - position else { return nil }
            var items: [T] = []
            items.reserveCapacity(count)
            for _ in 0..<count {
                guard let value = item(&self) else { return nil }
                items.append(value)
            }
            return items
        }

        mutating func reference() -> RecordedReference? {
            guard let line = next() else { return nil }
            let fields = line.split(separator: 0x09, maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let number = Int(text(fields[0])), let column = Int(text(fields[1])),
                  let kind = ImageReference.Kind(rawValue: text(fields[2])), let url = PageStateCodec.unescape(fields[3])
            else { return nil }
            return RecordedReference(line: number, column: column, kind: kind, url: url)
        }
    }
}
