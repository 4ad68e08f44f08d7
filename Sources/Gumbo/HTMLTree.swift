/// Every element of a parsed document, as a browser's DOM has them: tag, attributes, and where each
/// stands among its parent's children. What CSS selectors are matched against (which rules size an
/// `<img>`, which a wrapper would stop matching); text nodes are left out, as selectors never name them.
///
/// Elements are numbered in document order (depth first); relations are indices into `nodes`, -1 where
/// there is none.
public struct HTMLTree: Sendable {
    public struct Node: Sendable {
        /// Lower-cased tag name.
        public var tag: String
        /// `html`, `svg` or `mathml`.
        public var namespace: String
        /// Attributes as a browser sees them (names lower-cased, values decoded).
        public var attributes: [(name: String, value: String)]
        public var parent: Int32 = -1
        public var previousSibling: Int32 = -1
        public var nextSibling: Int32 = -1
        public var firstChild: Int32 = -1
        /// Whether the element has a text child that is not white space (for `:empty`).
        public var hasText = false

        public func attribute(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }
    }

    public var nodes: [Node]

    public init(nodes: [Node]) { self.nodes = nodes }
}

extension HTMLTree {
    /// Builds the tree from its nodes in document order, each with its parent set: the sibling links
    /// follow from the order.
    static func linked(_ nodes: [Node]) -> HTMLTree {
        var nodes = nodes
        var lastChild = [Int32](repeating: -1, count: nodes.count)
        for index in nodes.indices {
            let parent = Int(nodes[index].parent)
            guard parent >= 0 else { continue }
            let previous = lastChild[parent]
            if previous >= 0 {
                nodes[Int(previous)].nextSibling = Int32(index)
                nodes[index].previousSibling = previous
            } else {
                nodes[parent].firstChild = Int32(index)
            }
            lastChild[parent] = Int32(index)
        }
        return HTMLTree(nodes: nodes)
    }
}
