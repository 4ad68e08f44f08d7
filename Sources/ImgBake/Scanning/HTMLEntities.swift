/// Character references in attribute values. Decoding covers the references that occur in URLs in
/// practice; anything else is left as written, and callers compare with the parser's decoded value
/// to detect that case. Encoding escapes what an attribute value needs.
enum HTMLEntities {
    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}",
        "comma": ",", "period": ".", "colon": ":", "semi": ";", "sol": "/", "quest": "?", "equals": "=",
        "num": "#", "percnt": "%", "plus": "+", "lpar": "(", "rpar": ")", "Tab": "\t", "NewLine": "\n",
    ]

    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            let nameEnd = after.firstIndex { !($0.isLetter || $0.isNumber || $0 == "#") } ?? after.endIndex
            let name = after[..<nameEnd]
            var replacement: String?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                replacement = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
            } else if name.hasPrefix("#") {
                replacement = UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
            } else {
                replacement = named[String(name)]
            }
            if let replacement, !name.isEmpty {
                out += replacement
                rest = after[nameEnd...]
                if rest.first == ";" { rest = rest.dropFirst() }
            } else {
                out += "&"
                rest = after
            }
        }
        return out + rest
    }

    /// Escapes `&`, `<`, `>` and both quotes, so the result is safe in any quoted attribute value.
    static func escapeAttribute(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
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
