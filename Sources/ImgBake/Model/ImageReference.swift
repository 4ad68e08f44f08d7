/// One image reference found in a source (a page, a stylesheet, a feed): what it points to, where it
/// is, the exact bytes to replace to localise it, and how the replacement is written there. Every
/// kind of source has a scanner that yields these; the manager, cache and transformer never learn
/// about CSS or feeds.
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
        /// `<video poster>`
        case videoPoster = "video-poster"
        /// `<input type=image src>`
        case inputImage = "input-image"
        /// `<image href>` in inline SVG
        case svgImage = "svg-image"
        /// `<link rel=icon|apple-touch-icon href>`, `<link rel=preload as=image href>`
        case link = "link"
        /// a candidate of `<link rel=preload as=image imagesrcset>`
        case linkSrcset = "link-srcset"
        /// `<meta property=og:image content>`, `<meta name=twitter:image content>`: one absolute URL
        case meta = "meta"
        /// `<a href>` around an `<img>`, pointing at the same image (image references, lightboxes)
        case imageLink = "image-link"
        /// the `image` (`logo`, `thumbnailUrl`) of JSON-LD structured data: one absolute URL, like `meta`
        case jsonLD = "json-ld"
        /// CSS `url(...)` (a `style` attribute, a `<style>` element, a `.css` file)
        case css = "css"
        /// a candidate of CSS `image-set()`
        case cssImageSet = "css-image-set"
        /// a Markdown front-matter value (YAML or TOML)
        case frontMatter = "front-matter"
        /// an image of a feed item (JSON Feed `image`/`banner_image`, RSS/Atom enclosures and media)
        case feed = "feed"
        /// `<img>` in a feed's escaped HTML content
        case feedHTML = "feed-html"
    }

    /// What the reference becomes: the one file that replaces it (the widest in the original format), or
    /// the social-card size, or one candidate per format.
    public enum Target: Sendable, Hashable {
        case fallback
        /// One variant at the width social platforms ask for (1200 px), in the original format.
        case social
        /// `image-set()`: the candidate becomes one candidate per format, with `type()`.
        case formatSet(resolution: String?)
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
        /// Inside CSS `url(...)` or a CSS string; `quote` nil for an unquoted `url(...)`.
        case css(quote: UInt8?)
        /// The same in a `style` attribute (quoted with `attributeQuote`): escaped for CSS, then for HTML.
        case cssInAttribute(quote: UInt8?, attributeQuote: UInt8?)
        /// A whole `image-set()` candidate (URL and descriptors); in a `style` attribute quoted with
        /// `attributeQuote`, the new candidates quote with the other quote.
        case cssCandidate(attributeQuote: UInt8?)
        /// A YAML scalar: plain, `'single'` or `"double"` quoted.
        case yaml(quote: UInt8?)
        /// A TOML string: `"basic"` or `'literal'`.
        case toml(quote: UInt8)
        /// The contents of a JSON string.
        case json
        /// XML: an attribute value with its quote, or text.
        case xml(quote: UInt8?)
        /// An HTML attribute inside XML text that holds escaped HTML: written escaped twice.
        case escapedHTML(quote: UInt8?)
        /// An HTML attribute inside a JSON string that holds HTML (JSON Feed `content_html`).
        case htmlInJSON(quote: UInt8?)
    }

    public var kind: Kind
    /// The image: a remote URL, or a file of the site.
    public var source: ImageSource
    public var location: SourceLocation
    /// Bytes to replace: the URL as written (for a reference image given its own destination, the
    /// `]`, `][]` or `][label]` after its description).
    public var range: Range<Int>
    public var syntax: Syntax
    /// For `<img src>`: the element, for turning it into `<picture>` markup.
    public var element: ImageElement?
    public var target: Target = .fallback
    /// Open Graph and Twitter cards: 1200 px wide.
    public static let socialWidth = 1200
    /// Feeds and social cards need absolute URLs: `output.base_url` + the local path.
    public var absolute = false
    /// Where on an HTML page the reference is (`<img src>` and CSS in a `style` attribute): what decides
    /// which images load first.
    public var placement: Placement?

    public init(kind: Kind, source: ImageSource, location: SourceLocation, range: Range<Int>, syntax: Syntax,
                element: ImageElement? = nil, target: Target = .fallback, absolute: Bool = false) {
        self.kind = kind
        self.source = source
        self.location = location
        self.range = range
        self.syntax = syntax
        self.element = element
        self.target = target
        self.absolute = absolute
    }

    /// The variants this reference asks for: the configured ones, or its element's overrides; a social
    /// card one image at the width platforms ask for; an image the author shows at a width of theirs the
    /// configured widths up to about three times that (a phone's pixels), not more.
    /// `shown`: the size its page shows it at, where the page fixes one (`PageLayout`).
    public func request(over base: VariantRequest, shown: ShownSize? = nil) -> Result<VariantRequest, VariantRequest.OverrideError> {
        if target == .social { return .success(VariantRequest(widths: [Self.socialWidth], formats: [.original])) }
        guard let element else { return .success(base) }
        var request = base
        if element.widthsOverride == nil {
            switch shown {
            case .width(let width)?: request = base.forDisplay(at: width)
            case .height(let height)?: request = base.forDisplay(atHeight: height)
            case nil: break
            }
        }
        guard element.widthsOverride != nil || element.formatsOverride != nil else { return .success(request) }
        return VariantRequest.parse(widths: element.widthsOverride, formats: element.formatsOverride, over: request)
    }
}

/// The size a page shows an image at, in CSS pixels, where it fixes one: its width, or its height with
/// the width following the image's proportions.
public enum ShownSize: Sendable, Hashable {
    case width(Int)
    case height(Int)
}

