/// Every key of `imgbake.toml`, in the order the reference lists them. Simple keys come from the
/// helpers (type and default taken from the code); keys that check more than their type read themselves.
extension ConfigurationKey {
    public static var all: [ConfigurationKey] { output + images + quality + fetch + cache + build }

    private static var output: [ConfigurationKey] {
        [
            path("output.dir", \.outputDirectory, note: "none: pages are rewritten in place", example: #""dist""#,
                 "Write the rewritten site here and leave the site folder as it is (like `--out`)."),
            Self("output.images_dir", "string: a folder inside the output", default: TOMLText.string(defaults.output.imagesDirectory),
                 "The folder under the output root that receives the image files.") { (reader, name, node, config) throws(ConfigurationError) in
                let value = try reader.string(name, node)
                guard !value.isEmpty, !value.hasPrefix("/"), !value.split(separator: "/").contains("..") else {
                    throw reader.fail(name, node, "must be a folder inside the output, such as \"_img\"")
                }
                config.output.imagesDirectory = value
            },
            Self("output.public_path", "string: a path starting with / or an http(s) URL", note: "`site_root` followed by `images_dir` and /",
                 example: #""/_img/""#, "How pages refer to the images folder: a path, or the URL of a CDN that serves it.") {
                (reader, name, node, config) throws(ConfigurationError) in
                config.output.publicPath = try reader.string(name, node)
                guard config.output.publicPath.hasPrefix("/") || config.output.publicPathIsAbsolute else {
                    throw reader.fail(name, node, "must be a path starting with / or an http(s) URL, not \"\(config.output.publicPath)\"")
                }
            },
            Self("output.base_url", "string: an absolute http(s) URL", note: "none: feeds and social cards keep remote images",
                 example: #""https://example.org/blog/""#,
                 "The URL the site is served at: feeds, social cards and JSON-LD get absolute image URLs under it.") {
                (reader, name, node, config) throws(ConfigurationError) in
                let text = try reader.string(name, node)
                guard let url = RemoteURL.resolve(text.hasSuffix("/") ? text : text + "/"), text.contains("://") else {
                    throw reader.fail(name, node, "must be the absolute http(s) URL the site is served at, such as \"https://example.com/\"")
                }
                config.output.baseURL = url
            },
            Self("output.site_root", "string: a URL path starting with /", note: "the path of `base_url`, else /", example: #""/blog/""#,
                 "The URL path the site folder is served at: `/blog/img/a.jpg` is the site's `img/a.jpg`.") {
                (reader, name, node, config) throws(ConfigurationError) in
                let text = try reader.string(name, node)
                guard text.hasPrefix("/") else { throw reader.fail(name, node, "must be a URL path starting with /, such as \"/blog/\"") }
                config.output.siteRoot = text.hasSuffix("/") ? text : text + "/"
            },
            choice("output.markup", \.output.markup,
                   "What an `<img>` becomes: `auto`, a `<picture>` with a source per modern format where the page's CSS and scripts would not see the wrapper and an `<img srcset>` elsewhere; `picture` always; `img` never; `localize`, only its URL replaced."),
            choice("output.markdown", \.output.markdown,
                   "What a Markdown image becomes: its destination replaced by the local file, or the HTML markup."),
            string("output.sizes", \.output.sizes, "The `sizes` attribute written when neither the author nor the page's layout gives one."),
            path("output.templates_dir", \.output.templatesDirectory, note: "none: the built-in templates", example: #""templates""#,
                 "A folder whose `.mustache` files replace the built-in templates of the same name."),
            integer("output.eager", 0...1000, \.output.eager, "The first N images of a page are never lazy-loaded, besides the first screen's."),
            integer("output.fold", 0...10_000_000, \.output.foldBytes,
                    "The first screen: this many bytes of markup into `<main>` or `<article>` (twice that into `<body>`)."),
            choice("output.lcp", \.output.lcp,
                   "`auto`: the likely Largest Contentful Paint image gets `fetchpriority=\"high\"` (or a preload); `off` leaves priorities alone."),
            integer("output.inline_images", 0...65_536, \.output.inlineBytes,
                    "First-screen images whose smallest file is at most this many bytes become `data:` URIs (0: never)."),
            Self("output.relative_urls", "true, false or \"auto\"", default: TOMLText.string(defaults.output.relativeURLs.rawValue),
                 "Whether pages refer to image files relative to themselves (`../_img/a.webp`), so the site works from any folder and from disk: `auto` as each HTML page's own links are written, `true` every HTML page and stylesheet, `false` none.") {
                (reader, name, node, config) throws(ConfigurationError) in
                switch node.value {
                case .bool(let value): config.output.relativeURLs = value ? .always : .never
                case .string("auto"): config.output.relativeURLs = .auto
                case .string(let text): throw reader.fail(name, node, "\"\(text)\" is not true, false or \"auto\"")
                default: throw reader.fail(name, node, "expected true, false or \"auto\", found \(node.value.typeName)")
                }
            },
            choice("output.image_links", \.output.imageLinks,
                   "An `<a href>` around an image that points at an image file: the widest variant, or left as it is."),
            choice("output.originals", \.output.originals,
                   "With `--out`: copy every image file of the site, or only those some page still names after rewriting."),
        ]
    }

