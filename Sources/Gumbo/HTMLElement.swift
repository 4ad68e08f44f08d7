/// An HTML attribute as written in the source: its decoded value and the exact bytes it came from.
public struct HTMLAttribute: Sendable, Hashable {
    /// Lower-cased name.
    public var name: String
    /// Value with character references decoded (what a browser sees).
    public var value: String
    /// Byte range of the whole attribute (`name="value"`) in the input.
    public var range: Range<Int>
    /// Byte range of the value without its quotes; empty at the end of the name when there is no value.
    public var valueRange: Range<Int>
    /// The quote around the value: `"`, `'`, or nil when unquoted or absent.
    public var quote: UInt8?
}

/// An HTML element found in a document: tag, exact tag bytes, attributes and its parent's tag.
public struct HTMLElement: Sendable {
    /// Lower-cased tag name (`img`, `source`, ...).
    public var tag: String
    /// Byte range of the start tag (`<img ...>`) in the input.
    public var tagRange: Range<Int>
    /// Attributes in source order. Duplicates are dropped by the parser: only the first is visible.
    public var attributes: [HTMLAttribute]
    /// The parent element's tag (`picture` for `picture > source`), nil at the root.
    public var parentTag: String?
    /// `svg` for elements of inline SVG (`<image>` there is SVG's, not HTML's `<img>`), else `html`.
    public var namespace: String = "html"
    /// For elements whose text was asked for (`<style>`): the byte range of their text.
    public var textRange: Range<Int>?
    /// The attributes of the nearest `<a>` the element is inside, if any (a link around an image).
    public var enclosingLink: [HTMLAttribute]?
    /// The sectioning elements the element is inside (`main`, `article`, `header`, `nav`, `footer`,
    /// `aside`), outermost first: where on a page it is.
    public var landmarks: [String] = []
    /// Where the content it is part of starts: the start tag of the nearest `main` or `article` above
    /// it, else of `body` (how far down a page an element is, in bytes of markup).
    public var contentStart: Int?
    /// Byte range of the end tag, when the input has one (`</head>`).
    public var endTagRange: Range<Int>?
    /// Its index in the document's `HTMLTree`, when one was built (`HTMLParser.document`).
    public var treeIndex: Int?

    public func attribute(_ name: String) -> HTMLAttribute? {
        attributes.first { $0.name == name }
    }
}
