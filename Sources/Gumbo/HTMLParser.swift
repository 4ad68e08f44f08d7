import CGumbo
import CShims.Stack

/// Parses HTML with gumbo (the HTML5 tree-building algorithm, so `<script>`, `<style>`, comments and
/// `<textarea>` contents are never mistaken for markup) and returns the elements asked for, as values
/// with byte ranges into the input. The gumbo tree is freed before returning.
public enum HTMLParser {
    /// The gumbo this binary links, e.g. "0.10.1" (gumbo has no call that says; the stack records it).
    public static let libraryVersion: String = IMGBAKE_STACK_GUMBO_VERSION

    /// Elements whose tag is in `tags` (SVG elements written `svg:image`), or that carry one of
    /// `attributes`, in document order; for those in `textOf`, the range of their text too.
    /// Parser-inserted elements (with no bytes in the input) are skipped.
    public static func elements(in input: UnsafeRawBufferPointer, tags: Set<String>, attributes wanted: Set<String> = [],
                                textOf: Set<String> = []) -> [HTMLElement] {
        walk(input, tags: tags, attributes: wanted, textOf: textOf, tree: false).elements
    }

    /// The elements `elements(in:…)` gives, each with its place in the document's whole element tree
    /// (`HTMLElement.treeIndex`), and that tree: one parse for both.
    public static func document(in input: UnsafeRawBufferPointer, tags: Set<String>, attributes wanted: Set<String> = [],
                                textOf: Set<String> = []) -> (elements: [HTMLElement], tree: HTMLTree) {
        let walked = walk(input, tags: tags, attributes: wanted, textOf: textOf, tree: true)
        return (walked.elements, HTMLTree.linked(walked.nodes))
    }

    private static func walk(_ input: UnsafeRawBufferPointer, tags: Set<String>, attributes wanted: Set<String>,
                             textOf: Set<String>, tree: Bool) -> (elements: [HTMLElement], nodes: [HTMLTree.Node]) {
        guard let base = input.baseAddress, input.count > 0 else { return ([], []) }
        let chars = base.assumingMemoryBound(to: CChar.self)
        var options = Self.options
        guard let output = gumbo_parse_with_options(&options, chars, input.count) else { return ([], []) }
        defer { gumbo_destroy_output(&options, output) }

        var found: [HTMLElement] = []
        var nodes: [HTMLTree.Node] = []
        // Depth-first, children pushed in reverse so elements come out in document order; each with the
        // nearest `<a>` above it, where on the page it is, and its parent's place in the tree.
        typealias Node = UnsafeMutablePointer<GumboNode>
        var stack: [(node: Node, parent: Node?, link: Node?, place: Place, parentIndex: Int32)] = [(output.pointee.root, nil, nil, Place(), -1)]
        while let (node, parent, link, place, parentIndex) = stack.popLast() {
            guard node.pointee.type == GUMBO_NODE_ELEMENT || node.pointee.type == GUMBO_NODE_TEMPLATE else { continue }
            let element = node.pointee.v.element
            let name = tagName(element)
            let namespace = element.tag_namespace == GUMBO_NAMESPACE_SVG ? "svg" : element.tag_namespace == GUMBO_NAMESPACE_HTML ? "html" : "mathml"
            let index = Int32(nodes.count)
            if tree {
                var treeNode = HTMLTree.Node(tag: name, namespace: namespace, attributes: decodedAttributes(of: element))
                treeNode.parent = parentIndex
                treeNode.hasText = hasText(element)
                nodes.append(treeNode)
            }
            let asked = namespace == "html" ? tags.contains(name) : tags.contains(namespace + ":" + name)
            if asked || (!wanted.isEmpty && hasAttribute(element, wanted)),
               let tagRange = range(of: element.original_tag, in: input), !tagRange.isEmpty {
                var item = HTMLElement(
                    tag: name, tagRange: tagRange,
                    attributes: attributes(of: element, in: input),
                    parentTag: parent.map { tagName($0.pointee.v.element) })
                item.namespace = namespace
                if tree { item.treeIndex = Int(index) }
                if textOf.contains(name) { item.textRange = textRange(of: element, in: input) }
                if let link { item.enclosingLink = attributes(of: link.pointee.v.element, in: input) }
                item.landmarks = place.landmarks
                item.contentStart = place.contentStart
                item.endTagRange = range(of: element.original_end_tag, in: input).flatMap { $0.isEmpty ? nil : $0 }
                found.append(item)
            }
            let isLink = namespace == "html" && element.tag == GUMBO_TAG_A
            let inside = place.entering(Place.landmark(name, role: role(of: element)), namespace: namespace,
                                        at: range(of: element.original_tag, in: input)?.lowerBound)
            let children = element.children
            for i in stride(from: Int(children.length) - 1, through: 0, by: -1) {
                if let child = children.data[i]?.assumingMemoryBound(to: GumboNode.self) {
                    stack.append((child, node, isLink ? node : link, inside, index))
                }
            }
        }
        return (found, nodes)
    }

