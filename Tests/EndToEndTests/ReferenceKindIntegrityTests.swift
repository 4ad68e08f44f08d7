import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The dimension the clean-up once missed: the kind of reference. A social card written as an absolute
/// URL under `base_url` lost its file on the next build, as did a feed's enclosure, because only
/// root-relative `/_img/` references were counted as in use. Here every kind of reference a page,
/// feed, stylesheet or front matter carries, each written three ways (root-relative, page-relative,
/// absolute under `base_url`), × page state × mode × builds 1–3: after every build every local
/// reference resolves (found by a pattern of the test's own, in every text file of the output), and
/// the output is what a clean build of the same sources gives.
@Suite struct ReferenceKindIntegrityTests {
    enum Kind: String, CaseIterable, Sendable {
        case imgSrc, imgSrcset, pictureSource, styleAttribute, styleElement, stylesheet, ogImage, twitterImage, icon, preload
        case videoPoster, imageLink, jsonLD, rssEnclosure, rssMedia, rssHTML, atomEnclosure, jsonFeed, markdownImage
        case markdownDefinition, frontMatterYAML, frontMatterTOML
    }

    /// What happens to the page: nothing; it carries a warning from the start (an `<img>` without alt,
    /// or a reference outside the site); it is edited after the first build; one of its references
    /// fails (a missing image); its image's file changes after the first build (new names).
    enum PageState: String, CaseIterable, Sendable { case clean, withWarnings, edited, partlyFailed, imageChanged }

    /// In place; in place with page-relative URLs (`relative_urls`); `--out` copying every original;
    /// `--out` leaving out originals nothing names.
    enum Layout: String, CaseIterable, Sendable {
        case inPlace, inPlaceRelative, out, outReferenced
        var mode: Mode { self == .inPlace || self == .inPlaceRelative ? .inPlace : .out }
    }

    static let cases: [(Kind, PageState, Layout)] = Kind.allCases.flatMap { kind in
        PageState.allCases.flatMap { state in Layout.allCases.map { (kind, state, $0) } }
    }

