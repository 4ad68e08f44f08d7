import Gumbo

/// How a page lays out its `<img>`s, as far as imgbake's rewrite can change it: for each, whether a
/// `<picture>` wrapper of imgbake's would be seen (by a selector that finds the image by its parent,
/// its siblings or its position; by a script that moves images or finds them; by a stylesheet that
/// cannot be read), what the page's CSS says about its size, and which of the attributes imgbake adds
/// a selector tests. The rules are in docs/rewriting.md ("Pages look the same").
struct PageLayout: Sendable {
    let inputs: PageStyleInputs
    let cascade: PageCascade
    /// Why no image of the page may be wrapped, when something page-wide says so.
    let pageWide: String?
    /// A script of the page may move its images: where it puts them, and what sizes them there, is
    /// not known.
    let scriptsMoveImages: Bool

    init(_ inputs: PageStyleInputs, page: String, settings: ScanSettings, library: some StyleLibrary) {
        self.inputs = inputs
        cascade = PageCascade(inputs, page: page, settings: settings, library: library)
        let scripts = Self.scriptReason(inputs, library: library)
        scriptsMoveImages = scripts != nil
        pageWide = scripts ?? Self.pageWideReason(inputs, cascade)
    }

    private static func scriptReason(_ inputs: PageStyleInputs, library: some StyleLibrary) -> String? {
        for script in inputs.scripts {
            switch script {
            case .inline(let text) where ScriptCheck.mayRestructureImages(text.utf8):
                return "a script of the page may move its images or find them by their place"
            case .file(let path) where library.scriptMayRestructureImages(path) ?? true:
                return "the script /\(path) may move the page's images or find them by their place"
            case .elsewhere(let url):
                return "the script \(url) is not the site's own: what it does to images is not known"
            default: continue
            }
        }
        for node in inputs.tree.nodes {
            for attribute in node.attributes
            where attribute.name.hasPrefix("on") && ScriptCheck.mayRestructureImages(attribute.value.utf8, namesImages: node.tag == "img") {
                return "an event handler (\(attribute.name)) may move the page's images"
            }
        }
        return nil
    }

    private static func pageWideReason(_ inputs: PageStyleInputs, _ cascade: PageCascade) -> String? {
        if inputs.forbidsStyleAttributes { return "the page's Content-Security-Policy forbids the wrapper's style attribute" }
        if let url = cascade.unread.first { return "the stylesheet \(url) cannot be read" }
        if let rule = cascade.selectsPictures { return "the rule \(rule) selects <picture> elements by their place" }
        return nil
    }

    /// What imgbake may write for the `<img>` at `element` (its index in the tree), alone on its page.
    func image(at element: Int) -> ImageLayout {
        images(at: [element], wrappable: [element])[element] ?? .unknownPage
    }

    /// What imgbake may write for each `<img>` at `elements`. `wrappable`: those that get a `<picture>`
    /// where it is safe; they are checked wrapped all at once, as the rewrite would leave them (two
    /// images wrapped can change what one alone does not: `p:has(> img)` with two in the paragraph), and
    /// those near a change are left unwrapped until the rest change nothing.
    func images(at elements: [Int], wrappable: Set<Int>) -> [Int: ImageLayout] {
        let view = TreeView(inputs.tree)
        var layouts: [Int: ImageLayout] = [:]
        var memo = Memo()
        for element in elements {
            var layout = ImageLayout(wrapper: .safe, box: box(of: element, in: view, &memo))
            layout.styleAttributes = !inputs.forbidsStyleAttributes
            layout.testedAttributes = testedAttributes(of: element, in: view)
            if let reason = pageWide { layout.wrapper = .unsafe(reason) }
            // Rules not known, or a script that moves images, may size it any way.
            if !cascade.unread.isEmpty || scriptsMoveImages { layout.box = .unknown }
            layouts[element] = layout
        }
        guard pageWide == nil else { return layouts }
        var wrapped = wrappable.intersection(elements)
        var subjects: [Int: [Int]] = [:]
        for element in wrapped {
            if let around = self.subjects(around: element, in: view, limit: 5000) {
                subjects[element] = around
            } else {
                layouts[element]?.wrapper = .unsafe("the image has too many elements around it to check")
                wrapped.remove(element)
            }
        }
        while !wrapped.isEmpty {
            let after = TreeView(inputs.tree, wrapping: wrapped)
            var changed: [Int] = []
            for element in wrapped.sorted() {
                if let reason = wrapperChanges(element, subjects: subjects[element] ?? [], before: view, after: after) {
                    layouts[element]?.wrapper = .unsafe(reason)
                    changed.append(element)
                }
            }
            if changed.isEmpty { break }
            wrapped.subtract(changed)
        }
        return layouts
    }

