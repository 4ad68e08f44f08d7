import Foundation
@testable import ImgBake
import Testing

/// A site, an output folder and a cache in one temporary folder, with a build configured for an origin.
package struct TestSite {
    package init() {}

    package let folder = TemporaryFolder()
    package var site: String { folder.path + "/site" }
    package var out: String { folder.path + "/out" }
    package var cache: String { folder.path + "/cache" }

    package func page(_ path: String, _ text: String) { folder.write("site/" + path, text) }
    /// A file of the site (an image, say).
    package func file(_ path: String, _ bytes: [UInt8]) { folder.write("site/" + path, bytes) }
    package func output(_ path: String) -> String? { folder.text("out/" + path) }

    package func configuration(origin: Origin?, out useOut: Bool = true) -> Configuration {
        var config = Configuration(site: site, cacheDirectory: cache, jobs: 2)
        if useOut { config.outputDirectory = out }
        if let origin { config.fetch.connectTo = [origin.connectTo] }
        config.fetch.retryDelay = .milliseconds(50)
        // Most test pages are one bare <img>: the alt check has tests of its own (AltTextTests).
        config.requireAlt = .off
        // Test images are small: written into the page they would leave no file to check
        // (LoadingPriorityTests check that).
        config.output.inlineBytes = 0
        // Fixed qualities: choosing one per image costs a few encodes of each variant, and most tests
        // are about something else (QualitySearchTests, QualityBuildTests choose).
        config.images.quality = .fixedForTests
        // WebP and the source's format: an AVIF costs about four times a WebP's encode, and most tests
        // are about something else (the markup and quality tests ask for the default formats).
        config.images.formats = [.webp, .original]
        return config
    }

    package func build(_ config: Configuration, clock: (any WallClock)? = nil) async throws -> BuildResult {
        try await Build(config, clock: clock ?? SystemClock()).run()
    }

    package func build(origin: Origin?, out: Bool = true) async throws -> BuildResult {
        try await build(configuration(origin: origin, out: out))
    }
}

/// An image manager on its own cache folder, fetching from `origin`.
package func makeManager(origin: Origin, cache folder: String) throws -> ImageManager {
    try makeCountingManager(origin: origin, cache: folder).manager
}

/// The same, with the downloader it fetches through counting what it is asked for, and the
/// transformer counting decodes.
package func makeCountingManager(origin: Origin, cache folder: String) throws
    -> (manager: ImageManager, downloads: CountingDownloader, transforms: CountingTransformer) {
    var fetch = FetchSettings()
    fetch.connectTo = [origin.connectTo]
    let downloader = CountingDownloader(Downloader(settings: fetch))
    let transformer = CountingTransformer(try Transformer(threads: 2, maxPixels: 100_000_000))
    let manager = ImageManager(cache: try ImageCache(directory: folder), downloader: downloader, transformer: transformer,
                               images: { var images = ImageSettings(); images.quality = .fixedForTests; images.formats = [.webp, .original]; return images }(), fetch: fetch)
    return (manager, downloader, transformer)
}

/// What a child process printed and how it ended.
package struct CommandResult {
    package let status: Int32
    package let stdout: String
    package let stderr: String

    /// stderr without the progress lines a build prints every few seconds when it is slow (as on a
    /// loaded test machine): what a test means by "no warnings".
    package var warnings: String {
        stderr.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0.wholeMatch(of: /imgbake: \d+\/\d+ pages.*/) == nil }.joined(separator: "\n")
    }
}

/// Runs the real `imgbake` binary.
package func runImgbake(_ arguments: [String], in directory: String? = nil) async throws -> CommandResult {
    try await runProcess(Paths.binary, arguments, in: directory)
}

/// Runs a program (`/usr/bin/env` finds it by name) with stdout and stderr merged into `stdout`.
package func run(_ arguments: [String], in directory: String, environment: [String: String] = [:]) async throws -> CommandResult {
    try await runProcess("/usr/bin/env", arguments, in: directory, environment: environment, mergeStderr: true)
}

/// Runs `attempt` again (up to 20 times, 50 ms apart) while it fails with ETXTBSY (exit 126): a program
/// a test has just written may still be held open for writing by a child another test forked before
/// the write's descriptor was closed, until that child execs. Not the program's doing, nor imgbake's.
package func retryingWhileTextFileBusy(_ attempt: () async throws -> CommandResult) async throws -> CommandResult {
    let busy = String(cString: strerror(ETXTBSY))
    var result = try await attempt()
    for _ in 1..<20 where result.status == 126 && (result.stderr + result.stdout).contains(busy) {
        try await Task.sleep(for: .milliseconds(50))
        result = try await attempt()
    }
    return result
}

