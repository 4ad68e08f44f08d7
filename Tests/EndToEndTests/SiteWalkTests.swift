import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// What a real site folder can hold besides pages: link loops, links out of the site, dangling links,
/// sockets and FIFOs. Each is a warning naming the path; the walk never follows a link twice or out
/// of the site, and the build goes on.
@Suite struct SiteWalkTests {
    @Test(arguments: [true, false])
    func oddFilesAreWarningsAndTheBuildGoesOn(inPlace: Bool) async throws {
        let origin = try Origin()
        let site = TestSite()
        let outside = TemporaryFolder()
        site.page("index.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=c>")
        site.page("posts/p.html", "<img src=\"\(origin.url("img/hubble.jpg"))\" alt=h>")
        outside.write("outside.html", "<img src=\"\(origin.url("img/astronaut.jpg"))\" alt=a>")
        let before = outside.read("outside.html")
        let fm = FileManager.default
        try fm.createDirectory(atPath: site.site + "/loop", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: site.site + "/loop/up", withDestinationPath: "..")      // a loop
        try fm.createSymbolicLink(atPath: site.site + "/alias", withDestinationPath: "posts")     // a second way to a folder
        try fm.createSymbolicLink(atPath: site.site + "/dangling.html", withDestinationPath: "nowhere.html")
        try fm.createSymbolicLink(atPath: site.site + "/outside.html", withDestinationPath: outside.path + "/outside.html")
        try fm.createSymbolicLink(atPath: site.site + "/away", withDestinationPath: outside.path)
        #expect(mkfifo(site.site + "/pipe.html", 0o644) == 0) // reading it would block for ever
        let socket = try await run(["python3", "-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
                                    site.site + "/control.sock"], in: site.folder.path)
        #expect(socket.status == 0)

        let result = try await site.build(origin: origin, out: !inPlace)
        #expect(result.exitCode == 0)
        let messages = result.diagnostics.map(\.description)
        for expected in ["loop/up: symbolic link loop (points back up to the site folder); not followed",
                         "dangling.html: dangling symbolic link; skipped",
                         "outside.html: symbolic link to outside the site; not followed",
                         "away: symbolic link to outside the site; not followed",
                         "pipe.html: not a regular file or folder (a socket, FIFO or device); skipped",
                         "control.sock: not a regular file or folder (a socket, FIFO or device); skipped"] {
            #expect(messages.contains { $0.hasSuffix(expected) }, "no \(expected) in \(messages)")
        }
        #expect(messages.contains { $0.hasSuffix("alias: symbolic link to posts, which is walked already; not followed again") })
        #expect(result.summary.pagesScanned == 2 && result.summary.referencesLocalised == 2)
        #expect(outside.read("outside.html") == before, "nothing written outside the site")
        let root = inPlace ? site.site : site.out
        #expect(try String(contentsOfFile: root + "/posts/p.html", encoding: .utf8).contains("/_img/hubble-"))
        #expect(!fm.fileExists(atPath: outside.path + "/_img"))
    }

    /// In place, a page reached through a link inside the site is not rewritten through the link (that
    /// would turn the link into a file): its target is rewritten where it is.
    @Test func aLinkedPageStaysALink() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("real.html", "<img src=\"\(origin.url("img/coffee.png"))\" alt=c>")
        try FileManager.default.createSymbolicLink(atPath: site.site + "/linked.html", withDestinationPath: "real.html")
        let result = try await site.build(origin: origin, out: false)
        #expect(result.exitCode == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: site.site + "/linked.html")
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try String(contentsOfFile: site.site + "/linked.html", encoding: .utf8).contains("/_img/coffee-"))
    }
}
