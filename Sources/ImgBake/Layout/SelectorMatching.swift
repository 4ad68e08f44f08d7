import Gumbo

/// A page's elements as a selector sees them: the document as written, or with `<img>`s each inside a
/// `<picture style="display:contents">` of imgbake's (the wrappers are elements `tree.nodes.count` and
/// on), or with attributes added to one element — what the rewrite would make of it.
struct TreeView {
    let tree: HTMLTree
    /// Each wrapped `<img>`, and its wrapper's index.
    private(set) var wrapperOf: [Int: Int] = [:]
    /// Each wrapper, and the `<img>` it holds.
    private(set) var imageIn: [Int: Int] = [:]
    /// Attributes added to (or replacing those of) one element.
    var added: (element: Int, attributes: [(name: String, value: String)])?
    /// The element a `:has()` is being evaluated for.
    var anchor: Int?

    init(_ tree: HTMLTree, wrapping images: some Sequence<Int> = []) {
        self.tree = tree
        for image in images {
            let wrapper = tree.nodes.count + wrapperOf.count
            wrapperOf[image] = wrapper
            imageIn[wrapper] = image
        }
    }

    init(_ tree: HTMLTree, wrapping image: Int) { self.init(tree, wrapping: [image]) }

    static let wrapperAttributes: [(name: String, value: String)] = [("style", "display:contents")]

    func isWrapper(_ element: Int) -> Bool { element >= tree.nodes.count }

    /// An element of the document as it stands in the view: a wrapped image's place is its wrapper's.
    private func placed(_ element: Int) -> Int { wrapperOf[element] ?? element }

    func parent(_ element: Int) -> Int {
        if let image = imageIn[element] { return Int(tree.nodes[image].parent) }
        if wrapperOf[element] != nil { return wrapperOf[element]! }
        return Int(tree.nodes[element].parent)
    }

    func previous(_ element: Int) -> Int {
        if wrapperOf[element] != nil { return -1 }
        let original = imageIn[element] ?? element
        let previous = Int(tree.nodes[original].previousSibling)
        return previous >= 0 ? placed(previous) : -1
    }

    func next(_ element: Int) -> Int {
        if wrapperOf[element] != nil { return -1 }
        let original = imageIn[element] ?? element
        let next = Int(tree.nodes[original].nextSibling)
        return next >= 0 ? placed(next) : -1
    }

    func firstChild(_ element: Int) -> Int {
        if let image = imageIn[element] { return image }
        if wrapperOf[element] != nil { return -1 }
        let first = Int(tree.nodes[element].firstChild)
        return first >= 0 ? placed(first) : -1
    }

    func tag(_ element: Int) -> String { isWrapper(element) ? "picture" : tree.nodes[element].tag }

    func hasText(_ element: Int) -> Bool { isWrapper(element) ? false : tree.nodes[element].hasText }

    func attribute(_ element: Int, _ name: String) -> String? {
        if isWrapper(element) { return Self.wrapperAttributes.first { $0.name == name }?.value }
        if let added, added.element == element, let value = added.attributes.first(where: { $0.name == name }) { return value.value }
        return tree.nodes[element].attribute(name)
    }

    func classes(_ element: Int) -> [Substring] {
        (attribute(element, "class") ?? "").split(whereSeparator: \.isHTMLSpaceCharacter)
    }
}

extension Character {
    var isHTMLSpaceCharacter: Bool { self == " " || self == "\t" || self == "\n" || self == "\r" || self == "\u{0C}" }
}

/// Three-valued: a selector with a state the markup does not tell (`:hover`) may match.
enum Match: Sendable, Equatable {
    case no, maybe, yes

    static func && (a: Match, b: @autoclosure () -> Match) -> Match {
        if a == .no { return .no }
        let b = b()
        if b == .no { return .no }
        return a == .yes && b == .yes ? .yes : .maybe
    }

    static func || (a: Match, b: @autoclosure () -> Match) -> Match {
        if a == .yes { return .yes }
        let b = b()
        if b == .yes { return .yes }
        return a == .maybe || b == .maybe ? .maybe : .no
    }

    static prefix func ! (a: Match) -> Match { a == .yes ? .no : a == .no ? .yes : .maybe }

    init(_ value: Bool) { self = value ? .yes : .no }
}

extension TreeView {
    /// Whether `selector` matches `element`.
    func matches(_ selector: ComplexSelector, _ element: Int) -> Match {
        matches(selector, compound: selector.compounds.count - 1, element)
    }

    func matchesAny(_ list: [ComplexSelector], _ element: Int) -> Match {
        var result = Match.no
        for selector in list {
            result = result || matches(selector, element)
            if result == .yes { return .yes }
        }
        return result
    }

    private func matches(_ selector: ComplexSelector, compound index: Int, _ element: Int) -> Match {
        let here = matches(selector.compounds[index], element)
        guard here != .no, index > 0 else { return here }
        var rest = Match.no
        switch selector.combinators[index - 1] {
        case .child:
            let parent = self.parent(element)
            rest = parent >= 0 ? matches(selector, compound: index - 1, parent) : .no
        case .descendant:
            var ancestor = parent(element)
            while ancestor >= 0, rest != .yes {
                rest = rest || matches(selector, compound: index - 1, ancestor)
                ancestor = parent(ancestor)
            }
        case .nextSibling:
            let previous = self.previous(element)
            rest = previous >= 0 ? matches(selector, compound: index - 1, previous) : .no
        case .subsequentSibling:
            var sibling = previous(element)
            while sibling >= 0, rest != .yes {
                rest = rest || matches(selector, compound: index - 1, sibling)
                sibling = previous(sibling)
            }
        }
        return here && rest
    }