    private static let lossy: [ImageFormat] = [.webp, .avif, .jpeg, .jxl]

    private static var images: [ConfigurationKey] {
        [
            Self("images.widths", "array of integers, 1 to 16384", default: TOMLText.integers(defaults.images.widths),
                 "The widths made of each image, capped at the source's width (never upscaled).") { (reader, name, node, config) throws(ConfigurationError) in
                let widths = try reader.integers(name, node, in: 1...16384)
                guard !widths.isEmpty else { throw reader.fail(name, node, "needs at least one width") }
                config.images.widths = widths
            },
            Self("images.formats", "array of " + TOMLText.choices(OutputFormat.self), default: TOMLText.strings(defaults.images.formats.map(\.rawValue)),
                 "The formats made, best first; `original` is the source's own format and the `<img>` fallback.") {
                (reader, name, node, config) throws(ConfigurationError) in
                let formats: [OutputFormat] = try reader.choices(name, node)
                guard !formats.isEmpty else { throw reader.fail(name, node, "needs at least one format") }
                config.images.formats = formats
            },
            choice("images.fallback", \.images.fallback,
                   "The `<img>` of a `<picture>` with a WebP or AVIF source: one file in the original format (at `fallback_width`), or one per width."),
            integer("images.fallback_width", 1...16384, \.images.fallbackWidth,
                    "The width of that one file: the widest of `widths` up to it. Only browsers without WebP download it."),
            Self("images.quality", "\"auto\", or a table of the keys below",
                 default: "{ " + lossy.map { "\($0.rawValue) = \(quality($0).choice)" }.joined(separator: ", ") + " }",
                 "Encoder quality per format; `\"auto\"` makes every lossy format choose its quality per image.") {
                (reader, name, node, config) throws(ConfigurationError) in
                try reader.applyQuality(name, node, to: &config.images.quality)
            },
            Self("images.keep_metadata", "array of \"copyright\" | \"artist\"", default: TOMLText.strings(defaults.images.keepMetadata),
                 "EXIF fields written into the outputs; GPS positions, serial numbers and MakerNotes never are.") {
                (reader, name, node, config) throws(ConfigurationError) in
                let fields = try reader.strings(name, node).map { $0.lowercased() }
                let allowed: Set<String> = ["copyright", "artist"]
                if let bad = fields.first(where: { !allowed.contains($0) }) {
                    throw reader.fail(name, node, "\"\(bad)\" cannot be kept; allowed: copyright, artist (GPS, serial numbers and MakerNotes never are)")
                }
                config.images.keepMetadata = fields
            },
            integer("images.max_pixels", 1...Int.max, \.images.maxPixels,
                    "Images with more pixels (width × height × frames, read from the header) are refused before decoding."),
            integer("images.max_frames", 1...100_000, \.images.maxFrames, "Animations with more frames are refused."),
            choice("images.placeholder", \.images.placeholder,
                   "What shows while an image loads: nothing, its dominant colour, a blurred 16 px image, or a BlurHash."),
            choice("images.svg", \.images.svg,
                   "Which SVG files are copied to the site: those without scripts or external references, all, or none."),
            bool("images.local", \.images.local, "The site's own images get variants and content-hashed names too, not only remote ones."),
            strings("images.front_matter_keys", \.images.frontMatterKeys, "Markdown front-matter keys whose values are images."),
        ]
    }

    /// Read by `images.quality` (`ConfigurationFile+Quality.swift`), which looks them up here.
    private static var quality: [ConfigurationKey] {
        let auto = AutoQuality.defaults(for: .webp)
        return lossy.map { format in
            Self("images.quality.\(format.rawValue)", "integer, 1 to 100 | \"auto\"", default: quality(format).choice,
                 "The \(format.displayName) quality: a number for every image, or `\"auto\"` to choose one per image.", read: nil)
        } + [
            Self("images.quality.auto", "table of the keys below", note: "the defaults of the keys below", example: "{ ssim = 0.97 }",
                 "What `\"auto\"` aims at, and the lowest and highest quality it may choose per format.", read: nil),
            Self("images.quality.auto.ssim", "number, 0.5 to below 1", default: "\(auto.target)",
                 "The SSIM each variant must reach against its own pixels, at the lowest quality that does.", read: nil),
            Self("images.quality.auto.ssimulacra2", "integer, 0 to 95", default: "0",
                 "A SSIMULACRA2 each AVIF variant must reach too, such as 70 (0: SSIM alone).", read: nil),
        ] + lossy.map { format in
            Self("images.quality.auto.\(format.rawValue)", "[floor, ceiling], integers 1 to 100", default: quality(format).bounds,
                 "The range `\"auto\"` chooses the \(format.displayName) quality in.", read: nil)
        }
    }

