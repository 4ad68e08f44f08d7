import ArgumentParser
import Foundation
import ImgBake

struct BuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Download, transform and localise every remote image of the site.")

    @Argument(help: "The site folder (default: the current folder).")
    var site: String = "."

    @Option(help: "Write rewritten pages and images here instead of rewriting the site in place.")
    var out: String?

    @OptionGroup var configOptions: ConfigurationOptions

    @Option(help: "Images decoded and encoded at once (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "No network: images missing from the cache are warnings.")
    var offline = false

    @Flag(help: "No network: any image missing from the cache fails the build.")
    var frozen = false

    @Flag(help: "Revalidate every cached image with the origin now.")
    var refresh = false

    @Flag(name: .customLong("retry-failed"), help: "Try again the URLs that failed permanently in earlier builds.")
    var retryFailed = false

    @Flag(help: "Image failures, and references that cannot be written (a social card without output.base_url), fail the build (exit 1).")
    var strict = false

    @Option(name: .customLong("connect-to"), help: ArgumentHelp("Route HOST:PORT to CONNECT_HOST:CONNECT_PORT (curl's --connect-to).", valueName: "HOST:PORT:CONNECT_HOST:CONNECT_PORT"))
    var connectTo: [String] = []

    @Option(help: "Trust this CA bundle (curl's --cacert).")
    var cacert: String?

    @Flag(name: .customLong("allow-private-networks"), help: "Allow downloads from private, loopback and link-local addresses.")
    var allowPrivateNetworks = false

    @Flag(help: "Resolve from the cache only and write nothing; exit 1 if a reference would stay remote, need the network, or point at a missing file.")
    var check = false

    @Option(help: ArgumentHelp("Write a report of every reference and image: JSON, or a page to open offline if FILE ends in .html. Give it twice for both.", valueName: "FILE"))
    var report: [String] = []

    @Option(help: ArgumentHelp("Write a Make rule listing everything the build read (FILE is its target).", valueName: "FILE"))
    var depfile: String?

    @Flag(name: .customLong("remote-read-only"), help: "Read from the remote cache (cache.remote) but upload nothing, e.g. for untrusted pull requests.")
    var remoteReadOnly = false

    @Flag(name: .customLong("no-remote"), help: "Do not use the remote cache for this build.")
    var noRemote = false

    @Option(help: ArgumentHelp("Resolve and transform only shard K of N of the images, upload them to the remote cache, write no pages.", valueName: "K/N"))
    var shard: String?

    @Flag(help: "Print only warnings and errors.")
    var quiet = false

    @Flag(help: "Also print what happened to each image.")
    var verbose = false

    func validate() throws {
        if [offline, frozen, refresh].filter({ $0 }).count > 1 {
            throw ValidationError("--offline, --frozen and --refresh exclude each other")
        }
        if check && (offline || refresh) { throw ValidationError("--check works from the cache only: it excludes --offline and --refresh") }
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if report.filter(Self.isPage).count > 1 || report.count - report.filter(Self.isPage).count > 1 {
            throw ValidationError("--report: at most one JSON file and one page (.html)")
        }
        if let shard, Shard(parsing: shard) == nil { throw ValidationError("--shard \(shard): expected K/N with 1 ≤ K ≤ N, such as 2/4") }
        for entry in connectTo where entry.split(separator: ":", omittingEmptySubsequences: false).count < 4 {
            throw ValidationError("--connect-to \(entry): expected HOST:PORT:CONNECT_HOST:CONNECT_PORT")
        }
    }

    /// The site's configuration (`ConfigurationOptions`), then the flags that were given.
    func makeConfiguration() throws -> Configuration {
        var config = try configOptions.load(site: site)
        if let out { config.outputDirectory = out }
        if let jobs { config.jobs = jobs }
        if strict { config.strict = true }
        if offline { config.fetch.policy = .offline }
        if frozen { config.fetch.policy = .frozen }
        if refresh { config.fetch.policy = .refresh }
        if retryFailed { config.fetch.retryFailed = true }
        if !connectTo.isEmpty { config.fetch.connectTo = connectTo }
        if let cacert { config.fetch.caFile = cacert }
        if allowPrivateNetworks { config.fetch.allowPrivateNetworks = true }
        if check { config.check = true }
        if !report.isEmpty { config.reportPaths = report }
        if let depfile { config.depfilePath = depfile }
        if verbose { config.wantsReport = true }
        if remoteReadOnly { config.cache.remote?.write = false }
        if noRemote { config.cache.remote = nil }
        if let shard { config.shard = Shard(parsing: shard) }
        return config
    }

    func run() async throws {
        let config = try makeConfiguration()
        let build = Build(config)
        let display = ProgressDisplay(build.progress, quiet: quiet)
        let result: BuildResult
        do {
            result = try await build.run()
            display.stop()
        } catch {
            display.stop()
            Terminal.error("imgbake: error: \(error.message)")
            throw ExitCode(error.kind == .usage ? 2 : 1)
        }
        for diagnostic in result.diagnostics where verbose || diagnostic.severity != .note {
            Terminal.error(diagnostic.description)
        }
        if verbose, let report = result.report {
            for image in report.images { Terminal.error("\(image.url): \(image.outcome)\(image.reason.map { " (\($0))" } ?? "")") }
        }
        if config.check {
            for diagnostic in result.remaining { Terminal.error(diagnostic.description) }
            if result.exitCode != 0 {
                let errors = result.remaining.count + result.diagnostics.filter { $0.severity == .error }.count
                Terminal.error("imgbake: check failed: \(errors) problem(s), listed above")
            }
        } else if !result.missing.isEmpty {
            Terminal.error("imgbake: error: --frozen: \(result.missing.count) image(s) not in the cache:")
            for url in result.missing { Terminal.error("  \(url)") }
        }
        if !quiet { for line in result.summary.lines { print(line) } }
        if result.exitCode != 0 { throw ExitCode(result.exitCode) }
    }

    private static func isPage(_ path: String) -> Bool {
        path.lowercased().hasSuffix(".html") || path.lowercased().hasSuffix(".htm")
    }
}
