/// The rules of a stylesheet as the cascade sees them: selectors, declarations, whether they apply on
/// every screen (`@media` with features, `@supports` and `@container` make a rule conditional;
/// `@media print` drops it), and their cascade layer. Nested rules (CSS Nesting) are flattened with
/// `&` standing for their parent's selectors. `@import`s are listed for the page's cascade to follow.
struct StyleSheet: Sendable {
    struct Rule: Sendable {
        var selectors: [ComplexSelector]
        var declarations: [Declaration]
        /// Applies on some screens, or in some browsers, only.
        var conditional: Bool
        /// The cascade layer (`a.b` when nested); nil outside any layer.
        var layer: String?
    }

    struct Declaration: Sendable, Hashable {
        /// Lower-cased (custom properties as written).
        var property: String
        /// The value's text, lower-cased, white space collapsed, `!important` taken off.
        var value: String
        var important: Bool
    }

    struct Import: Sendable, Hashable {
        var url: String
        var conditional: Bool
        var layer: String?
    }

    var rules: [Rule] = []
    var imports: [Import] = []
    /// Every layer name, in the order it first appears (`@layer a, b;` included).
    var layers: [String] = []

    /// A stylesheet's text.
    static func parse(_ bytes: [UInt8]) -> StyleSheet {
        var sheet = StyleSheet()
        var parser = RuleParser(tokens: CSSSyntax.tokens(bytes)[...])
        var none: [Declaration]?
        parser.contents(into: &sheet, context: Context(), topLevel: true, declarations: &none)
        return sheet
    }

    /// The declarations of a `style` attribute.
    static func declarations(_ text: String) -> [Declaration] {
        RuleParser.declarations(CSSSyntax.tokens(Array(text.utf8))[...])
    }

    /// Where a rule stands: inside which conditions, layer and parent rule.
    struct Context {
        var conditional = false
        var layer: String?
        var parent: [ComplexSelector]?
        var anonymousLayers = 0
    }
}

/// What a media query list says about a screen: every screen, some, or none (`print`).
enum MediaApplies: Sendable {
    case always, sometimes, never

    /// `screen`, `all` or nothing: always; `print` alone: never; anything with a feature
    /// (`(min-width: 40em)`), `not` or `only`: sometimes.
    static func of(_ tokens: ArraySlice<CSSSyntax.Token>) -> MediaApplies {
        var result = MediaApplies.never
        let queries = tokens.split(separator: .comma)
        if queries.isEmpty { return .always }
        for query in queries {
            let words = query.filter { $0 != .whitespace }
            switch words.first {
            case nil: return .always
            case .ident(let type)? where words.count == 1:
                switch type.lowercased() {
                case "all", "screen": return .always
                case "print", "speech", "tty", "tv", "projection", "handheld", "braille", "embossed", "aural": continue
                default: result = .sometimes
                }
            default: result = .sometimes
            }
        }
        return result
    }

    /// The `media` attribute of a `<link>` or `<style>`; nil (absent) applies always.
    static func ofAttribute(_ value: String?) -> MediaApplies {
        guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return .always }
        return of(CSSSyntax.tokens(Array(value.utf8))[...])
    }
}

private struct RuleParser {
    var tokens: ArraySlice<CSSSyntax.Token>

    /// A list of rules (a sheet, or the block of a conditional at-rule), and in a rule's block the
    /// declarations too (`declarations` not nil): they belong to the parent rule.
    mutating func contents(into sheet: inout StyleSheet, context: StyleSheet.Context, topLevel: Bool,
                           declarations: inout [StyleSheet.Declaration]?) {
        var context = context
        while let token = tokens.first {
            switch token {
            case .whitespace, .semicolon, .other:
                tokens.removeFirst()
            case .closeCurly:
                tokens.removeFirst()
                if !topLevel { return }
            case .atKeyword(let name):
                tokens.removeFirst()
                atRule(name, into: &sheet, context: &context)
            default:
                if declarations != nil, isDeclarationStart() {
                    if let declaration = declaration() { declarations?.append(declaration) }
                    continue
                }
                qualifiedRule(into: &sheet, context: context)
            }
        }
    }

    /// In a rule's block: an identifier followed by `:` starts a declaration (anything else a nested rule).
    private func isDeclarationStart() -> Bool {
        guard case .ident(let name)? = tokens.first else { return false }
        var rest = tokens.dropFirst()
        while rest.first == .whitespace { rest.removeFirst() }
        guard rest.first == .colon else { return false }
        if name.hasPrefix("--") { return true }
        // `a:hover { … }` is a nested rule: a `{` before the next `;` or `}` says so.
        for token in rest {
            switch token {
            case .semicolon, .closeCurly: return true
            case .openCurly: return false
            default: continue
            }
        }
        return true
    }

    /// `property: value [!important]` up to `;` or the block's end.
    private mutating func declaration() -> StyleSheet.Declaration? {
        let item = self.item(until: [.semicolon])
        if tokens.first == .semicolon { tokens.removeFirst() }
        return Self.declaration(item)
    }

