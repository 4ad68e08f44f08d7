/// A JSON document as a tree that keeps, for every string, the raw bytes between its quotes and its
/// decoded bytes mapped back to them: feeds are rewritten by splicing bytes, never by re-serialising
/// (Foundation's `JSONSerialization` reorders keys and rewrites escapes and numbers).
indirect enum JSONTree {
    case object([(key: String, value: JSONTree)])
    /// `contents`: the raw range between the quotes; `decoded.sources` are offsets into it.
    case string(decoded: HTMLEntities.Decoded, contents: Range<Int>)
    case array([JSONTree])
    /// A number, `true`, `false` or `null`: nothing to rewrite in it.
    case other

    /// Parses RFC 8259 JSON; nil when it is not (or nests more than `maximumDepth` deep).
    static func parse(_ bytes: [UInt8]) -> JSONTree? {
        var reader = JSONReader(bytes: bytes)
        reader.position = ByteOrderMark.length(bytes)
        guard let tree = reader.value() else { return nil }
        reader.skipSpace()
        return reader.position == bytes.count ? tree : nil
    }

    static let maximumDepth = 200

    subscript(key: String) -> JSONTree? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    var string: String? {
        guard case .string(let decoded, _) = self else { return nil }
        return decoded.string
    }
}

private struct JSONReader {
    let bytes: [UInt8]
    var position = 0
    var depth = 0

    mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    mutating func value() -> JSONTree? {
        skipSpace()
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return nested { $0.object() }
        case UInt8(ascii: "["): return nested { $0.array() }
        case UInt8(ascii: "\""): return string()
        default: return literal()
        }
    }

    private mutating func nested(_ read: (inout JSONReader) -> JSONTree?) -> JSONTree? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= JSONTree.maximumDepth else { return nil }
        position += 1
        return read(&self)
    }

    private mutating func object() -> JSONTree? {
        var members: [(key: String, value: JSONTree)] = []
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
        while true {
            skipSpace()
            guard let key = string()?.string else { return nil }
            skipSpace()
            guard take(":"), let value = value() else { return nil }
            members.append((key, value))
            skipSpace()
            if take("}") { return .object(members) }
            guard take(",") else { return nil }
        }
    }

    private mutating func array() -> JSONTree? {
        var items: [JSONTree] = []
        skipSpace()
        if take("]") { return .array(items) }
        while true {
            guard let item = value() else { return nil }
            items.append(item)
            skipSpace()
            if take("]") { return .array(items) }
            guard take(",") else { return nil }
        }
    }

    private mutating func take(_ c: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(ascii: c) else { return false }
        position += 1
        return true
    }

    /// A string from its opening quote; its escapes decoded, each decoded byte mapped to the raw offset
    /// (relative to the contents) its escape or byte starts at.
    private mutating func string() -> JSONTree? {
        guard take("\"") else { return nil }
        let start = position
        var decoded = HTMLEntities.Decoded()
        while position < bytes.count {
            let c = bytes[position]
            if c == UInt8(ascii: "\"") {
                decoded.sources.append(position - start)
                position += 1
                return .string(decoded: decoded, contents: start..<position - 1)
            }
            guard c >= 0x20 else { return nil }
            let from = position - start
            guard let text = c == UInt8(ascii: "\\") ? escape() : { position += 1; return [c] }() else { return nil }
            for byte in text {
                decoded.bytes.append(byte)
                decoded.sources.append(from)
            }
        }
        return nil
    }

    /// The bytes an escape stands for (a `\u` surrogate pair together); nil when it is not one.
    private mutating func escape() -> [UInt8]? {
        guard position + 1 < bytes.count else { return nil }
        let letter = bytes[position + 1]
        position += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return [letter]
        case UInt8(ascii: "b"): return [0x08]
        case UInt8(ascii: "f"): return [0x0C]
        case UInt8(ascii: "n"): return [0x0A]
        case UInt8(ascii: "r"): return [0x0D]
        case UInt8(ascii: "t"): return [0x09]
        case UInt8(ascii: "u"):
            guard var value = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(value), bytes[position...].starts(with: [0x5C, 0x75]) {
                position += 2
                guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                value = 0x10000 + (value - 0xD800) << 10 + (low - 0xDC00)
            }
            // A lone surrogate is valid JSON but no character: U+FFFD, as decoders read it.
            return Array(String(Unicode.Scalar(value) ?? "\u{FFFD}").utf8)
        default: return nil
        }
    }

    private mutating func hex4() -> UInt32? {
        // Four hex digits exactly (UInt32(_:radix:) would also take a sign: `\u+abc`).
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[position..<position + 4] {
            guard let digit = byte.hexValue else { return nil }
            value = value << 4 | UInt32(digit)
        }
        position += 4
        return value
    }

    private mutating func literal() -> JSONTree? {
        let start = position
        while position < bytes.count, bytes[position].isJSONLiteralByte { position += 1 }
        return position > start ? .other : nil
    }
}

private extension UInt8 {
    var isJSONLiteralByte: Bool {
        (0x30...0x39).contains(self) || (0x61...0x7A).contains(self) || self == 0x2B || self == 0x2D || self == 0x2E || self == 0x45
    }
}
