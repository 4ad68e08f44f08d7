import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// A page a build for another output made from the same source, settings and images is written from
/// the copy that build kept (`PageStream.reuse`): not scanned, not rewritten, its image files written
/// from the cache. Any change to what the page was made of (the site's own image, a remote image past
/// its max-age, the settings) makes it build as usual; so does `--refresh`.
@Suite struct PagesBuiltElsewhereTests {
    func into(_ site: TestSite, _ origin: Origin, _ name: String) -> Configuration {
        var config = site.configuration(origin: origin)
        config.outputDirectory = site.folder.path + "/" + name
        return config
    }

    func files(_ site: TestSite, _ name: String) -> [String: String] { site.folder.digests(under: name) }

    @Test func aPageIsWrittenAsAnotherOutputsBuildMadeItUntilAnythingItWasMadeOfChanges() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.file("img/a.jpg", Paths.image("hubble.jpg"))
        site.page("p.html", "<p>p</p>\n<img src=\"img/a.jpg\" alt=\"a\">\n<img src=\"\(origin.url("img/coffee.png"))\" alt=\"c\">\n")
        site.page("q.html", "<p>q</p>\n")
        _ = try await site.build(into(site, origin, "one"))
        let one = files(site, "one")

        // The same sources into a second output: the same files, p.html not scanned (q.html, which has
        // no image, is copied as a cold build copies it).
        let two = try await site.build(into(site, origin, "two"))
        #expect(two.summary.pagesReused == 1 && two.summary.pagesScanned == 1 && two.summary.variantsEncoded == 0, "\(two.summary.lines)")
        #expect(files(site, "two") == one)
        #expect(two.summary.lines[0].contains("1 as built for another output"))

        // The site's own image replaced: that page builds; the other is still as built elsewhere.
        site.file("img/a.jpg", Paths.image("astronaut.jpg"))
        let three = try await site.build(into(site, origin, "three"))
        #expect(three.summary.pagesScanned == 2 && three.summary.pagesReused == 0, "\(three.summary.lines)")
        let page = try #require(site.folder.text("three/p.html"))
        #expect(page != site.folder.text("one/p.html"))
        #expect(site.folder.files(under: "three/_img").allSatisfy { page.contains($0) })
        #expect(site.folder.files(under: "three/_img").contains { $0.hasPrefix("a-") })

        // The remote image changed at its origin, and the copy in the cache past its age (60 days on):
        // asked again, and the page builds with the new one.
        try await origin.swap("coffee.png", to: "hubble.jpg")
        let later = OffsetClock(offset: 60 * 86_400)
        let four = try await site.build(into(site, origin, "four"), clock: later)
        #expect(four.summary.pagesScanned == 2 && four.summary.imagesDownloaded == 1, "\(four.summary.lines)")
        #expect(site.folder.text("four/p.html") != site.folder.text("three/p.html"))

        // Other settings: every page builds.
        var wider = into(site, origin, "five")
        wider.images.widths = [320]
        let five = try await site.build(wider, clock: later)
        #expect(five.summary.pagesReused == 0 && five.summary.pagesScanned == 2, "\(five.summary.lines)")

        // --refresh revalidates every image, so every page is read for them.
        var refresh = into(site, origin, "six")
        refresh.fetch.policy = .refresh
        try await origin.reset()
        let six = try await site.build(refresh, clock: later)
        #expect(six.summary.pagesReused == 0 && six.summary.pagesScanned == 2, "\(six.summary.lines)")
        #expect(try await origin.stats().requests_total >= 1)
        #expect(files(site, "six") == files(site, "four"))
    }

    /// In place after a build of the same sources into `--out`: the pages are written as that build
    /// made them, over their sources, and the next in-place build finds them settled; an edit builds.
    @Test func inPlaceAfterAnOutBuildOfTheSameSources() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.file("img/a.jpg", Paths.image("hubble.jpg"))
        site.page("p.html", "<img src=\"img/a.jpg\" alt=\"a\">\n<img src=\"\(origin.url("img/coffee.png"))\" alt=\"c\">\n")
        _ = try await site.build(into(site, origin, "out"))
        let built = try #require(site.folder.text("out/p.html"))

        let inPlace = try await site.build(site.configuration(origin: origin, out: false))
        #expect(inPlace.summary.pagesReused == 1 && inPlace.exitCode == 0, "\(inPlace.summary.lines)")
        #expect(site.folder.text("site/p.html") == built)
        #expect(Set(site.folder.files(under: "site/_img")) == Set(site.folder.files(under: "out/_img")))

        let again = try await site.build(site.configuration(origin: origin, out: false))
        #expect(again.summary.pagesWritten == 0 && again.summary.filesWritten == 0, "\(again.summary.lines)")
        #expect(site.folder.text("site/p.html") == built)

        site.page("p.html", "<p>edited</p>\n<img src=\"img/a.jpg\" alt=\"a\">\n")
        let edited = try await site.build(site.configuration(origin: origin, out: false))
        #expect(edited.summary.pagesScanned == 1 && edited.summary.pagesReused == 0)
        let page = try #require(site.folder.text("site/p.html"))
        #expect(page.contains("edited") && !page.contains("coffee"))
        #expect(site.folder.files(under: "site/_img").allSatisfy { page.contains($0) })
    }
}