    static func declaration(_ item: ArraySlice<CSSSyntax.Token>) -> StyleSheet.Declaration? {
        var item = item
        while item.first == .whitespace { item.removeFirst() }
        guard case .ident(let name)? = item.popFirst() else { return nil }
        while item.first == .whitespace { item.removeFirst() }
        guard item.popFirst() == .colon else { return nil }
        var value = Array(item)
        while value.last == .whitespace { value.removeLast() }
        var important = false
        if case .ident(let word)? = value.last, word.lowercased() == "important" {
            var rest = value.dropLast()
            while rest.last == .whitespace { rest.removeLast() }
            if rest.last == .delim(UInt8(ascii: "!")) {
                important = true
                rest.removeLast()
                value = Array(rest)
            }
        }
        let property = name.hasPrefix("--") ? name : name.lowercased()
        return StyleSheet.Declaration(property: property, value: text(value[...]), important: important)
    }

    static func declarations(_ tokens: ArraySlice<CSSSyntax.Token>) -> [StyleSheet.Declaration] {
        tokens.split(separator: .semicolon).compactMap(declaration)
    }

    /// The tokens of a value as text: lower-cased, one space for any white space.
    static func text(_ tokens: ArraySlice<CSSSyntax.Token>) -> String {
        var text = ""
        var space = false
        for token in tokens {
            if token == .whitespace { space = !text.isEmpty; continue }
            if space { text += " "; space = false }
            switch token {
            case .ident(let name): text += name.lowercased()
            case .function(let name): text += name + "("
            case .atKeyword(let name): text += "@" + name
            case .hash(let name, _): text += "#" + name.lowercased()
            case .string(let value): text += "\"" + value + "\""
            // URLs are left out: imgbake rewrites them, and what a rule does to a box never depends on one.
            case .url: text += "url()"
            case .number(let value): text += number(value)
            case .percentage(let value): text += number(value) + "%"
            case .dimension(let value, let unit): text += number(value) + unit
            case .delim(let byte): text.append(Character(Unicode.Scalar(byte)))
            case .colon: text += ":"
            case .semicolon: text += ";"
            case .comma: text += ","
            case .openSquare: text += "["
            case .closeSquare: text += "]"
            case .openParen: text += "("
            case .closeParen: text += ")"
            case .openCurly: text += "{"
            case .closeCurly: text += "}"
            case .whitespace, .other: break
            }
        }
        return text
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// Tokens up to (not including) one of `ends` at the top level, or the enclosing block's `}`.
    private mutating func item(until ends: [CSSSyntax.Token]) -> ArraySlice<CSSSyntax.Token> {
        let start = tokens.startIndex
        var depth = 0
        var index = start
        while index < tokens.endIndex {
            let token = tokens[index]
            if depth == 0 && (ends.contains(token) || token == .closeCurly) { break }
            switch token {
            case .openCurly, .openParen, .openSquare, .function: depth += 1
            case .closeCurly, .closeParen, .closeSquare: depth = max(0, depth - 1)
            default: break
            }
            index += 1
        }
        let item = tokens[start..<index]
        tokens = tokens[index...]
        return item
    }

    /// A prelude up to `{` or `;`, then the block if there is one: the block's tokens are consumed by
    /// the caller.
    private mutating func prelude() -> (ArraySlice<CSSSyntax.Token>, hasBlock: Bool) {
        let prelude = item(until: [.openCurly, .semicolon])
        switch tokens.first {
        case .openCurly?: tokens.removeFirst(); return (prelude, true)
        case .semicolon?: tokens.removeFirst(); return (prelude, false)
        default: return (prelude, false)
        }
    }

    private mutating func skipBlock() {
        var depth = 1
        while let token = tokens.popFirst() {
            switch token {
            case .openCurly: depth += 1
            case .closeCurly: depth -= 1; if depth == 0 { return }
            default: break
            }
        }
    }

    private mutating func qualifiedRule(into sheet: inout StyleSheet, context: StyleSheet.Context) {
        let (prelude, hasBlock) = self.prelude()
        guard hasBlock else { return }
        var selectors = ComplexSelector.parseList(prelude, nested: context.parent != nil)
        if let parent = context.parent, let nested = selectors {
            selectors = nested.map { $0.replacingNesting(with: parent) }
        }
        var declarations: [StyleSheet.Declaration]? = []
        var inner = context
        inner.parent = selectors ?? []
        // The block's own declarations, and its nested rules.
        var nestedSheet = StyleSheet()
        contents(into: &nestedSheet, context: inner, topLevel: false, declarations: &declarations)
        if let selectors, let declarations, !declarations.isEmpty {
            sheet.rules.append(StyleSheet.Rule(selectors: selectors, declarations: declarations, conditional: context.conditional, layer: context.layer))
        }
        // A rule whose selectors a browser drops takes its nested rules with it.
        if selectors != nil { sheet.rules += nestedSheet.rules }
        sheet.layers += nestedSheet.layers.filter { !sheet.layers.contains($0) }
    }

    private mutating func atRule(_ name: String, into sheet: inout StyleSheet, context: inout StyleSheet.Context) {
        let (prelude, hasBlock) = self.prelude()
        switch name {
        case "media", "supports", "container", "scope", "document", "-moz-document", "starting-style":
            guard hasBlock else { return }
            let applies: MediaApplies = name == "media" ? MediaApplies.of(prelude) : .sometimes
            if applies == .never { return skipBlock() }
            var inner = context
            inner.conditional = context.conditional || applies == .sometimes
            blockContents(into: &sheet, context: inner)
        case "layer":
            let names = prelude.split(separator: .comma).map { Self.text($0).replacingOccurrences(of: " ", with: "") }.filter { !$0.isEmpty }
            let outer = context.layer.map { $0 + "." } ?? ""
            let qualified = names.map { outer + $0 }
            if hasBlock {
                var inner = context
                var layer = qualified.first
                if layer == nil {
                    context.anonymousLayers += 1
                    layer = (context.layer.map { $0 + "." } ?? "") + "\u{0}anonymous\(sheet.layers.count)-\(context.anonymousLayers)"
                }
                inner.layer = layer
                if let layer, !sheet.layers.contains(layer) { sheet.layers.append(layer) }
                blockContents(into: &sheet, context: inner)
            } else {
                for layer in qualified where !sheet.layers.contains(layer) { sheet.layers.append(layer) }
            }
        case "import":
            guard !hasBlock else { return skipBlock() }
            var rest = prelude.drop { $0 == .whitespace }
            let url: String
            switch rest.popFirst() {
            case .url(let value)?, .string(let value)?: url = value
            case .function("url")?:
                guard case .string(let value)? = rest.first(where: { $0 != .whitespace }) else { return }
                url = value
                while let token = rest.popFirst(), token != .closeParen {}
            default: return
            }
            var layer: String?
            var media = rest
            if let first = rest.firstIndex(where: { $0 != .whitespace }) {
                switch rest[first] {
                case .ident(let word) where word.lowercased() == "layer":
                    layer = "\u{0}import\(sheet.imports.count)"
                    media = rest[(first + 1)...]
                case .function("layer"):
                    if let close = rest[first...].firstIndex(of: .closeParen) {
                        layer = Self.text(rest[(first + 1)..<close]).replacingOccurrences(of: " ", with: "")
                        media = rest[(close + 1)...]
                    }
                default: break
                }
            }
            // `supports(…)` before the media queries: conditional.
            let supports = media.contains(.function("supports"))
            let applies = supports ? .sometimes : MediaApplies.of(media)
            if applies == .never { return }
            sheet.imports.append(StyleSheet.Import(url: url, conditional: context.conditional || applies == .sometimes, layer: layer))
        default:
            // @font-face, @keyframes, @page, @property, @counter-style, @namespace, @charset…: no element is selected.
            if hasBlock { skipBlock() }
        }
    }

    /// The rules inside a conditional or layer block, then past its `}`.
    private mutating func blockContents(into sheet: inout StyleSheet, context: StyleSheet.Context) {
        if context.parent != nil {
            // Inside a rule: `@media (…) { width: 1px }` holds declarations of the parent's selectors.
            var declarations: [StyleSheet.Declaration]? = []
            var nested = StyleSheet()
            contents(into: &nested, context: context, topLevel: false, declarations: &declarations)
            if let parent = context.parent, !parent.isEmpty, let declarations, !declarations.isEmpty {
                sheet.rules.append(StyleSheet.Rule(selectors: parent, declarations: declarations, conditional: context.conditional, layer: context.layer))
            }
            sheet.rules += nested.rules
            sheet.layers += nested.layers.filter { !sheet.layers.contains($0) }
        } else {
            var none: [StyleSheet.Declaration]?
            contents(into: &sheet, context: context, topLevel: false, declarations: &none)
        }
    }
}

extension ComplexSelector {
    /// `&` as the parent rule's selectors (`:is(parent)`, its specificity the most specific of them).
    func replacingNesting(with parent: [ComplexSelector]) -> ComplexSelector {
        var copy = self
        copy.compounds = compounds.map { compound in
            var compound = compound
            compound.conditions = compound.conditions.map { $0.replacingNesting(with: parent) }
            return compound
        }
        return copy
    }
}

extension SimpleSelector {
    func replacingNesting(with parent: [ComplexSelector]) -> SimpleSelector {
        guard case .pseudo(let pseudo) = self else { return self }
        switch pseudo {
        case .nesting: return .pseudo(.matches(parent, zero: false))
        case .not(let list): return .pseudo(.not(list.map { $0.replacingNesting(with: parent) }))
        case .matches(let list, let zero): return .pseudo(.matches(list.map { $0.replacingNesting(with: parent) }, zero: zero))
        case .has(let list):
            return .pseudo(.has(list.map { RelativeSelector(leading: $0.leading, selector: $0.selector.replacingNesting(with: parent)) }))
        case .nth(let kind, let a, let b, let of?): return .pseudo(.nth(kind, a: a, b: b, of: of.map { $0.replacingNesting(with: parent) }))
        default: return self
        }
    }
}
