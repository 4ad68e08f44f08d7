/// The intrinsic size an SVG declares on its root element: `width`/`height` in pixels (or unitless),
/// else the `viewBox` size. SVGs are copied through, never rasterised; the size is for `width`,
/// `height` and the file name.
enum SVGSize {
    static func parse(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        let head = Array(bytes.prefix(8192))
        guard let start = head.occurrences(of: Array("<svg".utf8), in: 0..<head.count).first,
              let end = head[start...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let attributes = parseAttributes(String(decoding: head[(start + 4)..<end], as: UTF8.self))
        if let width = attributes["width"].flatMap(pixels), let height = attributes["height"].flatMap(pixels) {
            return (width, height)
        }
        let box = (attributes["viewbox"] ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
        guard box.count == 4, box[2] > 0, box[3] > 0 else { return nil }
        return (Int(box[2].rounded()), Int(box[3].rounded()))
    }

    /// `120`, `120.5`, `120px`; nil for other units and percentages.
    private static func pixels(_ text: String) -> Int? {
        var value = Substring(text.trimmingSpaces())
        if value.hasSuffix("px") { value = value.dropLast(2) }
        guard let number = Double(value), number > 0 else { return nil }
        return Int(number.rounded())
    }

    private static func parseAttributes(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(text)
        while let eq = rest.firstIndex(of: "=") {
            let name = rest[..<eq].split(whereSeparator: { $0.isWhitespace }).last.map { $0.lowercased() } ?? ""
            var after = rest[rest.index(after: eq)...].drop { $0.isWhitespace }
            guard let quote = after.first, quote == "\"" || quote == "'" else { break }
            after = after.dropFirst()
            guard let close = after.firstIndex(of: quote) else { break }
            if result[name] == nil { result[name] = String(after[..<close]) }
            rest = after[after.index(after: close)...]
        }
        return result
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