    private static var fetch: [ConfigurationKey] {
        [
            choice("fetch.policy", \.fetch.policy,
                   "How cached images are trusted: used while fresh, all revalidated now, no network, or no network and a miss fails the build."),
            bool("fetch.retry_failed", \.fetch.retryFailed, "Ask again for URLs whose permanent failure is remembered, instead of skipping them."),
            integer("fetch.concurrency", 1...256, \.fetch.concurrency, "Transfers at once."),
            integer("fetch.per_host", 1...64, \.fetch.perHost, "Transfers at once to one host."),
            duration("fetch.timeout", \.fetch.timeout, "The longest one transfer may take."),
            duration("fetch.connect_timeout", \.fetch.connectTimeout, "The longest connecting may take."),
            size("fetch.max_bytes", \.fetch.maxBytes, "Larger bodies are abandoned while they stream."),
            integer("fetch.retries", 0...20, \.fetch.retries,
                    "Retries after a timeout, a reset, 408, 429 or 5xx, with backoff and jitter (a host that cannot be reached is asked once)."),
            duration("fetch.ttl", \.fetch.ttl, "How long a downloaded image is fresh when its server says nothing."),
            duration("fetch.failure_ttl", \.fetch.failureTTL, "How long a permanent failure (404, not an image…) is remembered."),
            duration("fetch.unresolvable_ttl", \.fetch.unresolvableTTL,
                     "How long a host whose name did not resolve is remembered: builds in that time ask it nothing (`--retry-failed` and `--refresh` ask again)."),
            bool("fetch.allow_private_networks", \.fetch.allowPrivateNetworks,
                 "Allow downloads from private, loopback and link-local addresses (refused by default)."),
            strings("fetch.strip_query", \.fetch.stripQuery, "Query parameters (names or `*` globs) that never make a different image."),
            Self("fetch.connect_to", "array of \"HOST:PORT:CONNECT_HOST:CONNECT_PORT\"", default: "[]",
                 "Route a host to another address, as curl's `--connect-to`.") { (reader, name, node, config) throws(ConfigurationError) in
                let entries = try reader.strings(name, node)
                if let bad = entries.first(where: { ConnectTo.split($0).count != 4 }) {
                    throw reader.fail(name, node, "\"\(bad)\": expected HOST:PORT:CONNECT_HOST:CONNECT_PORT")
                }
                config.fetch.connectTo = entries
            },
            path("fetch.cacert", \.fetch.caFile, note: "the system's CA certificates", example: #""/etc/ssl/private-ca.pem""#,
                 "A CA bundle to trust, as curl's `--cacert`."),
            Self("fetch.headers", "table: host → { header = \"value\" }", default: "{}",
                 "Extra request headers per host; `${VAR}` is taken from the environment when the request is made, and never logged.") {
                (reader, name, node, config) throws(ConfigurationError) in
                config.fetch.headers = try reader.headers(name, node)
            },
            Self("fetch.key_rules", "table: host → { keep_query = [names] } or { ignore_query = true }", default: "{}",
                 "Per host, which query parameters make a different image: only those named, or none.") {
                (reader, name, node, config) throws(ConfigurationError) in
                config.fetch.hostRules = try reader.keyRules(name, node)
            },
        ]
    }

