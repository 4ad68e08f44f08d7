/// The text a page's state is stored as in the index. Not JSON: Foundation's coders would make decoding
/// and encoding the states of a large unchanged site most of a build that has nothing else to do; this
/// is a line per field, read with a few splits.
///
/// ```
/// S4            version (earlier versions read as no state: the page is read once more)
/// path          one line per scalar field, in declaration order; strings escaped (\\ \n \t)
/// ...
/// 3             a count, then that many lines (keys, images, written hashes, mentions)
/// .             the end
/// ```
/// The references are stored apart (`line \t column \t kind \t url`, a line each): only reports read
/// them. Anything else (a state written by an older imgbake, a damaged row) decodes to nil: the page is
/// then read again, as a new page would be.
enum PageStateCodec {
    static func encode(_ state: PageState) -> String {
        var lines = ["S4", escape(state.path), escape(state.fingerprint), state.sourceHash?.hex ?? "-",
                     String(state.stamp.size), String(state.stamp.modified),
                     state.output.map { "\($0.size) \($0.modified)" } ?? "-", state.kept?.hex ?? "-",
                     state.complete ? "1" : "0", state.imagesKnown ? "1" : "0", String(state.sources.value, radix: 16)]
        for list in [state.keys.map(\.string), state.images, state.written.map(\.hex), state.mentions] {
            lines.append(String(list.count))
            lines += list.map(escape)
        }
        lines.append(".") // a row cut short anywhere is not a state
        return lines.joined(separator: "\n")
    }

    static func decode(_ text: String) -> PageState? {
        var strings = Interner()
        return decode(text, interning: &strings)
    }

    /// `strings`: the keys and image names of states decoded together share their storage.
    static func decode(_ text: String, interning strings: inout Interner) -> PageState? {
        var text = text
        return text.withUTF8 { decode(bytes: $0, interning: &strings) }
    }

    /// A state as the index holds it, with its references when they were read; nil when damaged or not
    /// the page its row names.
    static func decode(_ stored: StoredPageState, interning strings: inout Interner) -> PageState? {
        guard var state = decode(stored.state, interning: &strings), state.path == stored.path else { return nil }
        if let lines = stored.references {
            guard let references = references(stored: lines) else { return nil }
            state.references = references
        }
        return state
    }

