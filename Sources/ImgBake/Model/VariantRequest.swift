/// The widths and formats one reference asks for (the configuration's, or an element's
/// `data-imgbake-widths` / `data-imgbake-formats`), before they are capped at the source's width.
/// Requests for one image are merged, so its source is decoded once per build whatever they are.
public struct VariantRequest: Hashable, Sendable {
    /// Sorted, unique, positive.
    public private(set) var widths: [Int]
    /// Best first, unique.
    public private(set) var formats: [OutputFormat]
    /// The widths asked for in the source's own format (the `<img>` fallback), when not every width: an
    /// `<img>` in a `<picture>` with a modern source needs one file in the original format, for the
    /// browsers that take no `<source>`. Nil: every width. Sorted, unique, among `widths`.
    public private(set) var fallbackWidths: [Int]?
    /// Heights in device pixels the image is shown at, where its page sets its height and its width
    /// follows its proportions (a logo styled `height: 40px`): each made at the width that gives that
    /// height, known once the source's shape is (`VariantPlan.widths`). Sorted, unique.
    public private(set) var displayHeights: [Int]
    /// The widths asked for in WebP, when not every width: beside AVIF in a `<picture>`, WebP is for the
    /// browsers that take no AVIF source, and one file serves them, as one file in the source's format
    /// serves those that take no WebP either. Nil: every width. Sorted, unique, among `widths`.
    public private(set) var webpWidths: [Int]?

    public init(widths: [Int], formats: [OutputFormat], fallbackWidths: [Int]? = nil, displayHeights: [Int] = [], webpWidths: [Int]? = nil) {
        self.widths = Array(Set(widths.filter { $0 > 0 })).sorted()
        var unique: [OutputFormat] = []
        for format in formats where !unique.contains(format) { unique.append(format) }
        self.formats = unique
        self.displayHeights = Array(Set(displayHeights.filter { $0 > 0 })).sorted()
        func some(_ given: [Int]?, of all: [Int]) -> [Int]? {
            let kept = given.map { Array(Set($0).intersection(all)).sorted() }
            return kept == all || kept?.isEmpty == true ? nil : kept
        }
        self.fallbackWidths = some(fallbackWidths, of: self.widths)
        self.webpWidths = some(webpWidths, of: self.widths)
    }

    /// The widths asked for in the source's own format.
    public var fallback: [Int] { fallbackWidths ?? widths }

    /// The widths asked for in WebP.
    public var webp: [Int] { webpWidths ?? widths }

    /// The same, with the fallback at one width only: the widest of `widths` up to `width`, or the
    /// narrowest when all are wider; and WebP at that width too where AVIF or JPEG XL is asked for.
    public func withOneFallback(at width: Int) -> VariantRequest {
        let chosen = widths.last { $0 <= width } ?? widths.first
        return VariantRequest(widths: widths, formats: formats, fallbackWidths: chosen.map { [$0] }, displayHeights: displayHeights,
                              webpWidths: Self.aboveWebP(formats) ? chosen.map { [$0] } : nil)
    }

    /// The same in `formats` only, WebP at every width when it is the best of them.
    public func only(_ kept: [OutputFormat]) -> VariantRequest {
        let formats = formats.filter(kept.contains)
        return VariantRequest(widths: widths, formats: formats, fallbackWidths: fallbackWidths, displayHeights: displayHeights,
                              webpWidths: Self.aboveWebP(formats) ? webpWidths : nil)
    }

    /// Whether `formats` has one better than WebP (AVIF, JPEG XL): then WebP is for the browsers without it.
    static func aboveWebP(_ formats: [OutputFormat]) -> Bool { formats.contains(.avif) || formats.contains(.jxl) }

    /// What an image given a `<picture>` asks for: the fallback at one width (`oneFallbackAt`, the
    /// setting's), or every width when that is nil.
    public func inPicture(oneFallbackAt width: Int?) -> VariantRequest {
        width.map(withOneFallback(at:)) ?? self
    }

    /// What one reference that is replaced by a single file needs: the widest width, in the source's
    /// own format.
    public var widestFallback: VariantRequest {
        VariantRequest(widths: widths.last.map { [$0] } ?? [], formats: [.original], displayHeights: widths.isEmpty ? Array(displayHeights.suffix(1)) : [])
    }

    /// For an image shown `width` CSS pixels wide: the widths up to three times that (screens of up to
    /// three device pixels a CSS pixel), and the next one when it is within four times (about 3×, from
    /// the widths there are); an image shown narrower than a third of the narrowest width gets its own
    /// widths at one, two and three device pixels a CSS pixel (a 91 px logo does not take a 480 px file).
    public func forDisplay(at width: Int) -> VariantRequest {
        guard let narrowest = widths.first, narrowest <= 3 * width else {
            return VariantRequest(widths: [width, 2 * width, 3 * width], formats: formats)
        }
        var kept = widths.filter { $0 <= 3 * width }
        if let next = widths.first(where: { $0 > 3 * width }), next <= 4 * width { kept.append(next) }
        return VariantRequest(widths: kept, formats: formats, fallbackWidths: fallbackWidths, webpWidths: webpWidths)
    }

    /// For an image shown `height` CSS pixels high, its width following its proportions: that height
    /// at one, two and three device pixels a CSS pixel.
    public func forDisplay(atHeight height: Int) -> VariantRequest {
        VariantRequest(widths: [], formats: formats, displayHeights: [height, 2 * height, 3 * height])
    }

    /// Whether what this asks for includes all `other` asks for.
    public func covers(_ other: VariantRequest) -> Bool {
        Set(other.widths).isSubset(of: widths) && Set(other.formats).isSubset(of: formats) && Set(other.fallback).isSubset(of: fallback)
            && Set(other.displayHeights).isSubset(of: displayHeights) && Set(other.webp).isSubset(of: webp)
    }

    /// Both requests' widths and formats, formats in the canonical order (JPEG XL, AVIF, WebP, original).
    public func union(_ other: VariantRequest) -> VariantRequest {
        VariantRequest(widths: widths + other.widths,
                       formats: OutputFormat.allCases.filter { formats.contains($0) || other.formats.contains($0) },
                       fallbackWidths: fallback + other.fallback, displayHeights: displayHeights + other.displayHeights,
                       webpWidths: webp + other.webp)
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
                return .failure(OverrideError(attribute: "data-imgbake-formats", value: formats, expected: "formats among jxl, avif, webp, original"))
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
    /// JPEG XL, through libjxl: offered in a `<picture>` only.
    case jxl
    case avif, webp
    /// The source's own format (JPEG stays JPEG, PNG stays PNG, GIF stays GIF).
    case original
}
