/// One remote image reference found in a page: what it points to, where it is, and the exact bytes
/// to replace to localise it.
public struct ImageReference: Sendable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// `<img src>`
        case imgSrc = "img-src"
        /// a candidate of `<img srcset>`
        case imgSrcset = "img-srcset"
        /// a candidate of `<picture><source srcset>`
        case sourceSrcset = "source-srcset"
        /// `![alt](url)`
        case markdownImage = "markdown-image"
        /// `[label]: url`, used by a reference-style image
        case markdownDefinition = "markdown-definition"
    }

    /// How the replacement URL has to be written into `range`.
    public enum Syntax: Sendable, Hashable {
        /// An attribute value (or part of one); `quote` is `"`, `'` or nil when unquoted.
        case attribute(quote: UInt8?)
        /// A Markdown link destination; `angle` when written as `<...>`.
        case markdownDestination(angle: Bool)
        /// The `]`, `][]` or `][label]` of a reference-style Markdown image whose definition may also serve
        /// a link: replaced by `](url "title")`, so the link keeps its URL.
        case markdownInlinedReference(title: String?)
    }

    public var kind: Kind
    public var url: RemoteURL
    public var location: SourceLocation
    /// Bytes to replace: the URL as written (for a reference image given its own destination, the
    /// `]`, `][]` or `][label]` after its description).
    public var range: Range<Int>
    public var syntax: Syntax
    /// For `<img src>`: the element, for turning it into `<picture>` markup.
    public var element: ImageElement?

    /// The variants this reference asks for: the configured ones, or its element's overrides.
    public func request(over base: VariantRequest) -> Result<VariantRequest, VariantRequest.OverrideError> {
        guard let element, element.widthsOverride != nil || element.formatsOverride != nil else { return .success(base) }
        return VariantRequest.parse(widths: element.widthsOverride, formats: element.formatsOverride, over: base)
    }
}

/// The facts about an `<img>` element that markup generation needs.
public struct ImageElement: Sendable, Hashable {
    /// Byte range of the start tag.
    public var tagRange: Range<Int>
    /// Where added attributes go: before `>` or `/>`.
    public var insertionOffset: Int
    /// Lower-cased names of the attributes the author wrote.
    public var attributeNames: Set<String>
    /// The author's `sizes`, if any.
    public var sizes: String?
    /// Inside a `<picture>`: its sources are the author's, so the `<img>` is only localised.
    public var inPicture: Bool
    /// `data-imgbake-widths` and `data-imgbake-formats`, as written (decoded).
    public var widthsOverride: String?
    public var formatsOverride: String?

    public var hasSrcset: Bool { attributeNames.contains("srcset") }
}

/// What scanning one page produced.
public struct PageScan: Sendable {
    public var file: SourceFile
    public var references: [ImageReference]
    public var diagnostics: [Diagnostic]
    /// The page's `<base href>` when it is remote: relative references resolve against it, and so
    /// would a local `/_img/...` one.
    public var remoteBase: (url: RemoteURL, location: SourceLocation)?
    /// Markdown only: every image node in document order (but those in another image's description).
    public var markdownImages: [MarkdownImageSlot] = []
}

/// A Markdown image node and the reference (inline destination or definition) that decides its URL,
/// so that a rewrite can be checked by parsing the result again.
public struct MarkdownImageSlot: Sendable {
    /// The URL cmark-gfm parsed for the image.
    public var written: String
    /// Index into `PageScan.references`, nil when the image is not localised.
    public var reference: Int?
    /// The whole `![alt](url "title")` or `![alt][label]`, when its position could be confirmed: what
    /// `markdown = "html"` replaces with markup.
    public var span: Range<Int>?
    /// The image description as plain text (what HTML's `alt` gets).
    public var alt: String = ""
    public var title: String?
    /// The resolved URL, when it is remote.
    public var url: RemoteURL?
}