    /// Works on the UTF-8 bytes: going through `Character`s (grapheme breaking) cost more than the JSON
    /// it replaced.
    private static func decode(bytes: UnsafeBufferPointer<UInt8>, interning strings: inout Interner) -> PageState? {
        var reader = Lines(bytes)
        guard reader.next().map(reader.text) == "S4", let path = reader.string(), let fingerprint = reader.string(),
              let sourceHash = reader.next().map(reader.text), let size = reader.int(), let modified = reader.int64(),
              let output = reader.next().map(reader.text), let kept = reader.next().map(reader.text),
              let complete = reader.flag(), let imagesKnown = reader.flag(),
              let sources = reader.next().flatMap({ UInt64(reader.text($0), radix: 16) }),
              let keys = reader.list({ $0.string().map { OriginalKey(strings.intern($0)) } }),
              let images = reader.list({ $0.string().map { strings.intern($0) } }),
              let written = reader.list({ $0.next().map($0.text).flatMap(BlobID.init(hex:)) }),
              let mentions = reader.list({ $0.string().map { strings.intern($0) } }),
              reader.next().map(reader.text) == ".", reader.atEnd
        else { return nil }
        var stamp: FileStamp?
        if output != "-" {
            let parts = output.split(separator: " ")
            guard parts.count == 2, let size = Int(parts[0]), let modified = Int64(parts[1]) else { return nil }
            stamp = FileStamp(size: size, modified: modified)
        }
        var blob: BlobID?
        if kept != "-" {
            guard let id = BlobID(hex: kept) else { return nil }
            blob = id
        }
        var source: BlobID?
        if sourceHash != "-" {
            guard let id = BlobID(hex: sourceHash) else { return nil }
            source = id
        }
        // The fields S4 stores, as the copy they describe: hashes written over the source are in place.
        let copy: PageCopy
        if !written.isEmpty {
            guard let blob else { return nil }
            copy = .rewritten(source: blob, rewrites: written)
        } else if blob != nil || stamp != nil {
            copy = .written(kept: blob, output: stamp)
        } else {
            copy = .none
        }
        return PageState(path: path, fingerprint: strings.intern(fingerprint), sourceHash: source,
                         stamp: FileStamp(size: size, modified: modified), copy: copy, complete: complete, keys: keys,
                         sources: SourceDigest(value: sources), images: images, imagesKnown: imagesKnown, mentions: mentions,
                         references: nil)
    }

    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }) else { return text }
        // By byte: as `Character`s, "\r\n" is one that matches neither case and went through raw.
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A page's references as the index stores them apart: a line each, its line, column, kind and
    /// escaped URL separated by tabs.
    static func lines(of references: [RecordedReference]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(references.count * 80)
        for (index, reference) in references.enumerated() {
            if index > 0 { bytes.append(0x0A) }
            bytes += String(reference.line).utf8
            bytes.append(0x09)
            bytes += String(reference.column).utf8
            bytes.append(0x09)
            bytes += reference.kind.rawValue.utf8
            bytes.append(0x09)
            bytes += escape(reference.url).utf8
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The references of `lines` as `lines(of:)` wrote them; nil when one is not a reference (a damaged row).
    static func references(stored lines: String) -> [RecordedReference]? {
        guard !lines.isEmpty else { return [] }
        var text = lines
        // On the UTF-8 bytes, as states are: a page built elsewhere brings its references along.
        return text.withUTF8 { bytes in
            var references: [RecordedReference] = []
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count && bytes[end] != 0x0A { end += 1 }
                guard let reference = reference(in: bytes[start..<end]) else { return nil }
                references.append(reference)
                start = end + 1
            }
            return references
        }
    }

    /// The reference a line written by `lines(of:)` holds.
    static func reference(in line: UnsafeBufferPointer<UInt8>.SubSequence) -> RecordedReference? {
        var tabs: [Int] = []
        for index in line.indices where line[index] == 0x09 {
            tabs.append(index)
            if tabs.count == 3 { break }
        }
        guard tabs.count == 3, let number = integer(line[line.startIndex..<tabs[0]]), let column = integer(line[tabs[0] + 1..<tabs[1]]),
              let kind = ImageReference.Kind(rawValue: String(decoding: line[tabs[1] + 1..<tabs[2]], as: UTF8.self)),
              let url = unescape(line[(tabs[2] + 1)...])
        else { return nil }
        return RecordedReference(line: number, column: column, kind: kind, url: url)
    }

    /// A decimal integer, optionally negative, of at most 18 digits.
    private static func integer(_ field: UnsafeBufferPointer<UInt8>.SubSequence) -> Int? {
        let negative = field.first == UInt8(ascii: "-")
        let digits = negative ? field.dropFirst() : field
        guard !digits.isEmpty, digits.count < 19 else { return nil }
        var value = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return negative ? -value : value
    }

    /// Whether `line` is a reference as `lines(of:)` writes it: two numbers, a kind, and a URL
    /// whose escapes are whole. Looked at in place: nothing is made of it.
    static func isReference(_ line: UnsafeBufferPointer<UInt8>.SubSequence) -> Bool {
        var fields: [Range<Int>] = []
        var start = line.startIndex
        for index in line.indices where line[index] == 0x09 && fields.count < 3 {
            fields.append(start ..< index)
            start = index + 1
        }
        guard fields.count == 3 else { return false }
        let url = line[start...]
        func isNumber(_ range: Range<Int>) -> Bool {
            let field = line[range]
            let digits = field.first == UInt8(ascii: "-") ? field.dropFirst() : field
            return !digits.isEmpty && digits.count < 19 && digits.allSatisfy { (0x30...0x39).contains($0) }
        }
        guard isNumber(fields[0]), isNumber(fields[1]),
              ImageReference.Kind.allCases.contains(where: { $0.rawValue.utf8.elementsEqual(line[fields[2]]) }) else { return false }
        var escaped = false
        for byte in url {
            if byte == 0x0D { return false } // written escaped
            if escaped {
                guard [0x5C, UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "r")].contains(byte) else { return false }
                escaped = false
            } else if byte == 0x5C {
                escaped = true
            }
        }
        return !escaped
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
    }
}