    /// The file (path under the site, text) that refers to each of `urls` with a reference of `kind`.
    static func source(_ kind: Kind, _ urls: [String], extra: String) -> (String, String) {
        let html = { (head: String, body: String) in
            ("posts/page.html", "<!doctype html>\n<html><head><title>t</title>\n\(head)</head><body>\n\(body)\(extra)\n</body></html>\n")
        }
        let each = { (make: (String) -> String) in urls.map(make).joined(separator: "\n") }
        switch kind {
        case .imgSrc: return html("", each { "<img src=\"\($0)\" alt=\"a\">" })
        case .imgSrcset: return html("", each { "<img srcset=\"\($0) 1x\" alt=\"a\">" })
        case .pictureSource: return html("", each { "<picture><source srcset=\"\($0) 2x\"><img src=\"\($0)\" alt=\"a\"></picture>" })
        case .styleAttribute: return html("", each { "<div style=\"background: url('\($0)')\"></div>" })
        case .styleElement: return html("<style>\n" + each { ".h { background: url(\($0)) }" } + "\n</style>\n", "")
        case .stylesheet:
            return ("posts/site.css", each { ".h { background-image: url(\"\($0)\") }" } + "\n" + (extra.isEmpty ? "" : ".x { background: url(\(extra)) }\n"))
        case .ogImage: return html(each { "<meta property=\"og:image\" content=\"\($0)\">" }, "")
        case .twitterImage: return html(each { "<meta name=\"twitter:image\" content=\"\($0)\">" }, "")
        case .icon: return html(each { "<link rel=\"icon\" href=\"\($0)\">" }, "")
        case .preload: return html(each { "<link rel=\"preload\" as=\"image\" href=\"\($0)\">" }, "")
        case .videoPoster: return html("", each { "<video poster=\"\($0)\"></video>" })
        case .imageLink: return html("", each { "<a href=\"\($0)\"><img src=\"\($0)\" alt=\"a\"></a>" })
        case .jsonLD:
            let list = urls.map { "\"\($0)\"" }.joined(separator: ", ")
            return html("<script type=\"application/ld+json\">{\"@context\": \"https://schema.org\", \"image\": [\(list)]}</script>\n", "")
        case .rssEnclosure, .rssMedia, .rssHTML:
            let items = each { url in
                switch kind {
                case .rssEnclosure: "<item><title>i</title><enclosure url=\"\(url)\" length=\"1\" type=\"image/png\"/></item>"
                case .rssMedia: "<item><title>i</title><media:content url=\"\(url)\" medium=\"image\"/></item>"
                default: "<item><title>i</title><description>&lt;img src=&quot;\(url)&quot; alt=&quot;a&quot;&gt;</description></item>"
                }
            }
            let more = extra.isEmpty ? "" : "<item><title>x</title><enclosure url=\"\(extra)\" length=\"1\" type=\"image/png\"/></item>"
            return ("posts/index.xml", "<?xml version=\"1.0\"?>\n<rss version=\"2.0\" xmlns:media=\"http://search.yahoo.com/mrss/\"><channel><title>t</title>\n\(items)\n\(more)</channel></rss>\n")
        case .atomEnclosure:
            let entries = each { "<entry><title>e</title><link rel=\"enclosure\" type=\"image/png\" href=\"\($0)\"/></entry>" }
            let more = extra.isEmpty ? "" : "<entry><title>x</title><link rel=\"enclosure\" type=\"image/png\" href=\"\(extra)\"/></entry>"
            return ("posts/atom.xml", "<?xml version=\"1.0\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>t</title>\n\(entries)\n\(more)</feed>\n")
        case .jsonFeed:
            let items = urls.enumerated().map { "{\"id\": \"\($0.offset)\", \"image\": \"\($0.element)\", \"banner_image\": \"\($0.element)\"}" }
            let more = extra.isEmpty ? "" : ", {\"id\": \"x\", \"image\": \"\(extra)\"}"
            return ("posts/feed.json", "{\"version\": \"https://jsonfeed.org/version/1.1\", \"title\": \"t\", \"items\": [\(items.joined(separator: ", "))\(more)]}\n")
        case .markdownImage: return ("posts/post.md", "# Post\n\n" + each { "![a](\($0))\n" } + "\n" + (extra.isEmpty ? "" : "![x](\(extra))\n"))
        case .markdownDefinition:
            let uses = urls.indices.map { "![a][r\($0)]" }.joined(separator: " ")
            let definitions = urls.enumerated().map { "[r\($0.offset)]: \($0.element)" }.joined(separator: "\n")
            return ("posts/post.md", "# Post\n\n\(uses)\n\n\(definitions)\n" + (extra.isEmpty ? "" : "\n![x](\(extra))\n"))
        case .frontMatterYAML:
            let list = urls.map { "  - \($0)" }.joined(separator: "\n")
            return ("posts/post.md", "---\ntitle: Post\nimage: \(urls[0])\nimages:\n\(list)\n---\n# Post\n" + (extra.isEmpty ? "" : "\n![x](\(extra))\n"))
        case .frontMatterTOML:
            let list = urls.map { "\"\($0)\"" }.joined(separator: ", ")
            return ("posts/post.md", "+++\ntitle = \"Post\"\ncover = \"\(urls[0])\"\nimages = [\(list)]\n+++\n# Post\n" + (extra.isEmpty ? "" : "\n![x](\(extra))\n"))
        }
    }

    /// HTML kinds carry a warning as an `<img>` without alt; the others as a reference outside the site.
    static func warning(for kind: Kind) -> String {
        let (path, _) = source(kind, ["/img/a.png"], extra: "")
        return path.hasSuffix(".html") ? "<img src=\"/img/b.jpg\">" : "../../../outside.png"
    }

    @Test(arguments: cases)
    func everyReferenceKeepsItsFile(kind: Kind, state: PageState, layout: Layout) async throws {
        let world = try World()
        let mode = layout.mode
        world.configure = { config in
            config.output.baseURL = RemoteURL.resolve("https://example.org/")
            config.requireAlt = .warn
            config.output.originals = layout == .outReferenced ? .referenced : .all
            config.output.relativeURLs = layout == .inPlaceRelative ? .always : .never
        }
        world.write("img/a.png", Paths.fixture("colour/two-colours.png"))
        world.write("img/b.jpg", Paths.fixture("metadata/camera.jpg"))
        world.write("index.html", "<!doctype html>\n<title>i</title>\n<img src=\"img/b.jpg\" alt=\"b\">\n")
        var urls = ["/img/a.png", "../img/b.jpg", "https://example.org/img/a.png"]
        if state == .partlyFailed { urls.append("/img/missing.png") }
        let write = { (extra: String) in
            let (path, text) = Self.source(kind, urls, extra: extra)
            world.write(path, text)
        }
        write(state == .withWarnings ? Self.warning(for: kind) : "")
        let comment = "\(kind) \(state) \(layout)"
        let first = try await world.buildAndCheck(mode, comment: comment)
        try expectOriginalsThere(world, mode, comment: comment)
        #expect(first.summary.referencesLocalised >= 3, "\(comment): \(first.summary.lines)")
        switch state {
        case .edited:
            // A change that touches no reference, in the file's own syntax.
            let (path, text) = Self.source(kind, urls, extra: "")
            world.write(path, kind.isHTML ? text.replacingOccurrences(of: "</body>", with: "<p>edited</p></body>") : text + "\n")
        case .imageChanged: world.write("img/a.png", Paths.fixture("colour/diagram.png"))
        case .clean, .withWarnings, .partlyFailed: break
        }
        for build in 2...3 {
            try await world.buildAndCheck(mode, comment: "\(comment), build \(build)")
            try expectOriginalsThere(world, mode, comment: "\(comment), build \(build)")
        }
        if mode == .inPlace { try await expectCheckNamesWhatPagesUse(world, comment: comment) }
    }