    /// Names and decoded values, as the DOM has them.
    private static func decodedAttributes(of element: GumboElement) -> [(name: String, value: String)] {
        let vector = element.attributes
        var result: [(name: String, value: String)] = []
        result.reserveCapacity(Int(vector.length))
        for i in 0..<Int(vector.length) {
            guard let attribute = vector.data[i]?.assumingMemoryBound(to: GumboAttribute.self).pointee else { continue }
            result.append((String(cString: attribute.name), String(cString: attribute.value)))
        }
        return result
    }

    /// A child that is text other than white space (`:empty` does not match then).
    private static func hasText(_ element: GumboElement) -> Bool {
        let children = element.children
        for i in 0..<Int(children.length) {
            guard let child = children.data[i]?.assumingMemoryBound(to: GumboNode.self) else { continue }
            if child.pointee.type == GUMBO_NODE_TEXT || child.pointee.type == GUMBO_NODE_CDATA { return true }
        }
        return false
    }

    private static func hasAttribute(_ element: GumboElement, _ names: Set<String>) -> Bool {
        let vector = element.attributes
        for i in 0..<Int(vector.length) {
            if let attribute = vector.data[i]?.assumingMemoryBound(to: GumboAttribute.self).pointee,
               names.contains(String(cString: attribute.name)) { return true }
        }
        return false
    }

    /// The bytes of an element's text children (a `<style>` has one text node).
    private static func textRange(of element: GumboElement, in input: UnsafeRawBufferPointer) -> Range<Int>? {
        var lower: Int?, upper = 0
        let children = element.children
        for i in 0..<Int(children.length) {
            guard let child = children.data[i]?.assumingMemoryBound(to: GumboNode.self),
                  child.pointee.type == GUMBO_NODE_TEXT || child.pointee.type == GUMBO_NODE_WHITESPACE || child.pointee.type == GUMBO_NODE_CDATA,
                  let piece = range(of: child.pointee.v.text.original_text, in: input) else { continue }
            lower = min(lower ?? piece.lowerBound, piece.lowerBound)
            upper = max(upper, piece.upperBound)
        }
        return lower.map { $0..<upper }
    }

    /// Where on a page the walk is: the landmarks around it and where its content starts.
    struct Place {
        static let landmarks: Set<String> = ["main", "article", "header", "nav", "footer", "aside"]
        /// ARIA roles that make any element one of these (Sphinx's `<div class="body" role="main">`).
        static let roles = ["main": "main", "article": "article", "banner": "header", "navigation": "nav",
                            "contentinfo": "footer", "complementary": "aside"]

        /// The landmark an element is, by its tag or its role.
        static func landmark(_ tag: String, role: String?) -> String {
            role.flatMap { roles[$0] } ?? tag
        }
        var landmarks: [String] = []
        var contentStart: Int?

        /// The place inside an element named `name` whose start tag is at `offset`.
        func entering(_ name: String, namespace: String, at offset: Int?) -> Place {
            guard namespace == "html" else { return self }
            var inside = self
            if Self.landmarks.contains(name) { inside.landmarks.append(name) }
            if let offset, name == "main" || name == "article" || (name == "body" && contentStart == nil) {
                // The outermost main or article: an article inside main is still main's content.
                if name == "body" || !landmarks.contains(where: { $0 == "main" || $0 == "article" }) { inside.contentStart = offset }
            }
            return inside
        }
    }