    // MARK: The box

    /// What may size `element`'s box: its sizing properties from every rule that may match it and its
    /// `style` attribute, whether its container sizes it (a flex or grid item), and whether its size
    /// feeds a box sized by its content.
    func box(of element: Int, in view: TreeView, _ memo: inout Memo) -> BoxSizing {
        let declared = self.declared(element, in: view, &memo)
        func axis(_ size: String, min: String, max: String) -> AxisSizing {
            let (values, unset) = declared.possible(size)
            var axis = AxisSizing(unset: unset)
            for value in values {
                switch Self.kind(of: value) {
                case .auto: axis.auto = true
                case .fixed: axis.fixed = true
                case .relative: axis.relative = true
                case .any: axis.auto = true; axis.fixed = true; axis.relative = true
                }
            }
            if !unset, Set(values).count == 1, let value = values.first, value.hasSuffix("px"), let number = Double(value.dropLast(2)), number > 0 {
                axis.pixels = Int(number.rounded())
            }
            let none: Set<String> = ["none", "initial", "unset", "revert", "revert-layer"]
            let zero: Set<String> = ["0", "0px", "auto", "initial", "unset", "revert", "revert-layer"]
            axis.limited = declared.possible(max).values.contains { !none.contains($0) } || declared.possible(min).values.contains { !zero.contains($0) }
            return axis
        }
        let ratio = declared.possible("aspect-ratio").values.contains { !["auto", "initial", "unset", "revert", "revert-layer"].contains($0) }
        let item = isItem(element, in: view, &memo)
        return BoxSizing(width: axis("width", min: "min-width", max: "max-width"),
                         height: axis("height", min: "min-height", max: "max-height"), aspectRatio: ratio,
                         item: item, contentSized: item || sizedByContent(above: element, in: view, &memo))
    }

    /// What a page's layout remembers per element while its images are worked out.
    struct Memo {
        var declared: [Int: Declared] = [:]
        var sizedByContent: [Int: Bool] = [:]
    }

    /// The declarations of the properties layout reads that apply to an element, by property.
    struct Declared {
        var all: [String: [(precedence: [Int], value: String, conditional: Bool)]] = [:]

        /// The value the cascade gives on every screen (none: `unset`), and those a conditional rule
        /// may give instead.
        func possible(_ group: String) -> (values: [String], unset: Bool) {
            let candidates = all[group] ?? []
            let winner = candidates.filter { !$0.conditional }.max { $0.precedence.lexicographicallyPrecedes($1.precedence) }
            var values = winner.map { [$0.value] } ?? []
            for candidate in candidates where candidate.conditional {
                if winner.map({ $0.precedence.lexicographicallyPrecedes(candidate.precedence) }) ?? true { values.append(candidate.value) }
            }
            return (values, winner == nil)
        }
    }

    func declared(_ element: Int, in view: TreeView, _ memo: inout Memo) -> Declared {
        if let known = memo.declared[element] { return known }
        var declared = Declared()
        for index in cascade.candidates(for: element, in: view) {
            let entry = cascade.entries[index]
            let rule = cascade.rules[entry.rule]
            guard rule.lays, !entry.selector.pseudoElement else { continue }
            let match = view.matches(entry.selector, element)
            guard match != .no else { continue }
            for declaration in rule.declarations {
                guard let group = PageCascade.layoutProperties[declaration.property] else { continue }
                declared.all[group, default: []].append((cascade.precedence(entry, important: declaration.important), declaration.value,
                                                         entry.conditional || match == .maybe))
            }
        }
        if let style = view.attribute(element, "style") {
            for declaration in StyleSheet.declarations(style) {
                guard let group = PageCascade.layoutProperties[declaration.property] else { continue }
                declared.all[group, default: []].append((cascade.precedence(nil, important: declaration.important), declaration.value, false))
            }
        }
        memo.declared[element] = declared
        return declared
    }

