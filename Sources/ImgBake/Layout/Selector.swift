/// A CSS selector as Selectors Level 4 writes it: compounds joined by combinators, each compound a type
/// and conditions (ID, class, attribute, pseudo-class). Parsed from a rule's prelude; what a browser
/// would not parse makes the rule one the browser drops too (`parseList` returns nil).
struct ComplexSelector: Sendable, Hashable {
    /// Left to right.
    var compounds: [CompoundSelector]
    /// `combinators[i]` joins `compounds[i]` and `compounds[i + 1]`.
    var combinators: [Combinator]
    /// The rule styles a pseudo-element of the matched element (`::before`), not the element itself.
    var pseudoElement = false

    var subject: CompoundSelector { compounds[compounds.count - 1] }

    var specificity: Specificity {
        compounds.reduce(Specificity()) { $0 + $1.specificity } + Specificity(c: pseudoElement ? 1 : 0)
    }
}

enum Combinator: Sendable, Hashable {
    /// ` `
    case descendant
    /// `>`
    case child
    /// `+`
    case nextSibling
    /// `~`
    case subsequentSibling
}

struct CompoundSelector: Sendable, Hashable {
    /// Lower-cased; nil for any element (`*` or none written).
    var type: String?
    var conditions: [SimpleSelector] = []

    var specificity: Specificity {
        conditions.reduce(Specificity(c: type == nil ? 0 : 1)) { $0 + $1.specificity }
    }
}

indirect enum SimpleSelector: Sendable, Hashable {
    case id(String)
    case className(String)
    /// `[name]`, `[name=value]` and the other operators; `i` for an ASCII case-insensitive value.
    case attribute(name: String, match: AttributeMatch?, caseInsensitive: Bool)
    case pseudo(PseudoClass)

    var specificity: Specificity {
        switch self {
        case .id: return Specificity(a: 1)
        case .className, .attribute: return Specificity(b: 1)
        case .pseudo(let pseudo): return pseudo.specificity
        }
    }
}

enum AttributeMatch: Sendable, Hashable {
    case equals(String), includes(String), dashMatch(String), prefix(String), suffix(String), substring(String)
}

indirect enum PseudoClass: Sendable, Hashable {
    /// `:not()`
    case not([ComplexSelector])
    /// `:is()`, `:matches()`, `:-webkit-any()`; `:where()` with `zero` (no specificity).
    case matches([ComplexSelector], zero: Bool)
    /// `:has()`: relative selectors, each with the combinator it starts with.
    case has([RelativeSelector])
    /// `:nth-child(an+b [of S])`, `:first-child` and the rest (`:first-child` is `nth(.child, 0, 1)`).
    case nth(NthKind, a: Int, b: Int, of: [ComplexSelector]?)
    case root, empty
    /// `:link`, `:any-link`: an `<a>` or `<area>` with `href`.
    case link
    /// `&` in a nested rule: the parent rule's selectors.
    case nesting
    /// The element a `:has()` is evaluated for (its relative selectors start from it); never parsed.
    case anchor
    /// A state the page's markup does not tell (`:hover`, `:checked`, `:focus`) or a pseudo-class
    /// unknown here: it may or may not match.
    case unknown(String)

    var specificity: Specificity {
        switch self {
        case .not(let list), .matches(let list, false): return list.map(\.specificity).max() ?? Specificity()
        case .matches(_, true): return Specificity()
        case .has(let list): return list.map(\.selector.specificity).max() ?? Specificity()
        case .nth(_, _, _, let of?): return Specificity(b: 1) + (of.map(\.specificity).max() ?? Specificity())
        // `&` counts as its parent's selectors would; the parent's own are added where it is expanded.
        case .nesting: return Specificity()
        default: return Specificity(b: 1)
        }
    }
}

enum NthKind: Sendable, Hashable { case child, lastChild, ofType, lastOfType }

struct RelativeSelector: Sendable, Hashable {
    var leading: Combinator
    var selector: ComplexSelector
}

/// (IDs, classes/attributes/pseudo-classes, types/pseudo-elements), compared in that order.
struct Specificity: Sendable, Hashable, Comparable {
    var a = 0, b = 0, c = 0

    static func + (x: Specificity, y: Specificity) -> Specificity { Specificity(a: x.a + y.a, b: x.b + y.b, c: x.c + y.c) }
    static func < (x: Specificity, y: Specificity) -> Bool { (x.a, x.b, x.c) < (y.a, y.b, y.c) }
}

