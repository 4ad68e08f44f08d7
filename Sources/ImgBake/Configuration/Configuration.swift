/// Everything a build needs to know, as typed values. The CLI and `imgbake.toml` produce one;
/// nothing below the CLI parses flags or strings.
public struct Configuration: Sendable {
    /// The site folder to scan.
    public var site: String
    /// Where rewritten pages and images go; nil rewrites the site in place.
    public var outputDirectory: String?
    public var output = OutputSettings()
    public var images = ImageSettings()
    public var fetch = FetchSettings()
    public var cache: CacheSettings
    /// How many images are decoded and encoded at once (each with one libvips thread).
    public var jobs: Int
    /// Image failures fail the build (exit 1).
    public var strict = false
    /// Resolve from the cache only and write nothing; exit 1 if a reference would stay remote or
    /// would need the network (for pull-request checks).
    public var check = false
    /// `--report` (given twice for both) or `build.report`: where the report is written, a page for a
    /// name ending in `.html`, JSON for any other.
    public var reportPaths: [String] = []
    /// The report, when one file is asked for (`build.report` names one).
    public var reportPath: String? {
        get { reportPaths.first }
        set { reportPaths = newValue.map { [$0] } ?? [] }
    }
    /// `--depfile`: a Make rule with everything the build read.
    public var depfilePath: String?
    /// Collect the report even without `reportPath` (for `--verbose`).
    public var wantsReport = false
    /// `--shard K/N`: resolve and transform only this shard's images, upload them to the remote cache,
    /// write no pages and no image files.
    public var shard: Shard?
    /// The configuration file read, if any (a prerequisite in the depfile).
    public var configurationFile: String?
    /// Larger pages are left as they are, with a warning: parsing HTML takes about 15 times a page's size
    /// in memory, and no real page comes near this.
    public var maxPageBytes = 16 << 20
    /// What an `<img>` without `alt` is.
    public var requireAlt = AltPolicy.warn
    /// Site files that are not scanned or rewritten (a theme's own files, say); with `--out` they are
    /// copied as they are.
    public var exclude: [Glob] = []

    public init(site: String, cacheDirectory: String, jobs: Int = Configuration.defaultJobs) {
        self.site = site
        self.cache = CacheSettings(directory: cacheDirectory)
        self.jobs = jobs
    }

    /// The output root: `outputDirectory`, or the site itself when rewriting in place.
    public var outputRoot: String { outputDirectory ?? site }

    /// The image settings the build makes variants by: with `output.markup = "img"` no `<img>` sits in a
    /// `<picture>` of imgbake's, and its `srcset` offers the source's format where WebP is not smaller,
    /// so that format is made at every width. With `"auto"`, an `<img>` left outside a `<picture>` gets
    /// a WebP `srcset` and the one fallback file, as a `<picture>` does.
    public var madeImages: ImageSettings {
        var images = images
        if output.markup == .img || output.markup == .localize { images.fallback = .everyWidth }
        return images
    }

    public static var defaultJobs: Int { max(1, SystemInfo.processorCount) }
}

public enum MarkupMode: String, Sendable, CaseIterable {
    /// `<picture>` where the page shows nothing would see it (`PageLayout`), `<img srcset>` elsewhere.
    case auto
    /// `<img src>` becomes `<picture>` with a `<source>` per modern format.
    case picture
    /// `<img src>` gets `srcset` in the best widely supported format.
    case img
    /// URLs are replaced one for one; no markup is added.
    case localize
}

public enum MarkdownMode: String, Sendable, CaseIterable {
    /// Destinations point at the local fallback image.
    case localize
    /// Images become the template's HTML.
    case html
}

/// With `--out`, which of the site's image files are copied into the output.
public enum OriginalsPolicy: String, Sendable, CaseIterable {
    /// Every file of the site, images too.
    case all
    /// An image file only while some page, feed, stylesheet or other text file of the output still
    /// mentions it after rewriting: originals whose every reference now points at variants stay out.
    case referenced
}

