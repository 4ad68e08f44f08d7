import Foundation
@testable import ImgBake
import ImgBakeTestSupport
import Testing

/// The plugins (integrations/) as their users install and use them, on the oldest release of each
/// generator they support and the newest the registries serve: the Python package with pip into a
/// virtual environment of its own, with MkDocs and Sphinx either Debian 12's (seen from a venv with the
/// system's packages) or PyPI's newest; the Jekyll gem with `gem build` and `gem install` into a
/// GEM_HOME (Debian's Jekyll). Each builds Examples/<generator> with one line added to the generator's configuration,
/// against the loopback origin, and is checked as GeneratorExampleTests checks the two-step builds
/// (Tests/Support/sitecheck.py); then the dev server: a page fetched over HTTP with every image
/// loading from the server, a source edited, the page fetched again once rebuilt with the new image
/// localised (Tests/Support/devserver.py). The Sphinx and MkDocs outputs are opened from disk in
/// Chromium (Tests/Support/from_disk.py): every image shows. Each image the plugin is given to run is
/// the worktree's build (`IMGBAKE`); `true` in its place gives the generator's output as it was.
@Suite struct GeneratorPluginTests {
    static let chromium = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
    static let debianPython = "/usr/bin/python3"

    /// Where the generator comes from: Debian 12's package (the oldest release supported) or PyPI's
    /// newest, in a virtual environment of its own.
    enum Release: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case debian, pypi
        var testDescription: String { rawValue }

        /// A venv with the plugin and `packages` (Debian's: the system's packages visible, nothing of
        /// the generator from PyPI).
        func venv(_ folder: TemporaryFolder, pypi packages: [String]) async throws -> String {
            switch self {
            case .debian: try await GeneratorPluginTests.pipInstall(folder, python: GeneratorPluginTests.debianPython, systemPackages: true, [])
            case .pypi: try await GeneratorPluginTests.pipInstall(folder, python: "python3", systemPackages: false, packages)
            }
        }

