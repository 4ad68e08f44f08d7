import Foundation
import ImgBakeTestSupport
import Testing

/// `make demo`'s output opens from disk: Examples/site asks for page-relative URLs
/// (`output.relative_urls`), so every image of its pages shows when a page is opened as a file://
/// URL in Chromium (Tests/Support/from_disk.py); with root-absolute `/_img/` URLs none would.
@Suite struct DemoFromDiskTests {
    static let browser = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")

    @Test(.enabled(if: browser, "Debian's chromium is not installed (`make test` installs it)"))
    func theDemosPagesShowEveryImageFromDisk() async throws {
        let folder = TemporaryFolder()
        let demo = try await run(["bash", Paths.root + "/Examples/demo.sh"], in: Paths.root,
                                 environment: ["IMGBAKE": Paths.binary, "DEMO_OUT": folder.path + "/demo"])
        #expect(demo.status == 0, "\(demo.stdout)")
        let site = folder.path + "/demo/site"
        #expect(folder.text("demo/site/posts/first-light.md")?.contains("](/_img/") == true, "Markdown keeps the public path")
        #expect(folder.text("demo/site/index.html")?.contains("src=\"_img/") == true)
        let opened = try await run(["python3", Paths.root + "/Tests/Support/from_disk.py", site + "/index.html", site + "/gallery.html"],
                                   in: folder.path)
        #expect(opened.status == 0, "\(opened.stdout)")
        let counts = try #require(try JSONSerialization.jsonObject(with: Data(opened.stdout.utf8)) as? [String: [String: Any]])
        #expect(counts.values.allSatisfy { ($0["total"] as? Int ?? 0) > 0 && $0["total"] as? Int == $0["loaded"] as? Int }, "\(counts)")

        // Served, its pages lay out as Examples/site does with its images from the origin.
        let origin = try Origin(root: Paths.images, tls: (cert: folder.path + "/demo/origin-cert.pem", key: folder.path + "/demo/origin-key.pem"))
        let layout = try await LayoutCheck.run(before: Paths.root + "/Examples/site", after: site,
                                               connectTo: ["images.example.com:443:127.0.0.1:\(origin.port)"], label: "demo")
        #expect(layout.holds && layout.images > 0, "\(layout.output)")

        // The same site with root-absolute URLs: its images do not show from disk (the check can fail).
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/site", toPath: folder.path + "/absolute")
        folder.write("absolute/imgbake.toml", "[output]\nrelative_urls = false\n")
        let built = try await runImgbake(["build", folder.path + "/absolute", "--out", folder.path + "/absolute-out", "--cache-dir",
                                          folder.path + "/demo/cache", "--offline", "--quiet"])
        #expect(built.status == 0, "\(built.stderr)")
        let broken = try await run(["python3", Paths.root + "/Tests/Support/from_disk.py", folder.path + "/absolute-out/index.html"],
                                   in: folder.path)
        #expect(broken.status == 1, "\(broken.stdout)")
    }
}