/// `output.relative_urls`: how an HTML page (and, when forced, a stylesheet) refers to image files.
public enum RelativeURLPolicy: String, Sendable, CaseIterable {
    /// Each HTML page as its own links are written (`PageLinks.arePageRelative`): relative on a site
    /// that opens from disk (Sphinx, MkDocs), the public path on one served from its root (Hugo,
    /// Jekyll's `relative_url`). Stylesheets keep the public path.
    case auto
    /// `true`: every HTML page and stylesheet relative to itself.
    case always = "true"
    /// `false`: the public path everywhere.
    case never = "false"
}

public enum LCPPolicy: String, Sendable, CaseIterable {
    /// The first large image in the first screen of the page's content.
    case auto
    /// None: only `eager` decides what is not lazy.
    case off
}

/// What a link around an image that points at the same image (Sphinx's image references, lightbox
/// plugins: `<a href="x.jpg"><img src="x.jpg"></a>`) becomes.
public enum ImageLinkPolicy: String, Sendable, CaseIterable {
    /// The widest variant in the image's own format, like any one-for-one reference.
    case widest
    /// The link is left as it is (it stays remote, or keeps pointing at the original).
    case off
}

public struct OutputSettings: Sendable {
    /// Folder under the output root that receives the images.
    public var imagesDirectory = "_img"
    /// How pages refer to `imagesDirectory`: a path (`/_img/`, `/blog/_img/`) or a full URL (a CDN).
    public var publicPath = "/_img/"
    public var markup = MarkupMode.auto
    public var markdown = MarkdownMode.localize
    /// Used when the author gave no `sizes`.
    public var sizes = "(max-width: 960px) 100vw, 960px"
    /// A folder whose `.mustache` files replace the built-in templates of the same name.
    public var templatesDirectory: String?
    /// The first N images of a page load eagerly (no `loading="lazy"`): the one at the top is
    /// usually the largest contentful paint.
    public var eager = 1
    /// The absolute URL the site is served at (`https://example.com/blog/`): social cards and feeds
    /// need absolute image URLs, and URLs under it are the site's own files.
    public var baseURL: RemoteURL?
    /// The URL path the site folder is served at (`/blog/` for a site deployed under a sub-path):
    /// `/blog/images/a.jpg` is the site's `images/a.jpg`. Defaults to `base_url`'s path, else `/`.
    public var siteRoot = "/"
    /// A link around an image to the same image: localised (the widest variant) or left.
    public var imageLinks = ImageLinkPolicy.widest
    /// With `--out`: every image file of the site copied, or only those still mentioned.
    public var originals = OriginalsPolicy.all
    /// How far down a page its first screen reaches, in bytes of markup from the start of `main` or
    /// `article` (twice that from `body` when the page has neither): images there are not lazy, and the
    /// largest of them gets priority (jampack's measure).
    public var foldBytes = 5000
    /// Whether the page's likely Largest Contentful Paint image is found and given priority
    /// (`fetchpriority="high"`, no lazy loading, a preload for a background).
    public var lcp = LCPPolicy.auto
    /// Whether pages refer to image files relative to themselves (`../_img/a.webp`), as Hugo's
    /// `relativeURLs`, so the site works from any folder and opened from disk. Feeds and social cards
    /// stay absolute (under `base_url`); Markdown keeps the public path (its page's URL is the
    /// generator's to decide).
    public var relativeURLs = RelativeURLPolicy.auto
    /// Images in the first screen whose file is at most this many bytes are written into the page as
    /// `data:` URIs (0: never), unless the page's Content-Security-Policy forbids `data:` images.
    public var inlineBytes = 1500

    public init() {}

