/// Character references in attribute values. Decoding follows the HTML tokenizer for numeric
/// references and the named references that occur in URLs in practice, and keeps track of where each
/// decoded byte came from, so that a range of the decoded value can be rewritten in the raw bytes.
/// Callers compare the result with the HTML parser's value to notice a name this table lacks.
/// Encoding escapes what an attribute value needs.
package enum HTMLEntities {
    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}",
        "comma": ",", "period": ".", "colon": ":", "semi": ";", "sol": "/", "quest": "?", "equals": "=",
        "num": "#", "percnt": "%", "plus": "+", "lpar": "(", "rpar": ")", "Tab": "\t", "NewLine": "\n",
    ]
    /// Names that are references also without their `;` (the legacy ones, of those above).
    private static let legacy: Set<String> = ["amp", "lt", "gt", "quot", "nbsp"]

    /// Numeric references to C1 controls mean the windows-1252 character of that byte.
    private static let windows1252: [UInt32: UInt32] = [
        0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
        0x88: 0x02C6, 0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018,
        0x92: 0x2019, 0x93: 0x201C, 0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC,
        0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A, 0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178,
    ]

    /// A decoded attribute value and, for each of its bytes, where its source starts in the raw bytes.
    package struct Decoded {
        var bytes: [UInt8] = []
        /// `sources[i]`: offset in the raw bytes of what decoded byte `i` came from; one more entry, the
        /// raw length, closes the last one.
        var sources: [Int] = []

        /// The raw bytes that a range of decoded bytes (whole characters) came from.
        func rawRange(of decoded: Range<Int>) -> Range<Int> { sources[decoded.lowerBound]..<sources[decoded.upperBound] }

        package var string: String { String(decoding: bytes, as: UTF8.self) }

        fileprivate mutating func append(_ decoded: some Sequence<UInt8>, from source: Int) {
            for byte in decoded {
                bytes.append(byte)
                sources.append(source)
            }
        }
    }

    /// Decodes an attribute value as written (without its quotes): character references, and line
    /// endings normalised to LF as the tokenizer's input stream does.
    package static func decodeAttribute(_ raw: some Collection<UInt8>) -> Decoded {
        let raw = Array(raw)
        var out = Decoded()
        var i = 0
        while i < raw.count {
            let c = raw[i]
            if c == UInt8(ascii: "&"), let (text, end) = reference(in: raw, at: i) {
                out.append(text.utf8, from: i)
                i = end
            } else if c == 0x0D {
                out.append([0x0A], from: i)
                i += i + 1 < raw.count && raw[i + 1] == 0x0A ? 2 : 1
            } else {
                out.append([c], from: i)
                i += 1
            }
        }
        out.sources.append(raw.count)
        return out
    }

    /// The text of the reference starting with the `&` at `start`, and where it ends.
    private static func reference(in raw: [UInt8], at start: Int) -> (String, Int)? {
        var i = start + 1
        if i < raw.count, raw[i] == UInt8(ascii: "#") {
            i += 1
            let hex = i < raw.count && raw[i] | 0x20 == UInt8(ascii: "x")
            if hex { i += 1 }
            let digitsStart = i
            var value: UInt32 = 0
            while i < raw.count, let digit = hex ? raw[i].hexValue : (raw[i].isASCIIDigit ? raw[i] - 0x30 : nil) {
                value = min(value * (hex ? 16 : 10) + UInt32(digit), 0x110000)
                i += 1
            }
            guard i > digitsStart else { return nil }
            if i < raw.count, raw[i] == UInt8(ascii: ";") { i += 1 }
            if let replacement = windows1252[value] { value = replacement }
            let scalar = value == 0 ? nil : Unicode.Scalar(value) // nil also for surrogates and > U+10FFFF
            return (String(Character(scalar ?? "\u{FFFD}")), i)
        }
        while i < raw.count, raw[i].isASCIILetter || raw[i].isASCIIDigit { i += 1 }
        let name = String(decoding: raw[start + 1..<i], as: UTF8.self)
        guard let text = named[name] else { return nil }
        if i < raw.count, raw[i] == UInt8(ascii: ";") { return (text, i + 1) }
        // Without `;`, only a legacy name, and in an attribute not before `=` (`?a=1&amp=2`).
        guard legacy.contains(name), i == raw.count || raw[i] != UInt8(ascii: "=") else { return nil }
        return (text, i)
    }

    /// Escapes `&`, `<`, `>` and both quotes, so the result is safe in any quoted attribute value.
    static func escapeAttribute(_ text: String) -> String {
        // Most values (file names, URLs, widths) have none of them: returned as they are.
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x22 || $0 == 0x27 || $0 == 0x3C || $0 == 0x3E }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(c)
            }
        }
        return out
    }
}
