/// What the page around one `<img>` allows imgbake's rewrite to write without changing how the page
/// lays out or what its scripts find: whether a `<picture>` wrapper is safe, what the page's CSS and
/// the author say about the image's size, and which attributes a selector of the page tests.
/// Made by `PageLayout` from the page's element tree, its stylesheets and its scripts; the markup
/// (`ImageMarkup`) writes what it allows.
struct ImageLayout: Sendable, Hashable {
    enum Wrapper: Sendable, Hashable {
        case safe
        /// Why not: a selector that would match differently, a script, a policy.
        case unsafe(String)
    }

    var wrapper: Wrapper
    var box: BoxSizing
    /// Attributes imgbake would add that a selector of the page tests on this image (`img[width]`,
    /// `img:not([loading])`): added, they would restyle it, so they are left out.
    var testedAttributes: Set<String> = []
    /// The page's Content-Security-Policy allows `style` attributes.
    var styleAttributes = true
    /// Made from the page's tree and styles (false: `unknownPage`).
    var pageKnown = true

    /// Nothing known of the page (no tree: Markdown written as HTML, a fragment): the wrapper is safe
    /// (nothing can select it), and the size is the image's own.
    static let unknownPage = ImageLayout(wrapper: .safe, box: BoxSizing(), pageKnown: false)

    var wrapperIsSafe: Bool { wrapper == .safe }
}

/// What can decide the size of an image's box, per axis, from every rule of the page that matches it
/// and its `style` attribute: the cascaded value on every screen, and any other a conditional rule
/// (`@media`, `@supports`, a `:hover`) may give instead.
struct BoxSizing: Sendable, Hashable {
    var width = AxisSizing()
    var height = AxisSizing()
    /// An `aspect-ratio` may apply.
    var aspectRatio = false
    /// It may be a flex or grid item: the container sizes it (stretch, flex-basis), not its attributes.
    var item = false
    /// Its size may count towards a box sized by its content (a flex or grid item, a float, an
    /// `inline-block`, a table cell around it): there a percentage width is worked out from the image's
    /// own width, as `auto` is.
    var contentSized = false

    /// Anything may size it: a stylesheet that cannot be read, a script that may move it.
    static let unknown = BoxSizing(width: .unknown, height: .unknown, aspectRatio: true, item: true, contentSized: true)
}

struct AxisSizing: Sendable, Hashable {
    /// On some screen, no rule sets it (the attribute, if any, decides).
    var unset = true
    /// On some screen it is `auto` (or `initial`, `unset`…).
    var auto = false
    /// On some screen it is a length (`100px`, `10em`).
    var fixed = false
    /// On some screen it is relative to the box around it (`80%`, `fit-content`): fixed by CSS there,
    /// unless that box is sized by its content.
    var relative = false
    /// When on every screen it is the same length in CSS pixels (`style="height: 100px"`).
    var pixels: Int?
    /// A `min-` or `max-` of the axis may apply (`max-width: 100%`).
    var limited = false

    /// Nothing but the attributes decide it.
    static let free = AxisSizing()

    /// Set on every screen, to something other than `auto`.
    var surelyFixed: Bool { (fixed || relative) && !unset && !auto }
    /// Never set to anything but `auto` (or not at all).
    var neverFixed: Bool { !fixed && !relative }
}

extension ImageLayout {
    /// The size the page shows the image at, where it fixes one: a width in CSS pixels (its CSS, or its
    /// `width` attribute where no CSS sets the width), else a height the width follows.
    func shown(authorWidth: Int?, authorHeight: Int?) -> ShownSize? {
        let width = box.width, height = box.height
        let widthOnlyByAttribute = width.unset && !width.auto && !width.fixed
        if let pixels = width.pixels { return .width(pixels) }
        if widthOnlyByAttribute, let authorWidth, authorWidth > 0 { return .width(authorWidth) }
        guard width.neverFixed else { return nil }
        if let pixels = height.pixels { return .height(pixels) }
        if widthOnlyByAttribute, height.unset && !height.auto && !height.fixed, let authorHeight, authorHeight > 0 { return .height(authorHeight) }
        return nil
    }
}
