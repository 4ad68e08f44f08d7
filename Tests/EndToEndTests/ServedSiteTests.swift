import Foundation
@testable import ImgBake
import ImgBakeTestSupport
import Testing

/// `imgbake serve`'s pages as the library makes them (`ServedSite`), beside a build of the same page
/// with the same configuration and cache: a warm page is the build's byte for byte; a cold one names
/// each image by its pending URL, which makes it; a page sent again is answered as before.
@Suite struct ServedSiteTests {
    static let html = """
        <!doctype html><html><head><title>t</title>
        <meta property="og:image" content="http://images.test/img/astronaut.jpg">
        <style>.hero { background: url(http://images.test/img/coffee.png) }</style></head><body>
        <img src="http://images.test/img/hubble.jpg" alt="Hubble">
        <p><img src="http://images.test/img/astronaut.jpg" srcset="http://images.test/img/astronaut.jpg 512w" alt="A"></p>
        </body></html>

        """

    /// A page whose images a build made: served exactly as the build wrote it, its files from the cache.
    @Test func aWarmPageIsTheBuildsByteForByte() async throws {
        let origin = try Origin()
        let site = TestSite()
        site.page("posts/a/index.html", Self.html)
        var config = site.configuration(origin: origin)
        config.output.baseURL = RemoteURL.resolve("https://example.org/")
        _ = try await site.build(config)
        let built = try #require(site.output("posts/a/index.html"))
        #expect(built.contains("/_img/hubble-"))

        let upstream = try #require(RemoteURL.resolve("http://127.0.0.1:9/"))
        try await ServedSite.using(config, upstream: upstream) { served in
            let path = try #require(served.sitePath(urlPath: "/posts/a/", contentType: "text/html; charset=utf-8"))
            let page = await served.page(Array(Self.html.utf8), sitePath: path)
            #expect(page.bytes.map { String(decoding: $0, as: UTF8.self) } == built)
            #expect(page.images.cached == 3 && page.images.pending == 0 && page.references == 5)
            // Every file the page names is answered, with the bytes the build wrote.
            for name in Set(built.matches(of: /\/_img\/([^" ,)]+)/).map { String($0.output.1) }) {
                guard case .file(let bytes, let type, let immutable)? = await served.image(named: name) else {
                    Issue.record("\(name) is not served")
                    continue
                }
                #expect(bytes == Array(FileManager.default.contents(atPath: site.out + "/_img/" + name)!) && immutable)
                #expect(type.hasPrefix("image/"))
            }
            #expect(await served.image(named: "no-such-0123456789-10.webp") == nil)
        }
    }

    /// A page whose images are not in the cache: answered at once, each image named by a pending URL;
    /// asking for that URL makes the image (one download however many ask), and the page named again
    /// then has the files' names. Sent again unchanged, it is answered as before.
    @Test func aColdPageNamesPendingURLsThatMakeTheImages() async throws {
        let origin = try Origin()
        let site = TestSite()
        try FileManager.default.createDirectory(atPath: site.site, withIntermediateDirectories: true)
        let config = site.configuration(origin: origin)
        let upstream = try #require(RemoteURL.resolve("http://127.0.0.1:9/"))
        let bytes = Array(Self.html.utf8)
        try await ServedSite.using(config, upstream: upstream) { served in
            let cold = await served.page(bytes, sitePath: "index.html")
            let text = String(decoding: try #require(cold.bytes), as: UTF8.self)
            #expect(cold.images.pending == 3 && cold.images.cached == 0)
            let pending = Set(text.matches(of: /\/_img\/pending\/([0-9a-f]+)/).map { String($0.output.1) })
            #expect(pending.count == 3 && !text.contains("images.test/img/hubble.jpg"), "\(text)")
            // Ten requests for each at once: each image downloaded once.
            await withTaskGroup(of: Void.self) { group in
                for id in pending {
                    for _ in 0..<10 {
                        group.addTask {
                            guard case .file(let image, _, let immutable)? = await served.image(named: "pending/" + id) else {
                                Issue.record("pending/\(id) was not made")
                                return
                            }
                            #expect(!image.isEmpty && !immutable)
                        }
                    }
                }
            }
            let stats = try await origin.stats()
            #expect(stats.requests_total == 3 && stats.paths.values.allSatisfy { $0 == 1 }, "\(stats.paths)")
            let warm = await served.page(bytes, sitePath: "index.html")
            #expect(warm.images.pending == 0 && warm.images.cached == 3 && !warm.remembered)
            let again = await served.page(bytes, sitePath: "index.html")
            #expect(again.bytes == warm.bytes && again.images.cached == 3 && again.remembered, "a page sent again is answered as before")
            #expect(served.totals.pages == 3 && served.totals.imagesMade == 3)
        }
    }
}
