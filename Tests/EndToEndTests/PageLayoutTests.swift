import Foundation
import ImgBakeTestSupport
import Testing

/// Pages look the same after imgbake: in Debian's Chromium, at a phone and a desktop viewport, every
/// `<img>` keeps its box (±1 px), none breaks, the text is the same (Tests/Support/layout_check.py).
/// Here on pages written the way themes break under a rewrite (Tests/Fixtures/layout: a gallery script
/// that groups images by their siblings, a lightbox that wraps them in links, child, sibling and
/// structural selectors, flex and grid items, one dimension set in CSS, minima's `max-width` without
/// `height: auto`, a reset that styles `picture`); the generators' examples are checked the same way
/// where they are built (GeneratorExampleTests, HugoExampleTests, GeneratorPluginTests).
@Suite struct PageLayoutTests {
    static func fixtureSite(in folder: TemporaryFolder) async throws -> (before: String, after: String) {
        let before = folder.path + "/before", after = folder.path + "/after"
        try FileManager.default.createDirectory(atPath: before, withIntermediateDirectories: true)
        let fixtures = Paths.root + "/Tests/Fixtures/layout"
        for name in try FileManager.default.contentsOfDirectory(atPath: fixtures) where name.hasSuffix(".html") || name.hasSuffix(".css") {
            try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: before + "/" + name)
        }
        let images = try await run(["python3", fixtures + "/make-images.py", before], in: folder.path)
        try #require(images.status == 0, "\(images.stdout)")
        let built = try await runImgbake(["build", before, "--out", after, "--cache-dir", folder.path + "/cache", "--quiet"])
        try #require(built.status == 0, "\(built.stderr)")
        return (before, after)
    }

    @Test(.enabled(if: LayoutCheck.chromium, "Debian's chromium is not installed (`make test` installs it)"))
    func theFixturePagesLayOutAsTheyDidWithoutImgbake() async throws {
        let folder = TemporaryFolder()
        let site = try await Self.fixtureSite(in: folder)
        let check = try await LayoutCheck.run(before: site.before, after: site.after, label: "fixtures")
        #expect(check.holds, "\(check.output)")
        // 9 pages × 2 viewports, every image of each compared.
        #expect(check.rows.count == 18 && check.images == 78, "\(check.output)")
    }

    /// The two reproductions, each as a page of its own: the gallery script's figures stay
    /// siblings (one row: 276×414 and 414×276 at 700 px), and Sphinx's one-dimension sizes keep their
    /// proportions (91×100 and 640×308, not 1920×100 and 640×376).
    @Test(.enabled(if: LayoutCheck.chromium, "Debian's chromium is not installed (`make test` installs it)"))
    func aGalleryScriptAndSphinxSizesKeepTheirLayout() async throws {
        let folder = TemporaryFolder()
        let site = try await Self.fixtureSite(in: folder)
        let gallery = try #require(folder.text("after/gallery.html"))
        #expect(!gallery.contains("<picture"), "the gallery script moves its images: no wrapper")
        let sphinx = try #require(folder.text("after/sphinx-sizes.html"))
        #expect(!sphinx.contains("width=\"1920\"") && !sphinx.contains("height=\"376\""), "\(sphinx)")
        #expect(sphinx.contains("sizes=\"(max-width: 91px) 100vw, 91px\""), "the 91 px logo is asked for at 91 px: \(sphinx)")
        let check = try await LayoutCheck.run(before: site.before, after: site.after, pages: ["gallery.html", "sphinx-sizes.html"])
        #expect(check.holds && check.images == 8, "\(check.output)")
    }
}