        /// The version of the distribution `module` in `venv`, checked to be Debian's package's or a newer
        /// one than it.
        func version(of module: String, debianPackage: String, in venv: String) async throws -> String {
            let printed = try await run([venv + "/bin/python", "-c", "import importlib.metadata as m; print(m.version('\(module)'))"], in: venv)
            let version = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let debian = try await run(["dpkg-query", "-W", "-f", "${Version}", debianPackage], in: venv)
            let packaged = String(debian.stdout.split(separator: "+").first?.split(separator: "-").first ?? "")
            switch self {
            case .debian: #expect(version == packaged, "\(module) \(version) is not Debian's \(packaged): shadowed by a pip install?")
            case .pypi: #expect(version.compare(packaged, options: .numeric) == .orderedDescending, "\(module) \(version) from PyPI")
            }
            print("GeneratorPluginTests: \(module) \(version) (\(rawValue))")
            return version
        }
    }

    /// The Python package copied out of the repository first: pip builds in the source folder.
    static func pipInstall(_ folder: TemporaryFolder, python: String, systemPackages: Bool, _ packages: [String]) async throws -> String {
        try FileManager.default.copyItem(atPath: Paths.root + "/integrations/python", toPath: folder.path + "/imgbake-python")
        let venv = folder.path + "/venv"
        let made = try await run([python, "-m", "venv"] + (systemPackages ? ["--system-site-packages"] : []) + [venv], in: folder.path)
        try #require(made.status == 0, "\(made.stdout)")
        let installed = try await run([venv + "/bin/pip", "install", "-q", "./imgbake-python"] + packages, in: folder.path)
        try #require(installed.status == 0, "\(installed.stdout)")
        return venv
    }

    /// Examples/<name> in `folder`, with the site's own images where the generator reads them.
    static func example(_ name: String, images: String, in folder: TemporaryFolder) throws -> String {
        let directory = folder.path + "/" + name
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/" + name, toPath: directory)
        try FileManager.default.createDirectory(atPath: directory + "/" + images, withIntermediateDirectories: true)
        for image in ["coffee.png", "hubble-wide.jpg", "astronaut.jpg"] {
            try FileManager.default.copyItem(atPath: Paths.images + "/" + image, toPath: directory + "/" + images + "/" + image)
        }
        return directory
    }

    static func append(_ text: String, to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    /// "N of N image references localised" from the summary the plugin passed on: N, when all were.
    static func localised(_ output: String) -> Int? {
        guard let match = output.firstMatch(of: /(\d+) of (\d+) image references localised/), match.1 == match.2 else { return nil }
        return Int(match.1)
    }

    /// sitecheck.py as GeneratorExampleTests runs it: every image URL resolves, nothing but image
    /// references changed since `before`, feeds and sitemaps parse; and every page lays out as before
    /// in Chromium (layout_check.py, the origin's images reached through `origin`).
    static func checkSite(_ site: String, before: String, baseURL: String, origin: Origin, in folder: TemporaryFolder) async throws {
        for check in [["references", site, baseURL], ["changes", before, site], ["parse", site]] {
            let result = try await run(["python3", Paths.root + "/Tests/Support/sitecheck.py"] + check, in: folder.path)
            #expect(result.status == 0, "\(check[0]): \(result.stdout)")
        }
        guard LayoutCheck.chromium else { return }
        let layout = try await LayoutCheck.run(before: before, after: site, connectTo: [origin.connectTo])
        #expect(layout.holds && layout.images > 0, "\(layout.output)")
    }

    /// The pages opened from disk in Chromium: per page, local images and how many loaded.
    static func fromDisk(_ pages: [String], in folder: TemporaryFolder) async throws -> (status: Int32, counts: [String: (total: Int, loaded: Int)]) {
        let opened = try await run(["python3", Paths.root + "/Tests/Support/from_disk.py"] + pages, in: folder.path)
        let json = opened.stdout.drop { $0 != "{" }
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: [String: Any]], "\(opened.stdout)")
        return (opened.status, parsed.mapValues { ($0["total"] as? Int ?? -1, $0["loaded"] as? Int ?? -1) })
    }

    /// The pages of `after` opened from disk show every image, at least `least` each, and more than
    /// the same pages of `before` (the generator's output: its remote images are not counted).
    static func expectEveryImageFromDisk(_ pages: [String], before: String, after: String, least: Int, in folder: TemporaryFolder) async throws {
        guard chromium else { return }
        let was = try await fromDisk(pages.map { before + "/" + $0 }, in: folder)
        let now = try await fromDisk(pages.map { after + "/" + $0 }, in: folder)
        #expect(now.status == 0 && now.counts.values.allSatisfy { $0.total >= least && $0.total == $0.loaded }, "\(now.counts)")
        #expect(now.counts.values.map(\.total).reduce(0, +) > was.counts.values.map(\.total).reduce(0, +), "\(was.counts)")
    }

    /// The dev server's round trip (devserver.py); its JSON when it passed.
    static func devServer(_ command: [String], page: String, edit: String, append: String, marker: String, in directory: String,
                          environment: [String: String]) async throws -> String {
        let result = try await run(["python3", Paths.root + "/Tests/Support/devserver.py", "--page", page, "--edit", edit, "--append", append,
                                    "--marker", marker, "--"] + command, in: directory, environment: environment)
        #expect(result.status == 0, "\(result.stdout)")
        return result.stdout
    }

    @Test(arguments: Release.allCases)
    func theMkDocsPluginFromPipLocalisesTheBuildAndMkdocsServe(release: Release) async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let venv = try await release.venv(folder, pypi: ["mkdocs-material>=9,<10"])
        _ = try await release.version(of: "mkdocs", debianPackage: "mkdocs", in: venv)
        // Debian's Material theme (8.2.5) is a theme folder of Debian's mkdocs, with no Python metadata.
        if release == .pypi { _ = try await release.version(of: "mkdocs-material", debianPackage: "mkdocs-material", in: venv) }
        let directory = try Self.example("mkdocs", images: "docs/img", in: folder)
        // The one line, with the test's cache and origin; the widths laid over the example's imgbake.toml.
        try Self.append("""
            plugins:
              - search
              - imgbake:
                  cache_dir: \(folder.path)/cache
                  args: [--connect-to, "\(origin.connectTo)"]
                  images: { widths: [480, 960] }

            """, to: directory + "/mkdocs.yml")
        let mkdocs = [venv + "/bin/python", "-m", "mkdocs", "build", "--strict"]
        let environment = ["NO_MKDOCS_2_WARNING": "1", "IMGBAKE": Paths.binary]

        let generated = try await run(mkdocs, in: directory, environment: environment.merging(["IMGBAKE": "true"]) { $1 })
        #expect(generated.status == 0, "\(generated.stdout)")
        try FileManager.default.copyItem(atPath: directory + "/site", toPath: folder.path + "/before")
        let built = try await run(mkdocs, in: directory, environment: environment)
        #expect(built.status == 0 && Self.localised(built.stdout) == 8 && built.stdout.contains(" 0 failed"), "\(built.stdout)")
        try await Self.checkSite(directory + "/site", before: folder.path + "/before", baseURL: "https://example.org/docs/", origin: origin, in: folder)
        // The plugin's option reached imgbake: no width above 960 (hubble-wide is 2,000 px).
        let files = try FileManager.default.contentsOfDirectory(atPath: directory + "/site/_img")
        #expect(!files.isEmpty && files.allSatisfy { !$0.contains("-1320.") && !$0.contains("-2000.") }, "\(files)")

        // A rebuild from the cache kept between builds: no request.
        let again = try await run(mkdocs, in: directory, environment: environment)
        #expect(again.status == 0 && again.stdout.contains(" 0 requests"), "\(again.stdout)")

        try await Self.expectEveryImageFromDisk(["index.html", "guide/index.html"], before: folder.path + "/before", after: directory + "/site",
                                                least: 2, in: folder)

        _ = try await Self.devServer([venv + "/bin/python", "-m", "mkdocs", "serve", "-a", "127.0.0.1:{port}"], page: "/docs/", edit: "docs/index.md",
                                     append: "\n![Astronaut](http://images.test/img/astronaut.jpg)\n", marker: "_img/astronaut-",
                                     in: directory, environment: environment)

        // Failures the MkDocs way: an image that cannot be had is a warning, so --strict fails.
        try Self.append("\n![Gone](http://images.test/fault/404/gone.jpg)\n", to: directory + "/docs/index.md")
        let strict = try await run(mkdocs, in: directory, environment: environment)
        #expect(strict.status == 1 && strict.stdout.contains("WARNING") && strict.stdout.contains("HTTP 404"), "\(strict.stdout)")
        // A binary that is not there is one error saying how to install imgbake.
        let missing = try await run(mkdocs, in: directory, environment: environment.merging(["IMGBAKE": folder.path + "/no-imgbake"]) { $1 })
        #expect(missing.status == 1 && missing.stdout.contains("not found or not executable") && missing.stdout.contains("make release"),
                "\(missing.stdout)")
    }

    @Test(arguments: Release.allCases)
    func theSphinxExtensionFromPipLocalisesHTMLBuildsAndSphinxAutobuild(release: Release) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.debianPython), "Debian's python3-sphinx is not installed")
        let origin = try Origin()
        let folder = TemporaryFolder()
        let venv = try await release.venv(folder, pypi: ["sphinx"])
        // sphinx-autobuild from PyPI either way (Debian 12 has none); it runs the venv's Sphinx.
        let autobuild = try await run([venv + "/bin/pip", "install", "-q", "sphinx-autobuild>=2024,<2026"], in: folder.path)
        try #require(autobuild.status == 0, "\(autobuild.stdout)")
        _ = try await release.version(of: "sphinx", debianPackage: "python3-sphinx", in: venv)
        let directory = try Self.example("sphinx", images: "img", in: folder)
        try Self.append("""

            extensions = ["imgbake.sphinx"]
            imgbake_cache_dir = "\(folder.path)/cache"
            imgbake_args = ["--connect-to", "\(origin.connectTo)"]

            """, to: directory + "/conf.py")
        let sphinx = [venv + "/bin/python", "-m", "sphinx", "-W", "-b", "html", ".", "_build/html"]
        let environment = ["IMGBAKE": Paths.binary]

        let generated = try await run(sphinx, in: directory, environment: ["IMGBAKE": "true"])
        #expect(generated.status == 0, "\(generated.stdout)")
        try FileManager.default.copyItem(atPath: directory + "/_build/html", toPath: folder.path + "/before")
        // -E: every page written again, as the generator's output was before imgbake.
        let built = try await run(sphinx + ["-E"], in: directory, environment: environment)
        #expect(built.status == 0 && Self.localised(built.stdout) == 7 && built.stdout.contains(" 0 failed"), "\(built.stdout)")
        try await Self.checkSite(directory + "/_build/html", before: folder.path + "/before", baseURL: "https://example.org/", origin: origin, in: folder)

        // Other builders are left alone.
        let text = try await run([venv + "/bin/python", "-m", "sphinx", "-W", "-b", "text", ".", "_build/text"], in: directory, environment: environment)
        #expect(text.status == 0 && !text.stdout.contains("imgbake") && !folder.exists("sphinx/_build/text/_img"), "\(text.stdout)")

        try await Self.expectEveryImageFromDisk(["index.html", "guide.html"], before: folder.path + "/before", after: directory + "/_build/html",
                                                least: 1, in: folder)
        if Self.chromium {
            // Root-absolute URLs, forced: the same pages from disk lose their images (the check can fail).
            let conf = try String(contentsOfFile: directory + "/conf.py", encoding: .utf8)
            try (conf + "imgbake_settings = {\"output\": {\"relative_urls\": False}}\n").write(toFile: directory + "/conf.py", atomically: true, encoding: .utf8)
            let absolute = try await run([venv + "/bin/python", "-m", "sphinx", "-b", "html", ".", "_build/absolute"], in: directory, environment: environment)
            #expect(absolute.status == 0, "\(absolute.stdout)")
            let broken = try await Self.fromDisk([directory + "/_build/absolute/index.html"], in: folder)
            #expect(broken.status == 1, "\(broken.counts)")
            try conf.write(toFile: directory + "/conf.py", atomically: true, encoding: .utf8)
        }

        _ = try await Self.devServer([venv + "/bin/sphinx-autobuild", "--host", "127.0.0.1", "--port", "{port}", ".", "_build/auto"],
                                     page: "/index.html", edit: "index.rst",
                                     append: "\n.. image:: http://images.test/img/coffee.png\n   :alt: Coffee again\n", marker: "_img/coffee-",
                                     in: directory, environment: environment)

        // Warnings are Sphinx's: -W fails the build on an image that cannot be had.
        try Self.append("\n.. image:: http://images.test/fault/404/gone.jpg\n   :alt: Gone\n", to: directory + "/index.rst")
        let strict = try await run(sphinx, in: directory, environment: environment)
        #expect(strict.status != 0 && strict.stdout.contains("HTTP 404"), "\(strict.stdout)")
        let missing = try await run(sphinx, in: directory, environment: ["IMGBAKE": folder.path + "/no-imgbake"])
        #expect(missing.status != 0 && missing.stdout.contains("Extension error") && missing.stdout.contains("make release"), "\(missing.stdout)")
    }

    @Test func theJekyllGemFromGemInstallLocalisesTheBuildAndJekyllServe() async throws {
        try #require(GeneratorExampleTests.installed("jekyll") && GeneratorExampleTests.installed("gem"), "Debian's jekyll and gem are not installed")
        let origin = try Origin()
        let folder = TemporaryFolder()
        try FileManager.default.copyItem(atPath: Paths.root + "/integrations/jekyll", toPath: folder.path + "/jekyll-imgbake")
        let gemHome = ["GEM_HOME": folder.path + "/gems"]
        let gem = try await run(["gem", "build", "jekyll-imgbake.gemspec"], in: folder.path + "/jekyll-imgbake")
        #expect(gem.status == 0, "\(gem.stdout)")
        let installed = try await run(["gem", "install", "--local", "./jekyll-imgbake/jekyll-imgbake-\(SystemInfo.version).gem"], in: folder.path, environment: gemHome)
        try #require(installed.status == 0, "\(installed.stdout)")

        let directory = try Self.example("jekyll", images: "assets/img", in: folder)
        // The settings in _config.yml: the site's URL (url + baseurl) is the plugin's to give, and
        // under `jekyll serve` it is the dev server's.
        try FileManager.default.removeItem(atPath: directory + "/imgbake.toml")
        let config = try String(contentsOfFile: directory + "/_config.yml", encoding: .utf8)
        try config.replacingOccurrences(of: "  - jekyll-seo-tag\n", with: """
              - jekyll-seo-tag
              - jekyll-imgbake
            imgbake:
              cache_dir: \(folder.path)/cache
              args: [--connect-to, "\(origin.connectTo)"]
            # One time for every build: the feed's <updated> is not a change imgbake made.
            time: 2026-11-26 12:00:00 +0000

            """).write(toFile: directory + "/_config.yml", atomically: true, encoding: .utf8)
        let environment = gemHome.merging(["IMGBAKE": Paths.binary]) { $1 }

        let generated = try await run(["jekyll", "build"], in: directory, environment: gemHome.merging(["IMGBAKE": "true"]) { $1 })
        #expect(generated.status == 0, "\(generated.stdout)")
        try FileManager.default.copyItem(atPath: directory + "/_site", toPath: folder.path + "/before")
        let built = try await run(["jekyll", "build"], in: directory, environment: environment)
        #expect(built.status == 0 && Self.localised(built.stdout) == 14 && built.stdout.contains(" 0 failed"), "\(built.stdout)")
        #expect(!built.stdout.lowercased().contains("warn"), "\(built.stdout)")
        try await Self.checkSite(directory + "/_site", before: folder.path + "/before", baseURL: "https://example.org/", origin: origin, in: folder)

        _ = try await Self.devServer(["jekyll", "serve", "--host", "127.0.0.1", "--port", "{port}"], page: "/2026/11/01/first-light.html",
                                     edit: "_posts/2026-11-01-first-light.md", append: "\n![Deep field](http://images.test/img/deep-field.gif)\n",
                                     marker: "_img/deep-field-", in: directory, environment: environment)

        let missing = try await run(["jekyll", "build"], in: directory, environment: gemHome.merging(["IMGBAKE": folder.path + "/no-imgbake"]) { $1 })
        #expect(missing.status != 0 && missing.stdout.contains("not found or not executable") && missing.stdout.contains("make release"),
                "\(missing.stdout)")

        // A project site: served under /proj/ with no `url`. The images folder is under the base URL
        // too, as Jekyll's relative_url writes the pages' own links, and every reference resolves there.
        // (The about page's links are written for a site at the root: they go through relative_url here.)
        let project = try String(contentsOfFile: directory + "/_config.yml", encoding: .utf8)
            .replacingOccurrences(of: "url: \"https://example.org\"\nbaseurl: \"\"", with: "url: \"\"\nbaseurl: /proj")
        #expect(project.contains("baseurl: /proj"))
        try project.write(toFile: directory + "/_config.yml", atomically: true, encoding: .utf8)
        let about = try String(contentsOfFile: directory + "/about.md", encoding: .utf8)
            .replacingOccurrences(of: "(/assets/img/hubble-wide.jpg)", with: "({{ '/assets/img/hubble-wide.jpg' | relative_url }})")
        try about.write(toFile: directory + "/about.md", atomically: true, encoding: .utf8)
        let underProj = try await run(["jekyll", "build"], in: directory, environment: environment)
        #expect(underProj.status == 0 && underProj.stdout.contains(" 0 failed"), "\(underProj.stdout)")
        let post = try #require(folder.text("jekyll/_site/2026/11/01/first-light.html"))
        #expect(post.contains("\"/proj/_img/hubble-") && !post.contains("\"/_img/") && !post.contains("images.test/img/hubble.jpg"), "\(post)")
        // Without `url`, the feed and the social cards cannot have absolute image URLs (imgbake says so
        // and leaves them); the feed also holds the post's page-relative link, which jekyll-feed copies
        // as it is. The pages' own references all resolve under /proj/.
        try FileManager.default.removeItem(atPath: directory + "/_site/feed.xml")
        let resolves = try await run(["python3", Paths.root + "/Tests/Support/sitecheck.py", "references", directory + "/_site",
                                      "https://example.org/proj/"], in: folder.path)
        #expect(resolves.status == 0, "\(resolves.stdout)")
    }
}
