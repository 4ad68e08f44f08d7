import Foundation
@testable import ImgBake

/// A site whose pages refer to images on a test origin, built by the real `imgbake` binary with a
/// remote cache, as separate "machines": each build names its own local cache and output folder.
package struct RemoteSite: @unchecked Sendable {
    package let site = TestSite()
    package let origin: Origin

    /// One page per image (`img/<name>`, or any origin path such as `fault/slow/900/<name>`).
    package init(origin: Origin, images: [String]) {
        self.origin = origin
        for (n, image) in images.enumerated() {
            site.page("p\(n).html", "<p><img src=\"\(origin.url(image.contains("/") ? image : "img/" + image))\" alt=\"\(n)\"></p>\n")
        }
    }

    /// Writes `imgbake.toml`: two small widths in WebP and the fallback (image work stays cheap) and
    /// these `[cache]` lines.
    package func configure(cache lines: String) {
        site.folder.write("imgbake.toml", "[images]\nwidths = [64, 128]\nformats = [\"webp\", \"original\"]\n\n[cache]\n\(lines)\n")
    }

    package var configFile: String { site.folder.path + "/imgbake.toml" }

    /// Builds as machine `name` (its own cache, unless `cache` names another's, and output folder), with a JSON report.
    package func build(_ name: String, _ extra: [String] = [], cache: String? = nil, environment: [String: String] = [:]) async throws -> Run {
        let report = site.folder.path + "/\(name)-report.json"
        let result = try await runProcess(Paths.binary, ["build", site.site, "--out", out(name), "--cache-dir", site.folder.path + "/\(cache ?? name)-cache",
                                                         "--config", configFile, "--connect-to", origin.connectTo, "--report", report] + extra,
                                          in: nil, environment: environment)
        let json = FileManager.default.contents(atPath: report)
        return Run(result: result, report: json.flatMap { try? JSONDecoder().decode(BuildReport.self, from: $0) }, reportText: json.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    package func out(_ name: String) -> String { site.folder.path + "/\(name)-out" }

    /// Every file of machine `name`'s output, by relative path, as size and hash.
    package func output(_ name: String) -> [String: String] { TemporaryFolder.digests(of: out(name)) }

    package struct Run: @unchecked Sendable {
        package let result: CommandResult
        package let report: BuildReport?
        package let reportText: String

        /// stdout, stderr and the report: where a secret must never appear.
        package var everythingPrinted: String { result.stdout + result.stderr + reportText }

        package var remoteWarnings: [Substring] { result.stderr.split(separator: "\n").filter { $0.contains("remote cache") } }
    }
}
