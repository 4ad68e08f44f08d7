/// Where a page's stylesheets and scripts are read from: the site's files in a build, the dev
/// server's answers in `imgbake serve`. Implementations read and parse each once.
protocol StyleLibrary: Sendable {
    /// The rules of the site's file at `path`; nil when it cannot be read.
    func stylesheet(_ path: String) -> StyleSheet?
    /// A `<style>` element's rules (the pages of a site often repeat the same one).
    func inline(_ text: String) -> StyleSheet
    /// Whether the site's script at `path` may restructure images (`ScriptCheck`); nil when it cannot be read.
    func scriptMayRestructureImages(_ path: String) -> Bool?
}

/// Every rule that applies to one page, in cascade order, indexed by what its selectors' subjects
/// name (ID, class, tag, or anything), as browsers index them: an element is tested against the few
/// rules that can match it.
struct PageCascade: Sendable {
    struct Entry: Sendable {
        var selector: ComplexSelector
        /// The rule's declarations (`rules`).
        var rule: Int
        /// `@media` with features, `@supports`, a conditional `<link media>`.
        var conditional: Bool
        /// Precedence among layers: higher wins for normal declarations (unlayered the highest).
        var layerRank: Int
        var order: Int
        /// A wrapper could change what the selector matches (`isStructureSensitive`).
        var structural: Bool
        /// The attributes its selector tests, anywhere in it.
        var attributes: Set<String>
    }

    struct Rule: Sendable {
        var declarations: [StyleSheet.Declaration]
        /// The selectors as written, for messages.
        var text: String
        /// It declares a property layout reads (`layoutProperties`).
        var lays: Bool
    }

    var rules: [Rule] = []
    var entries: [Entry] = []
    /// Stylesheets whose rules are not known (another host, a file that cannot be read).
    var unread: [String] = []
    /// A rule selects a `<picture>` other than as the subject.
    var selectsPictures: String?
    var layerCount = 0
    private var byID: [String: [Int]] = [:]
    private var byClass: [String: [Int]] = [:]
    private var byTag: [String: [Int]] = [:]
    private var universal: [Int] = []

    /// The properties the layout of an image reads, each with the one it cascades as: logical properties
    /// with the physical ones they stand for (a horizontal writing mode).
    static let layoutProperties: [String: String] = [
        "width": "width", "inline-size": "width", "height": "height", "block-size": "height",
        "min-width": "min-width", "min-inline-size": "min-width", "max-width": "max-width", "max-inline-size": "max-width",
        "min-height": "min-height", "min-block-size": "min-height", "max-height": "max-height", "max-block-size": "max-height",
        "aspect-ratio": "aspect-ratio", "display": "display", "float": "float", "position": "position",
    ]

    /// The page's stylesheets in order, each `@import` before the rules of the sheet that imports it.
    init(_ inputs: PageStyleInputs, page: String, settings: ScanSettings, library: some StyleLibrary) {
        var gathered: [(sheet: StyleSheet, conditional: Bool, layer: String?)] = []
        var layers: [String] = []
        func add(_ sheet: StyleSheet, at path: String, conditional: Bool, layer: String?, depth: Int) {
            for item in sheet.imports {
                let resolver = ReferenceResolver(settings: settings, pagePath: path)
                let inner = item.layer.map { (layer.map { $0 + "." } ?? "") + $0 } ?? layer
                switch resolver.asset(item.url) {
                case .site(let imported)? where depth < 8:
                    if let importedSheet = library.stylesheet(imported) {
                        add(importedSheet, at: imported, conditional: conditional || item.conditional, layer: inner, depth: depth + 1)
                    } else {
                        unread.append(imported)
                    }
                case nil: break
                default: unread.append(item.url)
                }
            }
            for name in sheet.layers {
                let full = (layer.map { $0 + "." } ?? "") + name
                if !layers.contains(full) { layers.append(full) }
            }
            if let layer, !layers.contains(layer) { layers.append(layer) }
            gathered.append((sheet, conditional, layer))
        }
        for source in inputs.stylesheets {
            switch source {
            case .inline(let text, let media):
                let applies = MediaApplies.ofAttribute(media)
                if applies != .never { add(library.inline(text), at: page, conditional: applies == .sometimes, layer: nil, depth: 0) }
            case .file(let path, let media):
                let applies = MediaApplies.ofAttribute(media)
                guard applies != .never else { continue }
                if let sheet = library.stylesheet(path) {
                    add(sheet, at: path, conditional: applies == .sometimes, layer: nil, depth: 0)
                } else {
                    unread.append(path)
                }
            case .elsewhere(let url, let media):
                if MediaApplies.ofAttribute(media) != .never { unread.append(url) }
            }
        }
        layerCount = layers.count
        let rank = Dictionary(layers.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        for (sheet, conditional, layer) in gathered {
            for rule in sheet.rules {
                let full = rule.layer.map { (layer.map { $0 + "." } ?? "") + $0 } ?? layer
                append(rule, conditional: conditional, layerRank: full.flatMap { rank[$0] } ?? layers.count)
            }
        }
    }

    private mutating func append(_ rule: StyleSheet.Rule, conditional: Bool, layerRank: Int) {
        let index = rules.count
        let lays = rule.declarations.contains { Self.layoutProperties[$0.property] != nil }
        rules.append(Rule(declarations: rule.declarations, text: rule.selectors.map(\.text).joined(separator: ", "), lays: lays))
        for selector in rule.selectors {
            let entry = entries.count
            entries.append(Entry(selector: selector, rule: index, conditional: conditional || rule.conditional, layerRank: layerRank,
                                 order: entry, structural: selector.isStructureSensitive, attributes: selector.testedAttributes))
            if selectsPictures == nil, selector.compounds.dropLast().contains(where: { $0.type == "picture" }) {
                selectsPictures = rules[index].text
            }
            let subject = selector.subject
            if let id = subject.conditions.lazy.compactMap({ if case .id(let id) = $0 { id } else { nil } }).first {
                byID[id, default: []].append(entry)
            } else if let name = subject.conditions.lazy.compactMap({ if case .className(let name) = $0 { name } else { nil } }).first {
                byClass[name, default: []].append(entry)
            } else if let type = subject.type {
                byTag[type, default: []].append(entry)
            } else {
                universal.append(entry)
            }
        }
    }

    /// The entries that may match `element`, in cascade order.
    func candidates(for element: Int, in view: TreeView) -> [Int] {
        var found = universal
        found += byTag[view.tag(element)] ?? []
        if let id = view.attribute(element, "id") { found += byID[id] ?? [] }
        for name in Set(view.classes(element)) { found += byClass[String(name)] ?? [] }
        return found.sorted()
    }

    /// Ranks a declaration of `entry` (nil: the element's `style` attribute) for the cascade: importance,
    /// then the style attribute, then the layer (the order reversed for `!important`), specificity, order.
    func precedence(_ entry: Entry?, important: Bool) -> [Int] {
        guard let entry else { return [important ? 1 : 0, 1, 0, 0, 0, 0, Int.max] }
        let specificity = entry.selector.specificity
        let layer = important ? layerCount - entry.layerRank : entry.layerRank
        return [important ? 1 : 0, 0, layer, specificity.a, specificity.b, specificity.c, entry.order]
    }
}

extension ComplexSelector {
    /// The selector as CSS writes it (for messages).
    var text: String {
        var text = ""
        for (index, compound) in compounds.enumerated() {
            if index > 0 {
                switch combinators[index - 1] {
                case .descendant: text += " "
                case .child: text += " > "
                case .nextSibling: text += " + "
                case .subsequentSibling: text += " ~ "
                }
            }
            text += compound.text
        }
        return text + (pseudoElement ? "::…" : "")
    }