    /// gumbo's defaults, but no parse errors kept: nothing reads them, and each error holds a copy of
    /// the open elements, so n unclosed tags would take memory in n² (gigabytes for a page of a
    /// hundred kilobytes of `<div>`).
    static var options: GumboOptions {
        var options = kGumboDefaultOptions
        options.max_errors = 0
        return options
    }

    /// The element's `role` attribute, lower-cased.
    private static func role(of element: GumboElement) -> String? {
        let vector = element.attributes
        for i in 0..<Int(vector.length) {
            guard let attribute = vector.data[i]?.assumingMemoryBound(to: GumboAttribute.self).pointee,
                  String(cString: attribute.name) == "role" else { continue }
            return String(cString: attribute.value).lowercased()
        }
        return nil
    }

    private static func tagName(_ element: GumboElement) -> String {
        if element.tag != GUMBO_TAG_UNKNOWN { return String(cString: gumbo_normalized_tagname(element.tag)) }
        var piece = element.original_tag
        gumbo_tag_from_original_text(&piece)
        guard let data = piece.data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: piece.length), as: UTF8.self).lowercased()
    }

    /// The bytes of an attribute's value after its name, quotes included, as the HTML tokenizer reads
    /// them: white space, `=`, white space, then a quoted value or one up to white space or `>`.
    private static func rawValue(after nameEnd: Int, in input: UnsafeRawBufferPointer) -> Range<Int>? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D }
        var i = nameEnd
        while i < input.count, isSpace(input[i]) { i += 1 }
        guard i < input.count, input[i] == UInt8(ascii: "=") else { return nil }
        i += 1
        while i < input.count, isSpace(input[i]) { i += 1 }
        guard i < input.count else { return nil }
        let start = i
        if input[i] == UInt8(ascii: "\"") || input[i] == UInt8(ascii: "'") {
            let quote = input[i]
            i += 1
            while i < input.count, input[i] != quote { i += 1 }
            return i < input.count ? start..<i + 1 : nil
        }
        while i < input.count, !isSpace(input[i]), input[i] != UInt8(ascii: ">") { i += 1 }
        return i > start ? start..<i : nil
    }

    private static func attributes(of element: GumboElement, in input: UnsafeRawBufferPointer) -> [HTMLAttribute] {
        let base = input.baseAddress!
        var result: [HTMLAttribute] = []
        let vector = element.attributes
        for i in 0..<Int(vector.length) {
            guard let attribute = vector.data[i]?.assumingMemoryBound(to: GumboAttribute.self).pointee,
                  let nameRange = range(of: attribute.original_name, in: input) else { continue }
            var valueRange = nameRange.upperBound..<nameRange.upperBound
            var quote: UInt8?
            var end = nameRange.upperBound
            // The value's bytes as the tokenizer reads them after the name, not gumbo's
            // `original_value`, which around character references in unquoted values can be empty
            // (`src=&quot>`) or start and end elsewhere (found by fuzz-html-rewrite): a rewrite would
            // splice at the wrong bytes.
            if let raw = rawValue(after: nameRange.upperBound, in: input) {
                end = raw.upperBound
                let first = base.load(fromByteOffset: raw.lowerBound, as: UInt8.self)
                let last = base.load(fromByteOffset: raw.upperBound - 1, as: UInt8.self)
                if (first == UInt8(ascii: "\"") || first == UInt8(ascii: "'")) && raw.count >= 2 && last == first {
                    quote = first
                    valueRange = raw.lowerBound + 1..<raw.upperBound - 1
                } else {
                    valueRange = raw
                }
            }
            result.append(HTMLAttribute(
                name: String(cString: attribute.name), value: String(cString: attribute.value),
                range: nameRange.lowerBound..<end, valueRange: valueRange, quote: quote))
        }
        return result
    }

    /// The byte range a gumbo string piece covers in the input, or nil if it points elsewhere.
    private static func range(of piece: GumboStringPiece, in input: UnsafeRawBufferPointer) -> Range<Int>? {
        guard let data = piece.data, let base = input.baseAddress else { return nil }
        let start = UnsafeRawPointer(data) - base
        guard start >= 0, start + piece.length <= input.count else { return nil }
        return start..<start + piece.length
    }
}