    /// The `display` values an element may have: the cascade's, or the browser's default for its tag.
    func displays(_ element: Int, in view: TreeView, _ memo: inout Memo) -> [String] {
        let (values, unset) = declared(element, in: view, &memo).possible("display")
        return values + (unset ? [Self.defaultDisplay(view.tag(element))] : [])
    }

    /// Whether the box `element` is laid out in may be a flex or grid container (through any
    /// `display: contents` between).
    func isItem(_ element: Int, in view: TreeView, _ memo: inout Memo) -> Bool {
        var parent = view.parent(element)
        while parent >= 0 {
            let values = displays(parent, in: view, &memo)
            if values.contains(where: Self.laysOutItems) { return true }
            guard values.contains(where: { $0.contains("contents") }) else { return false }
            parent = view.parent(parent)
        }
        return false
    }

    /// Whether a box above `element` may be sized by its content: a flex or grid item, a float, an
    /// absolutely positioned box, an `inline-block`, a table or its cells, a `fit-content` width.
    func sizedByContent(above element: Int, in view: TreeView, _ memo: inout Memo) -> Bool {
        let parent = view.parent(element)
        guard parent >= 0 else { return false }
        if let known = memo.sizedByContent[parent] { return known }
        let declared = self.declared(parent, in: view, &memo)
        let displays = self.displays(parent, in: view, &memo)
        let shrinks = isItem(parent, in: view, &memo)
            || displays.contains { ["inline-block", "inline-flex", "inline-grid", "table", "inline-table", "table-cell", "table-caption"].contains($0) }
            || declared.possible("float").values.contains { $0 == "left" || $0 == "right" || $0 == "inline-start" || $0 == "inline-end" }
            || declared.possible("position").values.contains { $0 == "absolute" || $0 == "fixed" }
            || declared.possible("width").values.contains { $0.contains("content") || $0.contains("var(") }
        let result = shrinks || sizedByContent(above: parent, in: view, &memo)
        memo.sizedByContent[parent] = result
        return result
    }

    static func laysOutItems(_ display: String) -> Bool {
        display.contains("flex") || display.contains("grid") || display.contains("-webkit-box") || display.contains("var(")
    }

    /// The browser's `display` for an element no rule styles (the HTML rendering section's).
    static func defaultDisplay(_ tag: String) -> String {
        switch tag {
        case "td", "th": "table-cell"
        case "table": "table"
        case "tr": "table-row"
        case "caption": "table-caption"
        case "button", "select", "input", "textarea", "meter", "progress": "inline-block"
        case "a", "span", "em", "strong", "b", "i", "u", "s", "small", "code", "sub", "sup", "label", "abbr", "cite", "q", "time", "mark",
             "kbd", "samp", "var", "dfn", "bdi", "bdo", "data", "picture", "img", "br", "wbr", "font", "big", "tt", "strike", "ins", "del":
            "inline"
        default: "block"
        }
    }

    enum ValueKind { case auto, fixed, relative, any }

    static func kind(of value: String) -> ValueKind {
        switch value {
        case "auto", "initial", "unset", "revert", "revert-layer": return .auto
        default:
            if value.contains("var(") || value == "inherit" || value.contains("attr(") { return .any }
            if value.contains("%") || value.contains("content") || value.contains("stretch") || value.contains("fill-available") { return .relative }
            return .fixed
        }
    }

    // MARK: Attributes imgbake adds

    /// What imgbake may add to an `<img>`, with a value of the kind it writes.
    static let addedAttributes: [(name: String, value: String)] = [
        ("srcset", "/_img/a-1-480.webp 480w"), ("sizes", "100vw"), ("width", "480"), ("height", "320"), ("loading", "lazy"),
        ("fetchpriority", "high"), ("decoding", "async"), ("style", "aspect-ratio:auto 3/2"), ("data-blurhash", "x"),
    ]

