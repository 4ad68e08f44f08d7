import Foundation
import ImgBakeTestSupport
import Testing

/// The files a browser that takes JPEG XL and AVIF shows: Debian's Chromium (156 takes both) opens
/// the built pages from disk (Tests/Support/from_disk.py) and every `<img>` in a `<picture>` shows a
/// file of the picture's first `<source>`, JPEG XL where it was asked for (beside WebP: beside AVIF it
/// is no smaller for these images, and its `<source>` is left out) and AVIF by default; a
/// photograph, a PNG photograph, an image with transparency and an animation all show.
@Suite struct BrowserFormatTests {
    static let browser = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
    static let images = ["hubble.jpg", "hubble-wide.jpg", "coffee.png", "astronaut-round.png", "deep-field.gif"]

    struct Shown: Decodable {
        struct Source: Decodable { let type: String; let files: [String] }
        let file: String
        let first: Source?
    }

    struct Page: Decodable { let total: Int; let loaded: Int; let shown: [Shown] }

    /// Builds a page of `images` with `formats` and opens it in Chromium.
    static func shown(formats: String?, in folder: TemporaryFolder) async throws -> Page {
        let site = folder.path + "/site"
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        for name in images { try FileManager.default.copyItem(atPath: Paths.images + "/" + name, toPath: site + "/" + name) }
        let body = images.map { "<p><img src=\"\($0)\" alt=\"\($0)\"></p>" }.joined(separator: "\n")
        folder.write("site/index.html", "<!doctype html><html><head><title>formats</title></head><body><main>\n\(body)\n</main></body></html>\n")
        folder.write("imgbake.toml", "[output]\nrelative_urls = true\n" + (formats.map { "[images]\nformats = \($0)\n" } ?? ""))
        let built = try await runImgbake(["build", site, "--out", folder.path + "/out", "--cache-dir", folder.path + "/cache",
                                          "--config", folder.path + "/imgbake.toml", "--quiet"])
        try #require(built.status == 0, "\(built.stderr)")
        let opened = try await run(["python3", Paths.root + "/Tests/Support/from_disk.py", folder.path + "/out/index.html"], in: folder.path)
        #expect(opened.status == 0, "\(opened.stdout)")
        let pages = try JSONDecoder().decode([String: Page].self, from: Data(opened.stdout.utf8))
        return try #require(pages.values.first)
    }

    @Test(.enabled(if: browser, "Debian's chromium is not installed (`make test` installs it)"),
          arguments: [("[\"jxl\", \"webp\", \"original\"]", "jxl"), (nil, "avif")])
    func aBrowserTakingTheFirstSourceShowsItsFiles(formats: String?, best: String) async throws {
        let folder = TemporaryFolder()
        let page = try await Self.shown(formats: formats, in: folder)
        #expect(page.total == Self.images.count && page.loaded == page.total, "\(page)")
        for image in page.shown {
            if let first = image.first { #expect(first.files.contains(image.file), "\(image)") }
        }
        // The first <source> is the best format asked for wherever it wins, and the browser shows it.
        let inBest = page.shown.filter { $0.first?.type == "image/\(best)" && $0.file.hasSuffix(".\(best)") }
        #expect(inBest.count >= 2, "\(page.shown)")
        // The animation stays animated: it is offered as WebP (neither AVIF nor JPEG XL keeps frames here).
        let animation = try #require(page.shown.first { $0.file.hasPrefix("deep-field-") }, "\(page.shown)")
        #expect(animation.file.hasSuffix(".webp") || animation.file.hasSuffix(".gif"), "\(animation)")
    }
}
