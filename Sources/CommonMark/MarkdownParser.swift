import CCmarkGFM
import Synchronization

/// Parses GitHub-flavoured Markdown with cmark-gfm (tables, strikethrough, autolinks, task lists,
/// footnotes) and returns the document flattened in document order. The cmark tree is freed before
/// returning.
public enum MarkdownParser {
    private static let registered = Mutex(false)

    public static func parse(_ input: UnsafeRawBufferPointer) -> [MarkdownNode] {
        registerExtensions()
        guard let parser = cmark_parser_new(CMARK_OPT_FOOTNOTES) else { return [] }
        defer { cmark_parser_free(parser) }
        for name in ["table", "strikethrough", "autolink", "tasklist"] {
            if let extensionPointer = cmark_find_syntax_extension(name) {
                cmark_parser_attach_syntax_extension(parser, extensionPointer)
            }
        }
        if let base = input.baseAddress {
            cmark_parser_feed(parser, base.assumingMemoryBound(to: CChar.self), input.count)
        }
        guard let document = cmark_parser_finish(parser) else { return [] }
        defer { cmark_node_free(document) }

        var nodes: [MarkdownNode] = []
        var stack: [(OpaquePointer, Int?)] = [(document, nil)]
        while let (node, parent) = stack.popLast() {
            let index = nodes.count
            nodes.append(MarkdownNode(
                type: String(cString: cmark_node_get_type_string(node)),
                url: cmark_node_get_url(node).map { String(cString: $0) },
                title: cmark_node_get_title(node).map { String(cString: $0) },
                literal: cmark_node_get_literal(node).map { String(cString: $0) },
                start: (Int(cmark_node_get_start_line(node)), Int(cmark_node_get_start_column(node))),
                end: (Int(cmark_node_get_end_line(node)), Int(cmark_node_get_end_column(node))),
                parent: parent))
            var children: [OpaquePointer] = []
            var child = cmark_node_first_child(node)
            while let current = child {
                children.append(current)
                child = cmark_node_next(current)
            }
            for current in children.reversed() { stack.append((current, index)) }
        }
        return nodes
    }

    private static func registerExtensions() {
        registered.withLock { done in
            guard !done else { return }
            cmark_gfm_core_extensions_ensure_registered()
            done = true
        }
    }
}
