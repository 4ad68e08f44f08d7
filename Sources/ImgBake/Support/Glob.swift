import Glibc

/// A path pattern as `.gitignore` and most build tools write them: `*` and `?` and `[…]` within one
/// path segment, `**` for any number of segments; a pattern without a `/` matches a name in any
/// folder. Matched against site-relative paths (`_static/css/theme.css`).
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    private let segments: [String]

    public init?(_ pattern: String) {
        var text = pattern.hasPrefix("/") ? String(pattern.dropFirst()) : pattern
        if text.hasSuffix("/") { text += "**" }
        guard !text.isEmpty else { return nil }
        self.pattern = pattern
        // No slash: a name anywhere (`*.draft.html`, `Thumbs.db`).
        segments = text.contains("/") || pattern.hasPrefix("/") ? text.split(separator: "/").map(String.init) : ["**", text]
    }

    public var description: String { pattern }

    /// One name against a one-segment pattern (`utm_*`), as `fnmatch` reads it.
    static func matches(_ pattern: String, _ name: String) -> Bool { fnmatch(pattern, name, 0) == 0 }

    public func matches(_ path: String) -> Bool {
        Self.match(segments[...], path.split(separator: "/").map(String.init)[...])
    }

    private static func match(_ pattern: ArraySlice<String>, _ path: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        if first == "**" {
            // Zero or more segments.
            for skip in 0...path.count where match(pattern.dropFirst(), path.dropFirst(skip)) { return true }
            return false
        }
        guard let segment = path.first, fnmatch(first, segment, 0) == 0 else { return false }
        return match(pattern.dropFirst(), path.dropFirst())
    }
}