    private static var cache: [ConfigurationKey] {
        let remote = remoteDefaults
        return [
            Self("cache.dir", "path", note: "`$XDG_CACHE_HOME/imgbake`, else `~/.cache/imgbake`", example: #""~/.cache/imgbake""#,
                 "The image cache (like `--cache-dir`; `$IMGBAKE_CACHE_DIR` and `--cache-dir` win over it): keep it between CI runs and warm builds do no network and no image work.") {
                (reader, name, node, config) throws(ConfigurationError) in
                config.cache.directory = reader.path(try reader.string(name, node))
            },
            Self("cache.max_size", "size", note: "none: nothing is evicted", example: #""5GB""#,
                 "At the end of every build, evict the least recently used entries until the cache fits.") {
                (reader, name, node, config) throws(ConfigurationError) in
                config.cache.maxSize = try reader.size(name, node)
            },
            Self("cache.remote", "string: s3://bucket/prefix or an http(s) URL", note: "none", example: #""s3://imgbake-cache/site""#, first: true,
                 "A cache shared by machines, asked after the local cache and before the origin, and written back to.") {
                (reader, name, node, config) throws(ConfigurationError) in
                config.cache.remote = try reader.remoteSettings(name, node)
            },
            remoteKey("cache.remote_write", "true | false", default: "\(remote.write)", example: nil,
                      "False: read from the remote cache only (for untrusted builds, like `--remote-read-only`).") { (reader, name, node, remote) throws(ConfigurationError) in
                remote.write = try reader.bool(name, node)
            },
            remoteKey("cache.remote_endpoint", "string: http(s)://host[:port]", note: "AWS", example: #""http://127.0.0.1:9000""#, s3Only: true,
                      "S3 only: the endpoint of an S3-compatible server (MinIO, Ceph, R2).") { (reader, name, node, remote) throws(ConfigurationError) in
                let endpoint = try reader.string(name, node)
                guard let url = RemoteURL.resolve(endpoint), url.userinfo == nil, url.path == "/" || url.path.isEmpty, url.query == nil,
                      endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") else {
                    throw reader.fail(name, node, "expected http(s)://host[:port] of an S3-compatible server, not \"\(endpoint)\"")
                }
                remote.endpoint = url.scheme + "://" + url.host + (url.port.map { ":\($0)" } ?? "")
            },
            remoteKey("cache.remote_region", "string", note: "`$AWS_REGION`, else `$AWS_DEFAULT_REGION`, else us-east-1", example: #""eu-west-1""#,
                      s3Only: true, "S3 only: the region requests are signed for.") { (reader, name, node, remote) throws(ConfigurationError) in
                let region = try reader.string(name, node)
                guard !region.isEmpty, region.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
                    throw reader.fail(name, node, "\"\(region)\" is not a region name such as \"eu-west-1\"")
                }
                remote.region = region
            },
            remoteKey("cache.remote_path_style", "true | false", default: "\(remote.pathStyle)", example: nil, s3Only: true,
                      "S3 only: address objects as `endpoint/bucket/key` instead of `bucket.endpoint/key`.") { (reader, name, node, remote) throws(ConfigurationError) in
                remote.pathStyle = try reader.bool(name, node)
            },
            remoteKey("cache.remote_timeout", "duration, at least 1s", default: TOMLText.duration(remote.timeout), example: nil,
                      "Per request; a remote slower than this is given up on for the rest of the build.") { (reader, name, node, remote) throws(ConfigurationError) in
                remote.timeout = try reader.duration(name, node)
                guard remote.timeout >= .seconds(1) else { throw reader.fail(name, node, "must be at least 1s") }
            },
        ]
    }

    private static var build: [ConfigurationKey] {
        [
            Self("build.jobs", "integer, 1 to 256", note: "the number of cores", example: "2",
                 "Images decoded and encoded at once.") { (reader, name, node, config) throws(ConfigurationError) in
                config.jobs = try reader.integer(name, node, in: 1...256)
            },
            bool("build.strict", \.strict, "Image failures fail the build (exit 1), as `--strict`."),
            path("build.report", \.reportPath, note: "none", example: #""imgbake-report.html""#,
                 "Write the report here: `.html` for the page, anything else JSON (like `--report`)."),
            path("build.depfile", \.depfilePath, note: "none", example: #"".imgbake.d""#,
                 "Write a Make rule with everything the build read (like `--depfile`)."),
            size("build.max_page_size", \.maxPageBytes, "Larger pages are left as they are, with a warning."),
            choice("build.require_alt", \.requireAlt, "What an `<img>` without `alt` is: a warning, an error that fails the build, or nothing."),
            Self("build.exclude", "array of globs", default: "[]", example: #"["_static/**"]"#,
                 "Site files never read or rewritten (with `--out`, copied as they are).") { (reader, name, node, config) throws(ConfigurationError) in
                config.exclude = []
                for item in try reader.array(name, node) {
                    guard let glob = Glob(try reader.string(name, item)) else { throw reader.fail(name, item, "an empty pattern matches nothing") }
                    config.exclude.append(glob)
                }
            },
        ]
    }

    /// A `cache.remote_*` key: it refines `cache.remote`, so it needs one (and an S3 one when `s3Only`).
    private static func remoteKey(_ name: String, _ type: String, default defaultValue: String = "", note: String = "", example: String?,
                                  s3Only: Bool = false, _ summary: String,
                                  change: @escaping (Reader, String, TOMLNode, inout RemoteSettings) throws(ConfigurationError) -> Void) -> Self {
        Self(name, type, default: defaultValue, note: note, example: example, summary) { (reader, name, node, config) throws(ConfigurationError) in
            guard var remote = config.cache.remote else { throw reader.fail(name, node, "needs cache.remote (s3://bucket/prefix or an http(s) URL)") }
            if s3Only, case .http = remote.location {
                throw reader.fail(name, node, "only for an s3:// remote; cache.remote is \(remote.location)")
            }
            try change(reader, name, node, &remote)
            config.cache.remote = remote
        }
    }
}
