import Foundation
import ImgBakeTestSupport
import Testing

/// Examples/jekyll, Examples/mkdocs and Examples/sphinx as a user runs them: the real generator
/// (Debian's jekyll with minima, jekyll-feed and jekyll-seo-tag; PyPI's mkdocs-material; Debian's
/// Sphinx), then imgbake with the example's settings. Checked by a script of the tests' own
/// (Tests/Support/sitecheck.py), not by imgbake's scanners: every image URL in every page, feed and
/// stylesheet names a file that exists; nothing but image references and `<img>` tags changed; every
/// feed, sitemap and JSON file still parses; every page lays out as before in Chromium
/// (Tests/Support/layout_check.py); a second build changes no file and `make` then has nothing to do.
@Suite struct GeneratorExampleTests {
    struct Example: Sendable, CustomStringConvertible {
        var name: String
        /// The generator's command, found on PATH.
        var tool: String
        /// Where the generator writes the site.
        var output: String
        var baseURL: String
        var description: String { name }
    }

    static let examples = [
        Example(name: "jekyll", tool: "jekyll", output: "_site", baseURL: "https://example.org/"),
        Example(name: "mkdocs", tool: "mkdocs", output: "site", baseURL: "https://example.org/docs/"),
        Example(name: "sphinx", tool: "sphinx-build", output: "_build/html", baseURL: "https://example.org/"),
    ]

    static func installed(_ tool: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    @Test(arguments: examples)
    func theGeneratorThenImgbakeGiveASiteWhoseEveryReferenceResolves(example: Example) async throws {
        try #require(Self.installed(example.tool), "\(example.tool) is not installed (`make test` installs it)")
        let origin = try Origin()
        let folder = TemporaryFolder()
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/" + example.name, toPath: folder.path + "/" + example.name)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/images", withDestinationPath: Paths.images)
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/example.mk", toPath: folder.path + "/example.mk")
        let directory = folder.path + "/" + example.name
        let site = directory + "/" + example.output

        // The generator alone (`true` stands in for imgbake), then its output as it was.
        let generated = try await run(["make", "--no-print-directory", "IMGBAKE=true"], in: directory)
        #expect(generated.status == 0, "\(generated.stdout)")
        try FileManager.default.copyItem(atPath: site, toPath: folder.path + "/before")

        // imgbake as the example's Makefile runs it.
        let imgbake = ["build", example.output, "--config", "imgbake.toml", "--depfile", ".imgbake.d", "--cache-dir", folder.path + "/cache",
                       "--connect-to", origin.connectTo]
        let built = try await runImgbake(imgbake, in: directory)
        // Nothing but progress lines (a slow machine prints one every 5 s).
        #expect(built.status == 0 && !built.stderr.contains("warning:") && !built.stderr.contains("error:"), "\(built.stderr)")
        #expect(built.stdout.contains(" 0 failed"), "\(built.stdout)")

        for check in [["references", site, example.baseURL], ["changes", folder.path + "/before", site], ["parse", site]] {
            let result = try await run(["python3", Paths.root + "/Tests/Support/sitecheck.py"] + check, in: folder.path)
            #expect(result.status == 0, "\(check[0]): \(result.stdout)")
        }
        // Every page lays out as the generator wrote it (its remote images from the origin).
        if LayoutCheck.chromium {
            let layout = try await LayoutCheck.run(before: folder.path + "/before", after: site, connectTo: [origin.connectTo], label: example.name)
            #expect(layout.holds && layout.images > 0, "\(layout.output)")
        }
        // The change check can fail: a title edited by hand is seen.
        try FileManager.default.copyItem(atPath: site, toPath: folder.path + "/tampered")
        let page = folder.path + "/tampered/index.html"
        try String(contentsOfFile: page, encoding: .utf8).replacingOccurrences(of: "<title>", with: "<title>Edited ")
            .write(toFile: page, atomically: true, encoding: .utf8)
        let tampered = try await run(["python3", Paths.root + "/Tests/Support/sitecheck.py", "changes", folder.path + "/before", folder.path + "/tampered"],
                                     in: folder.path)
        #expect(tampered.status == 1, "\(tampered.stdout)")

        // Again: no file changes, and make finds nothing to do.
        let before = TemporaryFolder.digests(of: site)
        let again = try await runImgbake(imgbake + ["--quiet"], in: directory)
        #expect(again.status == 0 && TemporaryFolder.digests(of: site) == before, "\(again.stderr)")
        let make = try await run(["make", "--no-print-directory", "IMGBAKE=\(Paths.binary)"], in: directory)
        #expect(make.status == 0 && !make.stdout.contains("imgbake build"), "\(make.stdout)")
    }
}