    func matches(_ compound: CompoundSelector, _ element: Int) -> Match {
        if let type = compound.type, tag(element) != type { return .no }
        var result = Match.yes
        for condition in compound.conditions {
            result = result && matches(condition, element)
            if result == .no { return .no }
        }
        return result
    }

    private func matches(_ condition: SimpleSelector, _ element: Int) -> Match {
        switch condition {
        case .id(let id): return Match(attribute(element, "id") == id)
        case .className(let name): return Match(classes(element).contains { $0 == name })
        case .attribute(let name, let match, let caseInsensitive):
            guard let value = attribute(element, name) else { return .no }
            guard let match else { return .yes }
            return Match(Self.attribute(value, match, caseInsensitive: caseInsensitive))
        case .pseudo(let pseudo): return matches(pseudo, element)
        }
    }

    private static func attribute(_ value: String, _ match: AttributeMatch, caseInsensitive: Bool) -> Bool {
        let value = caseInsensitive ? value.lowercased() : value
        func fold(_ text: String) -> String { caseInsensitive ? text.lowercased() : text }
        switch match {
        case .equals(let wanted): return value == fold(wanted)
        case .includes(let wanted): return !wanted.isEmpty && value.split(whereSeparator: \.isHTMLSpaceCharacter).contains { $0 == fold(wanted) }
        case .dashMatch(let wanted): return value == fold(wanted) || value.hasPrefix(fold(wanted) + "-")
        case .prefix(let wanted): return !wanted.isEmpty && value.hasPrefix(fold(wanted))
        case .suffix(let wanted): return !wanted.isEmpty && value.hasSuffix(fold(wanted))
        case .substring(let wanted): return !wanted.isEmpty && value.contains(fold(wanted))
        }
    }

    private func matches(_ pseudo: PseudoClass, _ element: Int) -> Match {
        switch pseudo {
        case .not(let list): return !matchesAny(list, element)
        case .matches(let list, _): return matchesAny(list, element)
        case .has(let list):
            var result = Match.no
            for relative in list where result != .yes { result = result || has(relative, element) }
            return result
        case .nth(let kind, let a, let b, let of): return nth(kind, a, b, of, element)
        case .root: return Match(parent(element) < 0)
        case .empty: return Match(firstChild(element) < 0 && !hasText(element))
        case .link: return Match(["a", "area"].contains(tag(element)) && attribute(element, "href") != nil)
        case .anchor: return Match(element == anchor)
        case .nesting, .unknown: return .maybe
        }
    }

    /// `:has()`: an element after or inside `anchor` matching the relative selector, read as
    /// `<anchor> <leading combinator> <selector>`.
    private func has(_ relative: RelativeSelector, _ anchor: Int) -> Match {
        var view = self
        view.anchor = anchor
        let anchored = ComplexSelector(compounds: [CompoundSelector(type: nil, conditions: [.pseudo(.anchor)])] + relative.selector.compounds,
                                       combinators: [relative.leading] + relative.selector.combinators)
        var result = Match.no
        func subtree(_ first: Int) {
            var stack = [first]
            while let start = stack.popLast(), result != .yes {
                var child = start
                while child >= 0, result != .yes {
                    result = result || view.matches(anchored, child)
                    stack.append(firstChild(child))
                    child = next(child)
                }
            }
        }
        switch relative.leading {
        case .child, .descendant:
            subtree(firstChild(anchor))
        case .nextSibling, .subsequentSibling:
            let after = next(anchor)
            if after >= 0 { subtree(after) }
        }
        return result
    }

    /// The element's position among its siblings (those of its type, or matching `of`), from the start
    /// or the end, tested against `an+b`.
    private func nth(_ kind: NthKind, _ a: Int, _ b: Int, _ of: [ComplexSelector]?, _ element: Int) -> Match {
        var certain = true
        if let of {
            let itself = matchesAny(of, element)
            if itself == .no { return .no }
            certain = itself == .yes
        }
        let type = tag(element)
        var position = 1
        var sibling = kind == .child || kind == .ofType ? previous(element) : next(element)
        while sibling >= 0 {
            switch kind {
            case .ofType, .lastOfType: if tag(sibling) == type { position += 1 }
            case .child, .lastChild:
                if let of {
                    let counts = matchesAny(of, sibling)
                    if counts == .maybe { certain = false }
                    if counts != .no { position += 1 }
                } else {
                    position += 1
                }
            }
            sibling = kind == .child || kind == .ofType ? previous(sibling) : next(sibling)
        }
        let hit: Bool
        if a == 0 {
            hit = position == b
        } else {
            let steps = position - b
            hit = steps % a == 0 && steps / a >= 0
        }
        return hit ? (certain ? .yes : .maybe) : (certain ? .no : .maybe)
    }
}
