import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// In place, a page that did not change learns that its images did: the site's own image replaced or
/// deleted, a remote image changed past its max-age, `--refresh`. Each as a user meets it, in three
/// steps; the randomized histories are InPlaceHistoryTests'.
@Suite struct InPlaceSourcesTests {
    func inPlace(_ site: TestSite, _ origin: Origin?) -> Configuration {
        site.configuration(origin: origin, out: false)
    }

    /// `p.html` names `img/a.jpg`; built in place; the image replaced (the page left alone, as Sphinx
    /// does when only an image changed): the next build gives the new picture. Touched, nothing
    /// changes; deleted, the page names `img/a.jpg` again, as a clean build of its source would.
    @Test func aReplacedLocalImageReachesAnUnchangedPage() async throws {
        let site = TestSite()
        site.file("img/a.jpg", Paths.image("hubble.jpg"))
        site.page("p.html", "<p>p</p>\n<img src=\"img/a.jpg\" alt=\"a\">\n")
        _ = try await site.build(inPlace(site, nil))
        let first = try #require(site.folder.text("site/p.html"))
        #expect(first.contains("/_img/a-") && !first.contains("\"img/a.jpg\""))

        site.file("img/a.jpg", Paths.image("astronaut.jpg"))
        let replaced = try await site.build(inPlace(site, nil))
        let second = try #require(site.folder.text("site/p.html"))
        #expect(replaced.summary.pagesScanned == 1 && replaced.summary.pagesWritten == 1 && replaced.summary.imagesRead == 1)
        #expect(second != first && second.contains("/_img/a-"))
        // The old picture's files are gone, the new one's are there.
        let names = Set(site.folder.files(under: "site/_img"))
        #expect(names.allSatisfy { second.contains($0) })

        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, site.site + "/img/a.jpg", &times, 0)
        let touched = try await site.build(inPlace(site, nil))
        #expect(touched.summary.pagesWritten == 0 && touched.summary.filesWritten == 0 && site.folder.text("site/p.html") == second)

        try FileManager.default.removeItem(atPath: site.site + "/img/a.jpg")
        let deleted = try await site.build(inPlace(site, nil))
        #expect(site.folder.text("site/p.html") == "<p>p</p>\n<img src=\"img/a.jpg\" alt=\"a\">\n")
        #expect(deleted.diagnostics.contains { $0.message.contains("no such file") && $0.location?.file == "p.html" })
        #expect(site.folder.files(under: "site/_img").isEmpty)
    }

    /// `http://…/img/hubble.jpg` served with an ETag and `Cache-Control: max-age=0`; built in place; the
    /// image changed at the origin: the next build asks, and the page gets the new picture. `--refresh`
    /// asks too, for every image.
    @Test func aRemoteImagePastItsMaxAgeIsRevalidatedForAnUnchangedPage() async throws {
        let origin = try Origin(cacheControl: "max-age=0")
        let site = TestSite()
        site.page("p.html", "<img src=\"\(origin.url("img/hubble.jpg"))\" alt=\"h\">\n")
        _ = try await site.build(inPlace(site, origin))
        let first = try #require(site.folder.text("site/p.html"))

        try await origin.swap("hubble.jpg", to: "astronaut.jpg")
        try await origin.reset()
        let changed = try await site.build(inPlace(site, origin))
        #expect(try await origin.stats().requests_total >= 1)
        #expect(changed.summary.pagesWritten == 1 && site.folder.text("site/p.html") != first)
        #expect(!changed.summary.nothingChanged)

        try await origin.reset()
        var refresh = inPlace(site, origin)
        refresh.fetch.policy = .refresh
        let refreshed = try await site.build(refresh)
        #expect(try await origin.stats().requests_total == 1 && refreshed.summary.notModified == 1)
        #expect(refreshed.summary.pagesScanned == 1 && refreshed.summary.pagesWritten == 0)
    }
}