extension ComplexSelector {
    /// A selector list (a rule's prelude); nil when any selector of it is invalid, as a browser then
    /// drops the whole rule. `nested`: inside another rule, where a selector without `&` is relative to
    /// the parent (a descendant of it) and one may start with a combinator.
    static func parseList(_ tokens: ArraySlice<CSSSyntax.Token>, nested: Bool = false) -> [ComplexSelector]? {
        var selectors: [ComplexSelector] = []
        for part in CSSSyntax.split(tokens) {
            var parser = SelectorParser(tokens: part)
            guard var selector = parser.complex(allowLeadingCombinator: nested), parser.atEnd else { return nil }
            if nested && !selector.mentionsNesting {
                // `.a { img { … } }` is `& img`; `.a { > img { … } }` is `& > img`.
                let leading = parser.leading ?? .descendant
                selector.compounds.insert(CompoundSelector(type: nil, conditions: [.pseudo(.nesting)]), at: 0)
                selector.combinators.insert(leading, at: 0)
            }
            selectors.append(selector)
        }
        return selectors.isEmpty ? nil : selectors
    }

    var mentionsNesting: Bool {
        compounds.contains { $0.conditions.contains { $0.mentionsNesting } }
    }
}

extension SimpleSelector {
    var mentionsNesting: Bool {
        guard case .pseudo(let pseudo) = self else { return false }
        switch pseudo {
        case .nesting: return true
        case .not(let list), .matches(let list, _): return list.contains { $0.mentionsNesting }
        case .has(let list): return list.contains { $0.selector.mentionsNesting }
        case .nth(_, _, _, let of?): return of.contains { $0.mentionsNesting }
        default: return false
        }
    }
}

/// Recursive descent over a selector's tokens.
private struct SelectorParser {
    var tokens: ArraySlice<CSSSyntax.Token>
    /// The combinator a relative or nested selector started with.
    var leading: Combinator?

    init(tokens: ArraySlice<CSSSyntax.Token>) {
        self.tokens = tokens
        skipSpace()
    }

    var atEnd: Bool {
        var rest = tokens
        while rest.first == .whitespace { rest.removeFirst() }
        return rest.isEmpty
    }

    mutating func skipSpace() {
        while tokens.first == .whitespace { tokens.removeFirst() }
    }

    mutating func complex(allowLeadingCombinator: Bool) -> ComplexSelector? {
        if allowLeadingCombinator, let combinator = explicitCombinator() {
            leading = combinator
            skipSpace()
        }
        var selector = ComplexSelector(compounds: [], combinators: [])
        guard let first = compound(&selector) else { return nil }
        selector.compounds.append(first)
        while true {
            let hadSpace = tokens.first == .whitespace
            skipSpace()
            if tokens.isEmpty || tokens.first == .comma || tokens.first == .closeParen { break }
            let combinator: Combinator
            if let explicit = explicitCombinator() {
                combinator = explicit
                skipSpace()
            } else if hadSpace {
                combinator = .descendant
            } else {
                return nil
            }
            // Nothing may follow a pseudo-element's compound.
            guard !selector.pseudoElement, let next = compound(&selector) else { return nil }
            selector.combinators.append(combinator)
            selector.compounds.append(next)
        }
        return selector
    }

    private mutating func explicitCombinator() -> Combinator? {
        switch tokens.first {
        case .delim(UInt8(ascii: ">")): tokens.removeFirst(); return .child
        case .delim(UInt8(ascii: "+")): tokens.removeFirst(); return .nextSibling
        case .delim(UInt8(ascii: "~")): tokens.removeFirst(); return .subsequentSibling
        default: return nil
        }
    }

