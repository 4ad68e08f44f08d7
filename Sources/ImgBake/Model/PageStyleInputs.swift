import Gumbo

/// What decides how an HTML page lays out its images, as its scan found it: the document's element
/// tree, the stylesheets it applies (in cascade order), its scripts, and what its
/// Content-Security-Policy allows. `PageLayout` reads it with the site's stylesheet and script files.
public struct PageStyleInputs: Sendable {
    public var tree: HTMLTree
    public var stylesheets: [StylesheetSource] = []
    public var scripts: [ScriptSource] = []
    /// A `<meta http-equiv="Content-Security-Policy">` forbids `style` attributes.
    public var forbidsStyleAttributes = false

    public init(tree: HTMLTree) { self.tree = tree }
}

/// A stylesheet a page applies: a file of the site (`<link rel=stylesheet>`), one elsewhere (another
/// host: what it says is not known), or a `<style>` element's text; with its `media`.
public enum StylesheetSource: Sendable, Hashable {
    case file(String, media: String?)
    case elsewhere(String, media: String?)
    case inline(String, media: String?)
}

/// A script a page runs: a file of the site, one elsewhere (not known), or a `<script>`'s text.
public enum ScriptSource: Sendable, Hashable {
    case file(String)
    case elsewhere(String)
    case inline(String)
}

/// Where a stylesheet or script a page links is.
public enum AssetPlace: Sendable, Hashable {
    /// A file of the site, by its path in it.
    case site(String)
    /// Another host, outside the site, a `data:` URL: its content is not known.
    case elsewhere
}