    /// `--check` counts the files a page uses with the clean-up's own function: with every image file
    /// gone, the files it says do not exist are exactly those the written pages name (by the test's
    /// own pattern), which are exactly the files the clean-up kept.
    func expectCheckNamesWhatPagesUse(_ world: World, comment: String) async throws {
        let used = world.referencedFiles(.inPlace)
        #expect(world.imageFiles(under: world.site.site) == used, "\(comment)")
        for name in used { unlink(world.site.site + "/_img/" + name) }
        var check = world.configuration(.inPlace)
        check.check = true
        let checked = try await Build(check, clock: world.clock).run()
        let named = Set(checked.remaining.compactMap { $0.message.firstMatch(of: /_img\/([A-Za-z0-9._-]+), which does not exist/).map { String($0.output.1) } })
        #expect(named == used, "--check named \(named.sorted()), the pages use \(used.sorted()). \(comment)")
        #expect(checked.exitCode == (used.isEmpty ? checked.exitCode : 1), "\(comment)")
    }

    /// Every reference to one of the site's own images (`img/…`, however written) that the site has
    /// names a file that is in the output too: what `output.originals = "referenced"` leaves out,
    /// nothing names.
    func expectOriginalsThere(_ world: World, _ mode: Mode, comment: String) throws {
        let root = world.root(mode)
        for (page, text) in world.pages(under: root) {
            for match in text.matches(of: /(?:^|["'(=,\s\/])img\/([A-Za-z0-9._-]+)/) {
                let name = String(match.output.1)
                guard FileManager.default.fileExists(atPath: world.site.site + "/img/" + name) else { continue }
                #expect(FileManager.default.fileExists(atPath: root + "/img/" + name), "\(page) names img/\(name), not in the output. \(comment)")
            }
        }
    }

    /// `--check` names the page and line of a reference to an output file that is gone, and the next
    /// build writes it again from the cache; for every kind written absolute under `base_url`.
    @Test(arguments: [Kind.ogImage, .jsonLD, .rssEnclosure, .jsonFeed, .stylesheet, .frontMatterYAML])
    func aMissingOutputFailsTheCheckAndComesBack(kind: Kind) async throws {
        let world = try World()
        world.configure = { $0.output.baseURL = RemoteURL.resolve("https://example.org/") }
        world.write("img/a.png", Paths.fixture("colour/two-colours.png"))
        let (path, text) = Self.source(kind, ["https://example.org/img/a.png"], extra: "")
        world.write(path, text)
        try await world.buildAndCheck(.inPlace)
        let files = world.imageFiles(under: world.site.site)
        #expect(!files.isEmpty)
        for name in files { unlink(world.site.site + "/_img/" + name) }
        var check = world.configuration(.inPlace)
        check.check = true
        let checked = try await Build(check, clock: world.clock).run()
        #expect(checked.exitCode == 1)
        #expect(checked.remaining.contains { $0.message.contains("which does not exist") && $0.location?.file == path && ($0.location?.line ?? 0) >= 1 },
                "\(checked.remaining)")
        try await world.buildAndCheck(.inPlace)
        #expect(world.imageFiles(under: world.site.site) == files)
        #expect(try await Build(check, clock: world.clock).run().exitCode == 0)
    }
}

extension ReferenceKindIntegrityTests.Kind {
    var isHTML: Bool {
        ReferenceKindIntegrityTests.source(self, ["/img/a.png"], extra: "").0.hasSuffix(".html")
    }
}