    /// One compound; marks `selector` when it ends with a pseudo-element.
    private mutating func compound(_ selector: inout ComplexSelector) -> CompoundSelector? {
        var compound = CompoundSelector()
        var any = false
        // A type or universal selector, with an optional namespace prefix (`svg|rect`, `*|*`).
        switch tokens.first {
        case .ident(let name):
            tokens.removeFirst()
            compound.type = name.lowercased()
            any = true
        case .delim(UInt8(ascii: "*")):
            tokens.removeFirst()
            any = true
        default: break
        }
        if tokens.first == .delim(UInt8(ascii: "|")) {
            tokens.removeFirst()
            switch tokens.first {
            case .ident(let name): tokens.removeFirst(); compound.type = name.lowercased()
            case .delim(UInt8(ascii: "*")): tokens.removeFirst(); compound.type = nil
            default: return nil
            }
            any = true
        }
        loop: while let token = tokens.first {
            switch token {
            case .hash(let name, let isID):
                guard isID else { return nil }
                tokens.removeFirst()
                compound.conditions.append(.id(name))
            case .delim(UInt8(ascii: ".")):
                tokens.removeFirst()
                guard case .ident(let name)? = tokens.popFirst() else { return nil }
                compound.conditions.append(.className(name))
            case .delim(UInt8(ascii: "&")):
                tokens.removeFirst()
                compound.conditions.append(.pseudo(.nesting))
            case .openSquare:
                tokens.removeFirst()
                guard let condition = attribute() else { return nil }
                compound.conditions.append(condition)
            case .colon:
                tokens.removeFirst()
                if tokens.first == .colon {
                    tokens.removeFirst()
                    guard pseudoElement() else { return nil }
                    selector.pseudoElement = true
                    any = true
                    // User-action pseudo-classes may follow (`::before:hover`); nothing else may.
                    while tokens.first == .colon, case .ident? = tokens.dropFirst().first { tokens.removeFirst(2) }
                    break loop
                }
                switch tokens.first {
                case .ident(let name) where ["before", "after", "first-line", "first-letter"].contains(name.lowercased()):
                    tokens.removeFirst()
                    selector.pseudoElement = true
                    any = true
                    break loop
                default:
                    guard let pseudo = pseudoClass() else { return nil }
                    compound.conditions.append(.pseudo(pseudo))
                }
            default:
                break loop
            }
            any = true
        }
        return any ? compound : nil
    }

    private mutating func pseudoElement() -> Bool {
        switch tokens.popFirst() {
        case .ident: return true
        case .function: return skipArguments()
        default: return false
        }
    }

    /// The tokens up to the `)` that closes an argument list, dropped.
    @discardableResult
    private mutating func skipArguments() -> Bool {
        _ = arguments()
        return true
    }

    /// The tokens of an argument list, up to its closing `)` (nested brackets kept).
    private mutating func arguments() -> ArraySlice<CSSSyntax.Token>? {
        var depth = 1
        var index = tokens.startIndex
        while index < tokens.endIndex {
            switch tokens[index] {
            case .function, .openParen: depth += 1
            case .closeParen:
                depth -= 1
                if depth == 0 {
                    let inside = tokens[tokens.startIndex..<index]
                    tokens = tokens[(index + 1)...]
                    return inside
                }
            default: break
            }
            index += 1
        }
        return nil
    }

    private mutating func pseudoClass() -> PseudoClass? {
        switch tokens.popFirst() {
        case .ident(let raw):
            let name = raw.lowercased()
            switch name {
            case "first-child": return .nth(.child, a: 0, b: 1, of: nil)
            case "last-child": return .nth(.lastChild, a: 0, b: 1, of: nil)
            case "only-child": return .matches([Self.both(.child, .lastChild)], zero: false)
            case "first-of-type": return .nth(.ofType, a: 0, b: 1, of: nil)
            case "last-of-type": return .nth(.lastOfType, a: 0, b: 1, of: nil)
            case "only-of-type": return .matches([Self.both(.ofType, .lastOfType)], zero: false)
            case "root": return .root
            case "empty": return .empty
            case "link", "any-link": return .link
            default: return .unknown(name)
            }
        case .function(let name):
            guard let inside = arguments() else { return nil }
            switch name {
            case "not":
                return ComplexSelector.forgiving(inside, forgiving: false).map { .not($0) }
            case "is", "matches", "-webkit-any", "-moz-any":
                return .matches(ComplexSelector.forgiving(inside, forgiving: true) ?? [], zero: false)
            case "where":
                return .matches(ComplexSelector.forgiving(inside, forgiving: true) ?? [], zero: true)
            case "has":
                return Self.relative(inside).map { .has($0) }
            case "nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type":
                let kind: NthKind = name == "nth-child" ? .child : name == "nth-last-child" ? .lastChild : name == "nth-of-type" ? .ofType : .lastOfType
                return Self.nth(inside, kind)
            default:
                return .unknown(name)
            }
        default:
            return nil
        }
    }

    /// `:only-child` as `:first-child:last-child`.
    private static func both(_ first: NthKind, _ last: NthKind) -> ComplexSelector {
        ComplexSelector(compounds: [CompoundSelector(type: nil, conditions: [.pseudo(.nth(first, a: 0, b: 1, of: nil)),
                                                                             .pseudo(.nth(last, a: 0, b: 1, of: nil))])],
                        combinators: [])
    }

    private static func relative(_ tokens: ArraySlice<CSSSyntax.Token>) -> [RelativeSelector]? {
        var result: [RelativeSelector] = []
        for part in CSSSyntax.split(tokens) where part.contains(where: { $0 != .whitespace }) {
            var parser = SelectorParser(tokens: part)
            guard let selector = parser.complex(allowLeadingCombinator: true), parser.atEnd else { continue }
            result.append(RelativeSelector(leading: parser.leading ?? .descendant, selector: selector))
        }
        return result.isEmpty ? nil : result
    }

