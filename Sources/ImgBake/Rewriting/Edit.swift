/// Replace the bytes in `range` with `replacement`. Pages are rewritten only by edits, so every byte
/// outside them is kept exactly (BOM, CRLF, entities, quoting).
public struct Edit: Sendable, Hashable {
    public var range: Range<Int>
    public var replacement: [UInt8]

    public init(_ range: Range<Int>, _ replacement: [UInt8]) {
        self.range = range
        self.replacement = replacement
    }

    public init(_ range: Range<Int>, _ replacement: String) {
        self.init(range, Array(replacement.utf8))
    }
}

package enum Splicer {
    package struct OverlapError: Error, CustomStringConvertible {
        let first: Range<Int>
        let second: Range<Int>
        package var description: String { "overlapping edits \(first) and \(second)" }
    }

    /// Applies non-overlapping edits (in any order) back to front.
    package static func apply(_ edits: [Edit], to bytes: [UInt8]) throws(OverlapError) -> [UInt8] {
        let sorted = edits.sorted { $0.range.lowerBound < $1.range.lowerBound }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.range.upperBound > b.range.lowerBound {
            throw OverlapError(first: a.range, second: b.range)
        }
        var output = bytes
        for edit in sorted.reversed() {
            output.replaceSubrange(edit.range, with: edit.replacement)
        }
        return output
    }
}

/// How replacement text is written into the syntax it replaces.
package enum ReplacementText {
    /// A URL written where `syntax` says it is.
    package static func value(_ url: String, in syntax: ImageReference.Syntax) -> String {
        switch syntax {
        case .attribute(let quote): attribute(url, quote: quote)
        case .markdownDestination(let angle): markdownDestination(url, angle: angle)
        case .markdownInlinedReference(let title): markdownInlinedReference(url, title: title)
        case .css(let quote): css(url, quote: quote)
        case .cssInAttribute(let quote, let attributeQuote): attribute(css(url, quote: quote), quote: attributeQuote)
        case .cssCandidate(let attributeQuote): cssImageSetCandidate(url, resolution: nil, type: nil, inAttribute: attributeQuote)
        case .yaml(let quote): yaml(url, quote: quote)
        case .toml(let quote): quote == UInt8(ascii: "'") && !url.contains("'") ? url : backslashed(url, quote: "\"")
        case .json: backslashed(url, quote: "\"")
        case .xml(let quote): xml(url, quote: quote)
        case .escapedHTML(let quote): xml(attribute(url, quote: quote), quote: nil)
        case .htmlInJSON(let quote): backslashed(attribute(url, quote: quote), quote: "\"")
        }
    }

    /// Inside `url(...)`: quoted, a backslash before the quote and backslashes; unquoted, before
    /// everything CSS would end the URL at.
    static func css(_ value: String, quote: UInt8?) -> String {
        var out = ""
        for c in value {
            let special: Bool
            if let quote { special = c == "\\" || c == Character(UnicodeScalar(quote)) || c == "\n" } else {
                special = c == "\\" || c == "(" || c == ")" || c == "\"" || c == "'" || c.isWhitespace
            }
            if special { out += "\\" }
            out.append(c)
        }
        return out
    }

    /// One `image-set()` candidate: `url("...") 2x type("image/webp")` (with `'` inside a `"`-quoted
    /// `style` attribute).
    static func cssImageSetCandidate(_ url: String, resolution: String?, type: String?, inAttribute attributeQuote: UInt8? = nil) -> String {
        let quote: UInt8 = attributeQuote == UInt8(ascii: "\"") ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        let q = String(UnicodeScalar(quote))
        let text = "url(" + q + css(url, quote: quote) + q + ")" + (resolution.map { " " + $0 } ?? "") + (type.map { " type(" + q + $0 + q + ")" } ?? "")
        return attributeQuote == nil ? text : xml(text, quote: attributeQuote)
    }

    /// A YAML scalar: `''` for `'` in single quotes, backslashes in double quotes; a plain scalar that
    /// would not stay one is written double-quoted.
    static func yaml(_ value: String, quote: UInt8?) -> String {
        switch quote {
        case UInt8(ascii: "'"): return value.replacingAll("'", with: "''")
        case UInt8(ascii: "\""): return backslashed(value, quote: "\"")
        default:
            let plainSafe = !value.contains(": ") && !value.contains(" #") && !value.hasSuffix(":")
                && !(value.first.map { "-?:,[]{}#&*!|>'\"%@`".contains($0) } ?? true)
            return plainSafe ? value : "\"" + backslashed(value, quote: "\"") + "\""
        }
    }

    /// `\` and the quote behind a backslash (JSON, TOML basic strings, YAML double quotes).
    static func backslashed(_ value: String, quote: Character) -> String {
        var out = ""
        for c in value {
            if c == "\\" || c == quote { out += "\\" }
            out.append(c)
        }
        return out
    }

    /// XML text or an attribute value with its quote.
    static func xml(_ value: String, quote: UInt8?) -> String {
        var out = ""
        for c in value {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case "\"" where quote == UInt8(ascii: "\""): out += "&quot;"
            case "'" where quote == UInt8(ascii: "'"): out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A URL as an attribute value (or part of one) with the given quote; an unquoted value that
    /// could not stay unquoted gets double quotes.
    static func attribute(_ value: String, quote: UInt8?) -> String {
        switch quote {
        case UInt8(ascii: "\""): return escape(value, quote: "\"", as: "&quot;")
        case UInt8(ascii: "'"): return escape(value, quote: "'", as: "&#39;")
        default:
            let unsafe: Set<Character> = [" ", "\t", "\n", "\r", "\u{0C}", "\"", "'", "=", "<", ">", "`"]
            if value.isEmpty || value.contains(where: unsafe.contains) {
                return "\"" + escape(value, quote: "\"", as: "&quot;") + "\""
            }
            return escape(value, quote: nil, as: "")
        }
    }

    /// A URL as a Markdown link destination: angle brackets when it has spaces or unbalanced parens.
    static func markdownDestination(_ value: String, angle: Bool) -> String {
        let needsAngle = value.contains { $0 == " " || $0 == "(" || $0 == ")" || $0 == "<" || $0 == ">" }
        let escaped = value.replacingAll("<", with: "\\<").replacingAll(">", with: "\\>")
        if angle { return escaped }
        return needsAngle ? "<\(escaped)>" : value
    }

    /// `](url "title")`, ending a reference-style image's description. In the title, `&` is written
    /// `&amp;` (cmark-gfm decodes references before escapes, so `\\&` would not keep `&amp;` as it is),
    /// line endings as references (a blank line would end the paragraph), other ASCII punctuation
    /// behind a backslash (a `|` would split a table cell).
    static func markdownInlinedReference(_ value: String, title: String?) -> String {
        var text = "](" + markdownDestination(value, angle: false)
        if let title {
            text += " \""
            for c in title.unicodeScalars {
                switch c {
                case "&": text += "&amp;"
                case "\n": text += "&#10;"
                case "\r": text += "&#13;"
                case _ where c.isASCII && UInt8(c.value).isASCIIPunctuation: text += "\\" + String(c)
                default: text.unicodeScalars.append(c)
                }
            }
            text += "\""
        }
        return text + ")"
    }

    private static func escape(_ value: String, quote: Character?, as entity: String) -> String {
        var out = ""
        for c in value {
            if c == "&" { out += "&amp;" } else if c == quote { out += entity } else { out.append(c) }
        }
        return out
    }
}