    /// `base_url` + a root-relative path: the absolute URL feeds and social cards need.
    public func absolute(_ path: String) -> String? {
        guard let baseURL else { return nil }
        if path.contains("://") { return path }
        let origin = baseURL.scheme + "://" + baseURL.host + (baseURL.port.map { ":\($0)" } ?? "")
        return origin + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// The images folder's path where the site is served: `public_path` unless it is given.
    public var localPublicPath: String { siteRoot + imagesDirectory + "/" }

    /// True when `publicPath` is an absolute URL, which stays correct under a remote `<base href>`.
    public var publicPathIsAbsolute: Bool { publicPath.contains("://") && RemoteURL.resolve(publicPath) != nil }
}

public struct ImageSettings: Sendable {
    /// Target widths; each is capped at the source width (never upscaled). 1,320 is there for phones:
    /// a full-width image on one needs its CSS width times its pixel ratio (360–430 × 2.625–3, up to
    /// 1,290 px), and with nothing between 960 and 1,920 every phone would take the 1,920 px file
    /// (`make vitals` measures a phone's page bytes).
    public var widths = [480, 960, 1320, 1920]
    /// Best first; the last `original` is the `<img>` fallback. AVIF first: at the same quality target it
    /// is the smallest file for most of the bench's variants (Benchmarks/formats.py), and every major
    /// browser since 2024 takes it; WebP for the rest. JPEG XL (`jxl`) is asked for by name: beside AVIF
    /// it is kept for few variants at 1.3× the build's CPU (docs/MEASUREMENTS.md, "Formats").
    public var formats: [OutputFormat] = [.avif, .webp, .original]
    /// How many files in the source's own format an `<img>` in a `<picture>` gets: one, at
    /// `fallbackWidth` (every browser that takes a WebP or AVIF `<source>` never downloads it), or one per
    /// width.
    public var fallback = FallbackMode.one
    /// The width of that one file: the widest of `widths` up to it (the narrowest when all are wider).
    public var fallbackWidth = 960
    /// `fallbackWidth` when a `<picture>` gets one fallback file, nil when it gets one per width.
    public var oneFallbackWidth: Int? { fallback == .one ? fallbackWidth : nil }
    public var quality = Quality()
    /// EXIF fields to keep in outputs (`copyright`, `artist`); GPS, serial numbers and MakerNotes never.
    public var keepMetadata: [String] = []
    /// Images with more pixels (width × height × frames) are refused before decoding.
    public var maxPixels = 100_000_000
    /// Animations with more frames are refused.
    public var maxFrames = 1000
    /// What templates get as a placeholder while the image loads.
    public var placeholder = Placeholder.none
    /// Which remote SVG files are copied to the site's own origin (where their scripts would run).
    public var svg = SVGPolicy.safe
    /// The site's own images go through the same pipeline as remote ones.
    public var local = true
    /// Markdown front-matter keys whose values are images (a list value: each item).
    public var frontMatterKeys = ["image", "cover", "thumbnail", "images", "og_image"]

    public init() {}

    /// Per format: a fixed quality or `auto` (`QualitySettings.swift`). Every lossy format's is chosen
    /// per image by default, to one SSIM target: the worst images come out better than at one quality
    /// for all, and formats compare at equal quality when one is dropped for another that is smaller
    /// (docs/MEASUREMENTS.md, "Quality per image").
    public struct Quality: Sendable, Hashable {
        public var webp = QualityChoice.auto(.defaults(for: .webp))
        public var avif = QualityChoice.auto(.defaults(for: .avif))
        public var jpeg = QualityChoice.auto(.defaults(for: .jpeg))
        public var jxl = QualityChoice.auto(.defaults(for: .jxl))
        public init() {}

