/// A node of a CommonMark (GFM) document, as a value: its type, its link target and where cmark-gfm
/// says it is. Inline positions are not always right (see TECH-NOTES); block positions are.
public struct MarkdownNode: Sendable {
    /// cmark's type name: `image`, `link`, `code`, `code_block`, `html_block`, `html_inline`,
    /// `paragraph`, `heading`, `table_cell`, ...
    public var type: String
    /// Destination of an image or link, with backslash escapes and entities decoded.
    public var url: String?
    public var title: String?
    /// Text of a code span, code block, HTML block or inline HTML.
    public var literal: String?
    /// 1-based line and byte column of the first and last character.
    public var start: (line: Int, column: Int)
    public var end: (line: Int, column: Int)
    /// Index of the parent node in the flattened document, nil for the document itself.
    public var parent: Int?

    public var isBlock: Bool {
        switch type {
        case "paragraph", "heading", "code_block", "html_block", "block_quote", "list", "item", "table",
             "table_row", "table_header", "table_cell", "thematic_break", "document", "footnote_definition":
            true
        default: false
        }
    }
}
