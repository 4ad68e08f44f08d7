/// Where a build leaves what it makes, and so what it does: the one place the build's mode is asked.
/// Pipeline code asks the target a question (does it write pages? keep the source of a page it writes
/// over? mirror the site?) and never tests the mode itself (`tools/shape-counts.py` counts).
///
/// | target | pages | image files | copies kept in the cache | other site files |
/// |---|---|---|---|---|
/// | `inPlace` | over their sources | in the site | each rewritten page's source | left |
/// | `folder` | into `--out` | in `--out` | each rewritten page as written | copied |
/// | `check` | not written | not written | none | left |
/// | `shard` | not written | uploaded only | none | left |
/// | `devServer` | rewritten, answered to the browser | served from the cache | none | left |
enum OutputTarget: Sendable, Equatable {
    /// `imgbake build SITE`: the site's pages are rewritten over themselves.
    case inPlace
    /// `imgbake build SITE --out DIR`: the site copied into another folder, with its pages rewritten.
    case folder
    /// `--check`: nothing is written; what would stay remote, and files named that do not exist, fail
    /// the build. `layout` is where the outputs it looks at are.
    case check(Layout)
    /// `--shard K/N`: images resolved and uploaded to the remote cache; no page or image file written.
    case shard(Layout)
    /// `imgbake serve`: each page a dev server answers is rewritten as a build would write it and handed
    /// to the browser; its image files are served from the cache. Nothing is written but the cache.
    case devServer

    /// Where the outputs a build that writes would leave are: over the site, or in another folder.
    enum Layout: Sendable, Equatable {
        case inPlace, folder
    }

    /// A build's target, from its configuration (`--out`, `--check`, `--shard`). A shard build uploads
    /// what it makes for a later assembling build: it needs a remote it may write to, and the network.
    init(_ config: Configuration) throws(BuildError) {
        let layout: Layout = config.outputDirectory != nil ? .folder : .inPlace
        guard config.shard != nil else {
            self = config.check ? .check(layout) : layout == .folder ? .folder : .inPlace
            return
        }
        guard let remote = config.cache.remote else {
            throw BuildError(.usage, "--shard needs a remote cache to upload to (cache.remote in imgbake.toml; not with --no-remote)")
        }
        guard remote.write else {
            throw BuildError(.usage, "--shard uploads what it makes: it excludes --remote-read-only and cache.remote_write = false")
        }
        guard !config.fetch.isOffline && !config.check else {
            throw BuildError(.usage, "--shard needs the network: it excludes --offline, --frozen and --check")
        }
        self = .shard(layout)
    }

    var layout: Layout {
        switch self {
        case .inPlace: .inPlace
        // As with `--out`, nothing of the site is written over.
        case .folder, .devServer: .folder
        case .check(let layout), .shard(let layout): layout
        }
    }

    /// Outputs are in a folder of their own (`--out`), beside the site: pages there have stamps of their
    /// own, and files imgbake placed there are copies it may remove.
    var separateOutput: Bool { layout == .folder }

    /// Pages and image files are written (and the output locked, the site sealed, a depfile written).
    var writesSite: Bool { self == .inPlace || self == .folder }

    /// Pages are rewritten (written to the site, or answered by `imgbake serve`).
    var rewritesPages: Bool { writesSite || self == .devServer }

    /// Pages are written over their sources: the source of each page rewritten is kept in the cache, its
    /// state says which rewrite stands for it, and the next build reads that kept source.
    var rewritesSources: Bool { self == .inPlace }

    /// The page as written is kept in the cache, so that a lost output is written again from it.
    var keepsWrittenPages: Bool { self == .folder }

    /// The rest of the site is copied into the output, and copies of files gone from the site removed.
    var mirrorsSite: Bool { self == .folder }

    /// Pages whose outputs are gone are written again from the cache, not built.
    var restoresLostOutputs: Bool { self == .folder }

    /// A page is read from the source the cache kept when the site file is imgbake's rewrite of it: in
    /// place, and a shard of a site built in place (whose pages name imgbake's files by now). `--check`
    /// looks at the site as it is.
    var readsKeptSources: Bool { self == .inPlace || self == .shard(.inPlace) }

    /// A page reached through a symbolic link is read, never written: writing it would replace the link.
    var writesThroughLinks: Bool { self != .inPlace }

    /// `--check`: every reference that would stay remote, and every file named that does not exist, is
    /// an error of the build.
    var listsRemaining: Bool { if case .check = self { true } else { false } }

    /// Images are resolved from the cache only (`--check`), and nothing is written to the remote cache.
    var resolvesFromCacheOnly: Bool { listsRemaining }

    /// `--shard`: every page is read, whatever an earlier build left (none is written), and every image
    /// of the shard's is uploaded, made now or not, for the assembling build to find.
    var readsEveryPage: Bool { if case .shard = self { true } else { false } }
    var uploadsEverythingUsed: Bool { readsEveryPage }

    /// The cache may be trimmed to its size budget at the end (not by a build that only looks).
    var trimsCache: Bool { !listsRemaining }

    /// What the seal's digest names the layout as.
    var sealName: String { separateOutput ? "out" : "in place" }
}