    /// Whether putting an `<img>` inside a `<picture>` could change what this selector matches: it
    /// finds an image (or the wrapper) by its parent, its siblings or its position, or goes through an
    /// ancestor that could be the wrapper. A rule only about an image's ancestors
    /// (`.content img`) matches it as before.
    var isStructureSensitive: Bool {
        for (index, compound) in compounds.enumerated() {
            if compound.type == "picture" { return true }
            guard compound.type == nil || compound.type == "img" else {
                if compound.conditions.contains(where: \.isStructural) { return true }
                continue
            }
            if index < compounds.count - 1 { return true }
            if index > 0, combinators[index - 1] != .descendant { return true }
            if compound.conditions.contains(where: \.isStructural) { return true }
        }
        return false
    }

    /// The attribute names the selector tests, anywhere in it.
    var testedAttributes: Set<String> {
        var names: Set<String> = []
        for compound in compounds {
            for condition in compound.conditions { names.formUnion(condition.testedAttributes) }
        }
        return names
    }
}

extension CompoundSelector {
    var text: String {
        var text = type ?? (conditions.isEmpty ? "*" : "")
        for condition in conditions {
            switch condition {
            case .id(let id): text += "#" + id
            case .className(let name): text += "." + name
            case .attribute(let name, nil, _): text += "[" + name + "]"
            case .attribute(let name, _, _): text += "[" + name + "=…]"
            case .pseudo(let pseudo): text += pseudo.text
            }
        }
        return text
    }
}

extension PseudoClass {
    var text: String {
        switch self {
        case .not(let list): ":not(" + list.map(\.text).joined(separator: ", ") + ")"
        case .matches(let list, let zero): (zero ? ":where(" : ":is(") + list.map(\.text).joined(separator: ", ") + ")"
        case .has(let list): ":has(" + list.map(\.selector.text).joined(separator: ", ") + ")"
        case .nth(let kind, let a, let b, _):
            switch (kind, a, b) {
            case (.child, 0, 1): ":first-child"
            case (.lastChild, 0, 1): ":last-child"
            case (.ofType, 0, 1): ":first-of-type"
            case (.lastOfType, 0, 1): ":last-of-type"
            default: ":nth-\(kind)(\(a)n+\(b))"
            }
        case .root: ":root"
        case .empty: ":empty"
        case .link: ":link"
        case .nesting: "&"
        case .anchor: ":scope"
        case .unknown(let name): ":" + name
        }
    }
}

extension SimpleSelector {
    /// Depends on where the element is among its siblings or what it contains.
    var isStructural: Bool {
        guard case .pseudo(let pseudo) = self else { return false }
        switch pseudo {
        case .nth, .root, .empty, .has, .nesting, .anchor: return true
        case .not(let list), .matches(let list, _):
            return list.contains { $0.compounds.count > 1 || $0.isStructureSensitive || $0.compounds.contains { $0.conditions.contains(where: \.isStructural) } }
        case .link, .unknown: return false
        }
    }

    var testedAttributes: Set<String> {
        switch self {
        case .attribute(let name, _, _): return [name]
        case .id: return ["id"]
        case .className: return ["class"]
        case .pseudo(let pseudo):
            switch pseudo {
            case .not(let list), .matches(let list, _): return list.reduce(into: Set()) { $0.formUnion($1.testedAttributes) }
            case .has(let list): return list.reduce(into: Set()) { $0.formUnion($1.selector.testedAttributes) }
            case .nth(_, _, _, let of?): return of.reduce(into: Set()) { $0.formUnion($1.testedAttributes) }
            case .link: return ["href"]
            default: return []
            }
        }
    }
}
