/// The widths and formats one reference asks for (the configuration's, or an element's
/// `data-imgbake-widths` / `data-imgbake-formats`), before they are capped at the source's width.
/// Requests for one image are merged, so its source is decoded once per build whatever they are.
public struct VariantRequest: Hashable, Sendable {
    /// Sorted, unique, positive.
    public private(set) var widths: [Int]
    /// Best first, unique.
    public private(set) var formats: [OutputFormat]

    public init(widths: [Int], formats: [OutputFormat]) {
        self.widths = Array(Set(widths.filter { $0 > 0 })).sorted()
        var unique: [OutputFormat] = []
        for format in formats where !unique.contains(format) { unique.append(format) }
        self.formats = unique
    }

    /// For an image shown `width` CSS pixels wide: the widths up to three times that (screens of up to
    /// three device pixels a CSS pixel), and the next one when it is within four times (about 3×, from
    /// the widths there are); at least the narrowest.
    public func forDisplay(at width: Int) -> VariantRequest {
        var kept = widths.filter { $0 <= 3 * width }
        if let next = widths.first(where: { $0 > 3 * width }), next <= 4 * width || kept.isEmpty { kept.append(next) }
        return VariantRequest(widths: kept, formats: formats)
    }

    /// Whether what this asks for includes all `other` asks for.
    public func covers(_ other: VariantRequest) -> Bool {
        Set(other.widths).isSubset(of: widths) && Set(other.formats).isSubset(of: formats)
    }

    /// Both requests' widths and formats, formats in the canonical order (AVIF, WebP, original).
    public func union(_ other: VariantRequest) -> VariantRequest {
        VariantRequest(widths: widths + other.widths,
                       formats: OutputFormat.allCases.filter { formats.contains($0) || other.formats.contains($0) })
    }

    /// `data-imgbake-widths="400, 800"` and `data-imgbake-formats="avif webp original"` over `base`;
    /// nil values keep the base's. Returns an error message for a bad value.
    public static func parse(widths: String?, formats: String?, over base: VariantRequest) -> Result<VariantRequest, OverrideError> {
        var result = base
        if let widths {
            let parts = widths.split(whereSeparator: { $0 == "," || $0 == " " })
            let numbers = parts.compactMap { Int($0) }
            guard !parts.isEmpty, numbers.count == parts.count, numbers.allSatisfy({ (1...16384).contains($0) }) else {
                return .failure(OverrideError(attribute: "data-imgbake-widths", value: widths, expected: "widths in pixels, such as \"400, 800\""))
            }
            result = VariantRequest(widths: numbers, formats: result.formats)
        }
        if let formats {
            let parts = formats.split(whereSeparator: { $0 == "," || $0 == " " }).map { $0.lowercased() }
            let values = parts.compactMap(OutputFormat.init(rawValue:))
            guard !parts.isEmpty, values.count == parts.count else {
                return .failure(OverrideError(attribute: "data-imgbake-formats", value: formats, expected: "formats among avif, webp, original"))
            }
            result = VariantRequest(widths: result.widths, formats: values)
        }
        return .success(result)
    }

    public struct OverrideError: Error, Sendable, Equatable, CustomStringConvertible {
        public var attribute: String
        public var value: String
        public var expected: String
        public var description: String { "\(attribute)=\"\(value)\": expected \(expected); using the configured ones" }
    }
}

/// An output format of the variant set, in the order of preference.
public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
    case avif, webp
    /// The source's own format (JPEG stays JPEG, PNG stays PNG, GIF stays GIF).
    case original
}