/// Waits without blocking a cooperative thread: the output is drained and the child reaped on threads
/// of their own (blocking calls here starved other tests).
package func runProcess(_ executable: String, _ arguments: [String], in directory: String?, environment: [String: String] = [:],
                mergeStderr: Bool = false) async throws -> CommandResult {
    let child = try ChildProcess(executable, arguments, in: directory, environment: environment.isEmpty ? nil : environment,
                                 stdout: .pipe, stderr: .pipe, mergeStderr: mergeStderr)
    async let out = drain(child.stdout)
    async let err = drain(child.stderr)
    let (stdout, stderr) = await (out, err)
    let ended = await child.termination()
    return CommandResult(status: ended.status, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
}

/// Everything a pipe gives until its end, read on a thread of its own.
package func drain(_ fd: Int32?) async -> Data {
    guard let fd else { return Data() }
    return await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: readAll(fd)) }
    }
}

/// `make sanitize` sets IMGBAKE_SANITIZER: everything then runs 5–15 times slower with several times
/// the memory (shadow memory, redzones, a quarantine of freed blocks), none of it imgbake's. Bounds on
/// memory are the plain suite's to check; under a sanitizer there are none, and the hang guard waits longer.
package enum Sanitizer {
    package static let active = ProcessInfo.processInfo.environment["IMGBAKE_SANITIZER"]
}

/// A peak-memory bound, not checked under a sanitizer.
package func memoryBound(_ bytes: Int) -> Int {
    Sanitizer.active == nil ? bytes : .max
}


/// Runs a program under a python3 parent that reports the child's peak resident set size (wait4's
/// ru_maxrss), so other processes of the test run do not count.
package func runMeasuringPeakMemory(_ arguments: [String]) async throws -> (CommandResult, peakBytes: Int) {
    let script = """
    import resource, subprocess, sys
    code = subprocess.run(sys.argv[1:]).returncode
    sys.stderr.write("PEAK_RSS_KIB %d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    sys.exit(code)
    """
    let result = try await runProcess("/usr/bin/env", ["python3", "-c", script] + arguments, in: nil)
    let line = try require(result.stderr.split(separator: "\n").last { $0.hasPrefix("PEAK_RSS_KIB ") })
    let kib = try require(Int(line.dropFirst("PEAK_RSS_KIB ".count)))
    return (result, kib * 1024)
}

/// `#require` for the support library (which does not import Testing): the value, or an error.
func require<T>(_ value: T?, _ what: String = "a value the test needs") throws -> T {
    guard let value else { throw Origin.OriginError(message: "missing: \(what)") }
    return value
}

/// Validates a JSON report against docs/report.schema.json with Python's jsonschema: prints "valid", or
/// the validation error on stderr.
package func validateReport(_ json: Data, in folder: TemporaryFolder) async throws -> CommandResult {
    folder.write("report-to-validate.json", Array(json))
    return try await run(["python3", "-c", """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1])); report = json.load(open(sys.argv[2]))
        jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(report)
        print("valid")
        """, Paths.root + "/docs/report.schema.json", folder.path + "/report-to-validate.json"], in: folder.path)
}

extension TestSite {
    /// `imgbake.toml` lines for a child process: the fixed qualities and the WebP-and-fallback formats
    /// `configuration` gives in-process builds (tests that count or compare the files made are not about
    /// which quality or format each gets).
    package static let fixedQualityTOML = "[images]\nquality = { webp = 80, jpeg = 80, avif = 50 }\nformats = [\"webp\", \"original\"]\n"
    /// One width at a fixed quality: for suites whose property does not depend on how many variants an
    /// image has (what a kill interrupts, what overlaps), where encoding every default width was most
    /// of their time.
    package static let oneWidthTOML = fixedQualityTOML + "widths = [320]\n"
}

extension Duration {
    /// Whole milliseconds, for timings a test carries from one round to the next.
    package var wholeMilliseconds: Int { Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000) }
}

extension ImageSettings.Quality {
    /// The qualities before they could be chosen per image: 80 for WebP and JPEG, 50 for AVIF.
    package static var fixedForTests: Self {
        var quality = Self()
        quality.webp = 80
        quality.jpeg = 80
        quality.avif = 50
        return quality
    }
}

/// A suite's time limit is a guard against a hang, not a bound on how long it takes: a test that never
/// ends fails and the run goes on. Far past the slowest suite on a loaded 2-core machine (the whole run
/// shares its cores), so that load alone never trips it; how long things take is the benchmarks' to
/// say. Several times longer under a sanitizer.
extension Trait where Self == TimeLimitTrait {
    package static var hangGuard: Self { .timeLimit(Sanitizer.active == nil ? .minutes(20) : .minutes(60)) }
}