        public func choice(for format: ImageFormat) -> QualityChoice? {
            switch format {
            case .webp: webp
            case .avif: avif
            case .jpeg: jpeg
            case .jxl: jxl
            default: nil
            }
        }
    }
}

/// An `<img>` without `alt` (not `alt=""`, which says the image is decoration): screen readers read its
/// file name instead. eleventy-img fails the build on it.
public enum AltPolicy: String, Sendable, CaseIterable {
    case warn, error, off
}

/// SVG is a document, not a picture: copied to the site's own origin, its scripts run there for anyone
/// who opens its URL (stored XSS), and its external references load from there.
public enum SVGPolicy: String, Sendable, CaseIterable {
    /// Copy an SVG only when it has no script, event handler, `javascript:` URL, embedded document or
    /// external reference; otherwise the reference stays remote, with a warning that says why.
    case safe
    /// Copy every SVG byte for byte.
    case copy
    /// Never copy an SVG.
    case refuse
}

/// The `<img>` fallback of a `<picture>` that has a modern `<source>`.
public enum FallbackMode: String, Sendable, CaseIterable {
    /// One file in the source's format, at `images.fallback_width`, without `srcset`.
    case one
    /// One file per width, in a `srcset`.
    case everyWidth = "every-width"
}

public enum Placeholder: String, Sendable, CaseIterable {
    case none, color, lqip, blurhash
}

/// How cached originals are trusted.
public enum FetchPolicy: String, Sendable, CaseIterable {
    /// Fresh copies are used, stale ones revalidated.
    case normal
    /// Every cached original is revalidated now.
    case refresh
    /// No network; missing images are warnings.
    case offline
    /// No network; any missing image fails the build.
    case frozen
}

public struct FetchSettings: Sendable {
    public var policy = FetchPolicy.normal
    /// Retry URLs that failed permanently before, instead of skipping them.
    public var retryFailed = false
    public var concurrency = 8
    public var perHost = 4
    public var connectTimeout: Duration = .seconds(10)
    public var timeout: Duration = .seconds(30)
    /// A transfer slower than `lowSpeedLimit` bytes per second for `lowSpeedTime` is abandoned.
    public var lowSpeedLimit = 1024
    public var lowSpeedTime: Duration = .seconds(15)
    public var maxBytes = 50_000_000
    public var retries = 3
    /// First retry delay; doubled each time, with jitter.
    public var retryDelay: Duration = .milliseconds(500)
    /// The longest `Retry-After` that is waited for.
    public var maxRetryAfter: Duration = .seconds(30)
    /// Freshness of a cached original when the server said nothing.
    public var ttl: Duration = .seconds(7 * 24 * 3600)
    /// How long a permanent failure is remembered.
    public var failureTTL: Duration = .seconds(24 * 3600)
    /// How long a host whose name did not resolve is remembered: the builds in that time do not ask it.
    public var unresolvableTTL: Duration = .seconds(5 * 60)
    public var allowPrivateNetworks = false
    /// Query parameters removed from cache keys (names or `*` globs).
    public var stripQuery = ["utm_*", "fbclid", "gclid"]
    /// Per-host key rules.
    public var hostRules: [String: HostKeyRule] = [:]
    /// Per-host extra request headers; `${VAR}` is expanded from the environment at request time.
    public var headers: [String: [String: String]] = [:]
    /// curl's `--connect-to` entries.
    public var connectTo: [String] = []
    /// A CA bundle to trust.
    public var caFile: String?

    public init() {}

    /// No network at all.
    public var isOffline: Bool { policy == .offline || policy == .frozen }
}

/// A per-host cache-key rule.
public enum HostKeyRule: Sendable, Hashable {
    /// Keep only these query parameters.
    case keepOnly([String])
    /// Drop the whole query.
    case ignoreQuery
}

public struct CacheSettings: Sendable {
    public var directory: String
    /// Evict least recently used entries above this many bytes at the end of a build.
    public var maxSize: Int?
    /// A cache shared by machines (`cache.remote`); nil without one, or with `--no-remote`.
    public var remote: RemoteSettings?

    public init(directory: String) { self.directory = directory }
}

extension VariantRequest {
    /// What a reference asks for when its element does not say otherwise.
    public init(_ settings: ImageSettings) {
        self.init(widths: settings.widths, formats: settings.formats)
    }
}