    /// `an+b [of S]`, `odd`, `even`.
    private static func nth(_ tokens: ArraySlice<CSSSyntax.Token>, _ kind: NthKind) -> PseudoClass? {
        var text = ""
        var rest = tokens[...]
        var of: [ComplexSelector]?
        while let token = rest.first {
            if case .ident(let word) = token, word.lowercased() == "of" {
                rest.removeFirst()
                guard kind == .child || kind == .lastChild, let list = ComplexSelector.forgiving(rest, forgiving: false) else { return nil }
                of = list
                break
            }
            rest.removeFirst()
            switch token {
            case .whitespace: continue
            case .ident(let word): text += word.lowercased()
            case .number(let value): text += value >= 0 && text.last.map({ $0 != "n" }) ?? true ? Self.integer(value) : "+" + Self.integer(value)
            case .dimension(let value, let unit): text += Self.integer(value) + unit
            case .delim(let byte): text.append(Character(Unicode.Scalar(byte)))
            default: return nil
            }
        }
        text = text.replacingOccurrences(of: "++", with: "+")
        switch text {
        case "odd": return .nth(kind, a: 2, b: 1, of: of)
        case "even": return .nth(kind, a: 2, b: 0, of: of)
        default: break
        }
        guard let n = text.firstIndex(of: "n") else {
            return Int(text).map { .nth(kind, a: 0, b: $0, of: of) }
        }
        let aText = String(text[..<n]), bText = String(text[text.index(after: n)...])
        let a: Int
        switch aText {
        case "", "+": a = 1
        case "-": a = -1
        default: guard let value = Int(aText) else { return nil }; a = value
        }
        var b = 0
        if !bText.isEmpty {
            guard let value = Int(bText.hasPrefix("+") ? String(bText.dropFirst()) : bText) else { return nil }
            b = value
        }
        return .nth(kind, a: a, b: b, of: of)
    }

    private static func integer(_ value: Double) -> String { String(Int(value)) }

    /// `[name]`, `[name op value i]`.
    private mutating func attribute() -> SimpleSelector? {
        skipSpace()
        guard case .ident(var name)? = tokens.popFirst() else { return nil }
        if tokens.first == .delim(UInt8(ascii: "|")), case .ident(let local)? = tokens.dropFirst().first {
            tokens.removeFirst(2)
            name = local
        }
        name = name.lowercased()
        skipSpace()
        if tokens.first == .closeSquare {
            tokens.removeFirst()
            return .attribute(name: name, match: nil, caseInsensitive: false)
        }
        var op: UInt8 = UInt8(ascii: "=")
        if case .delim(let byte)? = tokens.first, byte != UInt8(ascii: "=") {
            op = byte
            tokens.removeFirst()
        }
        guard tokens.popFirst() == .delim(UInt8(ascii: "=")) else { return nil }
        skipSpace()
        let value: String
        switch tokens.popFirst() {
        case .ident(let text), .string(let text): value = text
        case .number(let number): value = number == number.rounded() ? String(Int(number)) : String(number)
        default: return nil
        }
        skipSpace()
        var caseInsensitive = false
        if case .ident(let flag)? = tokens.first, ["i", "s"].contains(flag.lowercased()) {
            caseInsensitive = flag.lowercased() == "i"
            tokens.removeFirst()
            skipSpace()
        }
        guard tokens.popFirst() == .closeSquare else { return nil }
        let match: AttributeMatch
        switch op {
        case UInt8(ascii: "="): match = .equals(value)
        case UInt8(ascii: "~"): match = .includes(value)
        case UInt8(ascii: "|"): match = .dashMatch(value)
        case UInt8(ascii: "^"): match = .prefix(value)
        case UInt8(ascii: "$"): match = .suffix(value)
        case UInt8(ascii: "*"): match = .substring(value)
        default: return nil
        }
        return .attribute(name: name, match: match, caseInsensitive: caseInsensitive)
    }
}

extension ComplexSelector {
    /// A selector list inside a pseudo-class: forgiving (`:is`, `:where`) drops what does not parse.
    static func forgiving(_ tokens: ArraySlice<CSSSyntax.Token>, forgiving: Bool) -> [ComplexSelector]? {
        var result: [ComplexSelector] = []
        for part in CSSSyntax.split(tokens) {
            var parser = SelectorParser(tokens: part)
            if let selector = parser.complex(allowLeadingCombinator: false), parser.atEnd {
                result.append(selector)
            } else if !forgiving {
                return nil
            }
        }
        return result
    }
}