    /// The added attributes some selector tests (on the image, or on a sibling or ancestor that finds
    /// it): the author's own are left as they are, so only those the image does not have count.
    func testedAttributes(of element: Int, in view: TreeView) -> Set<String> {
        var tested: Set<String> = []
        let subjects = self.subjects(around: element, in: view, limit: 2000) ?? [element]
        for (name, value) in Self.addedAttributes where view.attribute(element, name) == nil {
            var changed = view
            changed.added = (element, [(name, value)])
            search: for subject in subjects {
                for index in cascade.candidates(for: subject, in: view) where cascade.entries[index].attributes.contains(name) {
                    let selector = cascade.entries[index].selector
                    if view.matches(selector, subject) != changed.matches(selector, subject) {
                        tested.insert(name)
                        break search
                    }
                }
            }
        }
        return tested
    }

    // MARK: The wrapper

    /// Why the wrappers of `after` would change what a selector matches around `element`, or give its
    /// wrapper what it passes on; nil when they would not.
    func wrapperChanges(_ element: Int, subjects: [Int], before: TreeView, after: TreeView) -> String? {
        for subject in subjects {
            for index in cascade.candidates(for: subject, in: before) where cascade.entries[index].structural {
                let selector = cascade.entries[index].selector
                if before.matches(selector, subject) != after.matches(selector, subject) {
                    return "the rule \(cascade.rules[cascade.entries[index].rule].text) would match differently"
                }
            }
        }
        // The wrapper itself generates no box (`display: contents`): only what its children inherit counts.
        let wrapper = after.parent(element)
        for index in cascade.candidates(for: wrapper, in: after) {
            let entry = cascade.entries[index]
            guard after.matches(entry.selector, wrapper) != .no else { continue }
            if let declaration = cascade.rules[entry.rule].declarations.first(where: Self.reachesThroughWrapper) {
                return "the rule \(cascade.rules[entry.rule].text) would give the wrapper \(declaration.property)"
            }
        }
        return nil
    }

    /// A declaration on a `display: contents` element that can change its children's boxes: an
    /// inherited property they can be sized by, a custom property, or a `display` that overrides it.
    static func reachesThroughWrapper(_ declaration: StyleSheet.Declaration) -> Bool {
        declaration.property.hasPrefix("--") || inheritedSizing.contains(declaration.property)
            || (declaration.property == "display" && declaration.important)
    }

    static let inheritedSizing: Set<String> = ["font", "font-size", "writing-mode", "direction", "text-orientation", "zoom", "image-orientation"]

    /// The elements whose matches a wrapper around `element` (or attributes added to it) could change:
    /// its ancestors (`:has()`), itself, its siblings, and what follows it among them with all that
    /// is inside (`img + p span`). Nil past `limit`.
    func subjects(around element: Int, in view: TreeView, limit: Int) -> [Int]? {
        var subjects: [Int] = []
        var ancestor = view.parent(element)
        while ancestor >= 0 { subjects.append(ancestor); ancestor = view.parent(ancestor) }
        let parent = view.parent(element)
        var sibling = parent >= 0 ? view.firstChild(parent) : element
        var following = false
        while sibling >= 0 {
            subjects.append(sibling)
            if following {
                var stack = [view.firstChild(sibling)]
                while let start = stack.popLast() {
                    var child = start
                    while child >= 0 {
                        subjects.append(child)
                        stack.append(view.firstChild(child))
                        child = view.next(child)
                    }
                    if subjects.count > limit { return nil }
                }
            }
            if sibling == element { following = true }
            sibling = view.next(sibling)
            if subjects.count > limit { return nil }
        }
        return subjects
    }
}

extension AxisSizing {
    /// Anything may size it: a stylesheet that cannot be read.
    static let unknown = AxisSizing(unset: true, auto: true, fixed: true, relative: true, pixels: nil, limited: true)
}
