import CCmarkGFM
import Glibc
import Locking

/// Parses GitHub-flavoured Markdown with cmark-gfm (tables, strikethrough, autolinks, task lists,
/// footnotes) and returns the document flattened in document order. The cmark tree is freed before
/// returning.
public enum MarkdownParser {
    /// The cmark-gfm this binary links, e.g. "0.29.0.gfm.6", as the library says.
    public static var libraryVersion: String { String(cString: cmark_version_string()) }

    private static let registered = Locked(false)
    /// Held while a document is parsed. cmark-gfm 0.29 (Debian 12's) adds each attached extension's
    /// special characters to a process-wide table when it parses inlines and removes them after
    /// (github/cmark-gfm#176, not merged): two parses at once make one miss the other's characters
    /// (`make test` saw a GFM autolink not found while another test parsed). Parsing is a small part
    /// of a build (cmark reads megabytes a second), so parses take turns.
    private static let parsing = Locked(())

    public static func parse(_ input: UnsafeRawBufferPointer) -> [MarkdownNode] {
        withDocument(input) { document, _ in
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
        } ?? []
    }

    /// Renders the document as cmark-gfm's HTML, raw HTML included, after replacing the URL of every
    /// image for which `imageURL` returns one (what a page whose images were rewritten should render as).
    public static func html(_ input: UnsafeRawBufferPointer, imageURL: (String) -> String? = { _ in nil }) -> String {
        withDocument(input) { document, parser in
            let iterator = cmark_iter_new(document)
            defer { cmark_iter_free(iterator) }
            while cmark_iter_next(iterator) != CMARK_EVENT_DONE {
                let node = cmark_iter_get_node(iterator)
                if cmark_node_get_type(node) == CMARK_NODE_IMAGE, cmark_iter_get_event_type(iterator) == CMARK_EVENT_ENTER,
                   let url = cmark_node_get_url(node), let replacement = imageURL(String(cString: url)) {
                    cmark_node_set_url(node, replacement)
                }
            }
            guard let rendered = cmark_render_html(document, CMARK_OPT_UNSAFE | CMARK_OPT_FOOTNOTES,
                                                   cmark_parser_get_syntax_extensions(parser)) else { return "" }
            defer { free(rendered) }
            return String(cString: rendered)
        } ?? ""
    }

    /// Parses `input` with the extensions imgbake uses and hands the document to `body` before freeing it.
    private static func withDocument<T>(_ input: UnsafeRawBufferPointer, _ body: (OpaquePointer, OpaquePointer) -> T) -> T? {
        registerExtensions()
        guard let parser = cmark_parser_new(CMARK_OPT_FOOTNOTES) else { return nil }
        defer { cmark_parser_free(parser) }
        for name in ["table", "strikethrough", "autolink", "tasklist"] {
            if let extensionPointer = cmark_find_syntax_extension(name) {
                cmark_parser_attach_syntax_extension(parser, extensionPointer)
            }
        }
        let parsed: OpaquePointer? = parsing.withLock { _ in
            if let base = input.baseAddress {
                cmark_parser_feed(parser, base.assumingMemoryBound(to: CChar.self), input.count)
            }
            return cmark_parser_finish(parser)
        }
        guard let document = parsed else { return nil }
        defer { cmark_node_free(document) }
        return body(document, parser)
    }

    private static func registerExtensions() {
        registered.withLock { done in
            guard !done else { return }
            cmark_gfm_core_extensions_ensure_registered()
            done = true
        }
    }
}