/// Where on a page an image is, for deciding what loads first: the largest image in the first screen
/// (the likely Largest Contentful Paint) early and with priority, what lies further down lazily.
public struct Placement: Sendable, Hashable {
    /// Inside `main` or `article`: the page's content.
    public var inContent: Bool
    /// Inside `nav`, `footer` or `aside`: the page's frame (menus, sidebars), inside the content too.
    public var inFrame: Bool
    /// Bytes of markup from where the content starts (`main`, `article`, else `body`) to the element;
    /// negative before it (a site header above `main`).
    public var depth: Int
    /// Whether the content start is `main`/`article` (the fold lies nearer) or `body`.
    public var measuredFromContent: Bool
    /// Its class, id, alt text or file name says it is a logo, icon, avatar, emoji or badge.
    public var looksDecorative: Bool
    /// `data-imgbake-lcp="true"` or `"false"`: the author's choice.
    public var lcp: Bool?

    public init(inContent: Bool, inFrame: Bool, depth: Int, measuredFromContent: Bool, looksDecorative: Bool, lcp: Bool?) {
        self.inContent = inContent
        self.inFrame = inFrame
        self.depth = depth
        self.measuredFromContent = measuredFromContent
        self.looksDecorative = looksDecorative
        self.lcp = lcp
    }
}

/// The facts about an `<img>` element that markup generation needs.
public struct ImageElement: Sendable, Hashable {
    /// Byte range of the start tag.
    public var tagRange: Range<Int>
    /// Where added attributes go: before `>` or `/>`.
    public var insertionOffset: Int
    /// The element's index in its page's `HTMLTree` (nil in HTML that is not a whole page).
    public var treeIndex: Int? = nil
    /// The author's quoted `style` attribute, where a declaration can be added to it.
    public var style: StyleAttribute? = nil

    public struct StyleAttribute: Sendable, Hashable {
        /// The value's bytes in the file, without the quotes.
        public var valueRange: Range<Int>
        /// The value, decoded.
        public var value: String
    }
    /// Lower-cased names of the attributes the author wrote.
    public var attributeNames: Set<String>
    /// The author's `sizes`, if any.
    public var sizes: String?
    /// Inside a `<picture>`: its sources are the author's, so the `<img>` is only localised.
    public var inPicture: Bool
    /// `data-imgbake-widths` and `data-imgbake-formats`, as written (decoded).
    public var widthsOverride: String?
    public var formatsOverride: String?
    /// `data-imgbake-markup`: `picture` or `img`, the author's choice for this image over `output.markup`.
    public var markupOverride: String? = nil
    /// The author's `width` and `height`, when they are numbers (checked against the image's shape).
    public var width: Int?
    public var height: Int?
    /// `width` and `height` in CSS pixels from its `style` attribute.
    public var styleWidth: Int? = nil
    public var styleHeight: Int? = nil

    public var hasSrcset: Bool { attributeNames.contains("srcset") }

    /// The width the author gave the image in CSS pixels, from its `style` or its `width` attribute.
    public var displayWidth: Int? { styleWidth ?? width }
}

/// What scanning one page produced.
public struct PageScan: Sendable {
    public var file: SourceFile
    public var references: [ImageReference]
    public var diagnostics: [Diagnostic]
    /// Where the page refers to files of imgbake's own images folder: what keeps them, whatever kind of
    /// reference it is (every scanner's URLs go through `ReferenceResolver`).
    public var outputs: [OutputUse] = []
    /// The page's `<base href>` when it is remote: relative references resolve against it, and so
    /// would a local `/_img/...` one.
    public var remoteBase: (url: RemoteURL, location: SourceLocation)?
    /// Markdown only: every image node in document order (but those in another image's description).
    public var markdownImages: [MarkdownImageSlot] = []
    /// HTML: where `</head>` is, for a preload of a background image that is the page's largest.
    public var headEnd: Int?
    /// HTML: false when the page's Content-Security-Policy (a `<meta http-equiv>`) forbids `data:` images.
    public var allowsDataImages = true
    /// HTML: how the page writes its own links, which `output.relative_urls = "auto"` follows.
    public var links = PageLinks()
    /// A whole HTML page: what decides how it lays out (its element tree, stylesheets, scripts).
    public var styles: PageStyleInputs?
}

/// How an HTML page writes its own links: `<a href>`, `<link href>` and `<script src>`, leaving out
/// absolute URLs, fragments, other schemes and anything naming an image (those are what imgbake
/// rewrites, so an in-place build reads the same counts before and after: the choice comes from the
/// page's bytes alone, and an incremental build makes the cold build's choice).
public struct PageLinks: Sendable, Equatable {
    /// Written relative to the page (`guide.html`, `../_static/a.css`).
    public var pageRelative = 0
    /// Written from the server's root (`/posts/`, `/docs/assets/a.css`).
    public var rootRelative = 0
    /// The page has a `<base href>`: its relative URLs do not start from its own folder.
    public var hasBase = false

    public init(pageRelative: Int = 0, rootRelative: Int = 0, hasBase: Bool = false) {
        self.pageRelative = pageRelative
        self.rootRelative = rootRelative
        self.hasBase = hasBase
    }

    /// The page works wherever its folder is served from, and from disk: its links are relative and
    /// none assumes the server's root (one that does, as a 404 page served at any path must, means
    /// the site is served from a known root, where the public path works too). A page without such
    /// links says nothing, and keeps the public path.
    public var arePageRelative: Bool { pageRelative > 0 && rootRelative == 0 && !hasBase }
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
    /// The image, when it is one imgbake localises.
    public var source: ImageSource?
}
