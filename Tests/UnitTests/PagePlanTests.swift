import Testing
@testable import ImgBake

/// A page's outcome as a plain value (`PagePlan.make`): every outcome over page state × image state ×
/// target, from inputs made in memory. Nothing here has a site, a cache or a store: the plan is made of
/// the page's bytes, its last state, its images' resolutions and the target, and the paths below name
/// a folder that does not exist (`PagePlanTests.site`), so a plan that looked at the disk would find
/// nothing there.
@Suite struct PagePlanTests {
    static let site = "/nonexistent/imgbake-plan-tests"
    static let stamp = FileStamp(size: 100, modified: 1_700_000_000_000_000_000)
    static let offline = OfflineRewrite()

    enum Images: CaseIterable {
        /// Every image resolved.
        case resolved
        /// One of two failed (HTTP 404).
        case oneFailed
        /// The page also names a file of the images folder that is missing: the cache can write it.
        case missingWritable
        /// Same, and the cache has no record of it.
        case missingUnavailable
    }

    static let targets: [OutputTarget] = [.inPlace, .folder, .check(.inPlace), .check(.folder), .shard(.inPlace), .shard(.folder), .devServer]

    // MARK: Inputs

    static func settings(_ target: OutputTarget) throws -> PlanSettings {
        let output = OutputSettings()
        return PlanSettings(target: target, fingerprint: "f1", publicPaths: ScanSettings().ownPrefixes, ownPublicPath: "/_img/",
                            reports: true,
                            rendering: PageRendering.Settings(rewriter: PageRewriter(output: output, images: ImageSettings(), renderer: try MarkupRenderer()),
                                                              output: output),
                            siteImageNames: [])
    }

    static func html(_ images: Images) -> [UInt8] {
        var body = "<img src=\"https://img.test/a.jpg\" alt=\"a\">\n"
        if images == .oneFailed { body += "<img src=\"https://img.test/gone.jpg\" alt=\"g\">\n" }
        if images == .missingWritable || images == .missingUnavailable { body += "<img src=\"/_img/old-0123456789-320.webp\" alt=\"o\">\n" }
        return Array("<!doctype html>\n<title>t</title>\n\(body)".utf8)
    }

    static func model(_ path: String, _ bytes: [UInt8]) -> PageModel? {
        let scan = ScanSettings()
        return PageFile.scan(path, bytes, settings: scan).map {
            PageModel($0, settings: PageModel.Settings(ownOutputPrefix: nil, publicPaths: scan.ownPrefixes,
                                                       defaultRequest: VariantPlan(settings: ImageSettings()).defaultRequest))
        }
    }

    static func images(_ model: PageModel, _ images: Images) -> PageImages {
        var resolved = PageImages()
        for (source, _) in model.demand {
            let key = OriginalKey(source.serialized)
            resolved.keys[source] = key
            resolved.resolutions[source] = source.description.hasSuffix("gone.jpg")
                ? .failed(ImageFailure(reason: "HTTP 404", kind: .fetch(.permanent)))
                : .resolved(offline.image(source), notes: [])
        }
        return resolved
    }

    static func missing(_ images: Images) -> [String: MissingFile] {
        let name = "old-0123456789-320.webp"
        switch images {
        case .missingWritable: return [name: .writable(OutputImage(fileName: name, blob: BlobID(of: [9]), bytes: -1, key: OriginalKey("k")))]
        case .missingUnavailable: return [name: .unavailable("this cache has no record of it")]
        case .resolved, .oneFailed: return [:]
        }
    }

    /// A page read from the site: new (no state), or with the state its last build left.
    static func input(_ images: Images = .resolved, previous: PageState? = nil, touched: Bool = false, writable: Bool = true) -> PageInput {
        let path = "p.html"
        let bytes = html(images)
        let loaded = LoadedPage(path: path, bytes: bytes, hash: BlobID(of: bytes), siteStamp: stamp, siteHash: BlobID(of: bytes))
        var input = PageInput(page: PageToBuild(path: path, previous: previous, source: .siteFile, stamp: stamp, writable: writable,
                                                touched: touched),
                              source: .success(loaded))
        guard let model = model(path, bytes) else { return input }
        input.gathered = .scanned(model)
        input.images = Self.images(model, images)
        input.missing = missing(images)
        return input
    }

    // MARK: Outcomes

    /// A page built for every target and image state: written where the target writes pages, with the
    /// state that says so; read only where it does not.
    @Test(arguments: targets, Images.allCases)
    func aReadPageIsPlannedForItsTarget(target: OutputTarget, images: Images) throws {
        let plan = PagePlan.make(Self.input(images), try Self.settings(target))
        let failed = images == .oneFailed
        #expect(plan.references == (failed ? 2 : 1))
        #expect(plan.diagnostics.contains { $0.message.contains("HTTP 404") } == failed)
        #expect(plan.report?.references.count == plan.references)
        guard target.rewritesPages else {
            #expect(plan.outcome == .notWritten(.target))
            #expect(plan.write == nil && plan.keep == nil && plan.imageFiles.isEmpty && plan.missing.isEmpty)
            #expect(!plan.state.complete && !plan.state.imagesKnown, "a page a target does not write keeps its last state, unsettled")
            // `--check` lists what would stay remote and the files named that are not there.
            let remaining = plan.remaining.map(\.message)
            #expect(remaining.contains { $0.contains("gone.jpg") } == (target.listsRemaining && failed))
            #expect(remaining.contains { $0.contains("which does not exist") } == (target.listsRemaining && images.namesMissingFile))
            #expect(target.listsRemaining || remaining.isEmpty)
            return
        }
        #expect(plan.outcome == .rewritten)
        let write = try #require(plan.write)
        #expect(!write.isSource && String(decoding: write.bytes, as: UTF8.self).contains("/_img/a-"))
        #expect(plan.imageFiles.count == 1 && plan.state.images.contains(plan.imageFiles[0].fileName))
        #expect(plan.state.complete == !failed, "\(plan.state)")
        #expect(plan.state.imagesKnown && plan.state.sourceHash == BlobID(of: Self.html(images)) && plan.state.stamp == Self.stamp)
        #expect(plan.localised == 1)
        // The file it names that is missing: written again when the cache can, else a warning where it is named.
        #expect(plan.missing.map(\.use.name) == (images.namesMissingFile ? ["old-0123456789-320.webp"] : []))
        switch target {
        case .inPlace:
            // Its source is kept, and the rewrite stands for it.
            #expect(plan.state.copy == .rewritten(source: BlobID(of: Self.html(images)), rewrites: [write.hash]))
            #expect(plan.keep?.hash == BlobID(of: Self.html(images)) && plan.keep?.isSource == true)
        case .devServer:
            // The page goes to the browser: the cache keeps no copy of it.
            #expect(plan.state.copy == PageCopy.none && plan.keep == nil)
        default:
            // The page as written is kept, so that a lost output is written again from the cache.
            #expect(plan.state.copy == .written(kept: write.hash, output: nil))
            #expect(plan.keep?.hash == write.hash)
        }
    }

    /// `imgbake serve`: an image not made yet is named by its pending URL (its files' names are not
    /// known), the others as a build names them; the page goes to the browser, nothing is kept.
    @Test func aServedPageNamesAnImageNotMadeYetByItsPendingURL() throws {
        var input = Self.input(.oneFailed)
        let pending = try #require(input.images.resolutions.keys.first { $0.description.hasSuffix("gone.jpg") })
        input.images.resolutions[pending] = nil
        input.images.pending[pending] = "/_img/pending/0123abcd"
        let plan = PagePlan.make(input, try Self.settings(.devServer))
        let html = String(decoding: try #require(plan.write).bytes, as: UTF8.self)
        #expect(plan.outcome == .rewritten && plan.localised == 2)
        #expect(html.contains("<img src=\"/_img/pending/0123abcd\" alt=\"g\">") && !html.contains("gone.jpg"), "\(html)")
        #expect(html.contains("/_img/a-") && plan.imageFiles.count == 1)
        #expect(plan.keep == nil && plan.state.copy == PageCopy.none && !plan.state.complete)
    }

    /// A page with nothing to localise is left as it is: not rewritten in place, copied with `--out`.
    @Test(arguments: targets)
    func aPageWithNothingToLocaliseIsLeftAsItIs(target: OutputTarget) throws {
        let bytes = Array("<!doctype html>\n<title>t</title>\n<p>no images</p>\n".utf8)
        var input = Self.input()
        input.gathered = .scanned(try #require(Self.model("p.html", bytes)))
        input.images = PageImages()
        input.source = .success(LoadedPage(path: "p.html", bytes: bytes, hash: BlobID(of: bytes), siteStamp: Self.stamp, siteHash: BlobID(of: bytes)))
        let plan = PagePlan.make(input, try Self.settings(target))
        guard target.rewritesPages else {
            #expect(plan.outcome == .notWritten(.target))
            return
        }
        #expect(plan.outcome == .asItIs)
        #expect(plan.write == PagePlan.Write(bytes: bytes, hash: BlobID(of: bytes), isSource: true))
        #expect(plan.keep == nil && plan.state.copy == .none && plan.state.complete)
    }

    /// A page found as its last build left it (only its stamp changed): its last state, with the new
    /// stamp; nothing written, for every target.
    @Test(arguments: targets)
    func aTouchedPageIsUnchanged(target: OutputTarget) throws {
        var previous = PagePlan.make(Self.input(), try Self.settings(.folder)).state
        previous.stamp = FileStamp(size: 100, modified: 1)
        var input = Self.input(previous: previous, touched: true)
        input.gathered = .source // nothing more is gathered for it
        let plan = PagePlan.make(input, try Self.settings(target))
        #expect(plan.outcome == .unchanged && plan.write == nil && plan.imageFiles.isEmpty)
        var expected = previous
        expected.stamp = Self.stamp
        #expect(plan.state == expected)
    }

    /// In place, a page whose site file is the rewrite its last build wrote over it is found unchanged
    /// too, and its state keeps naming the kept source, with that rewrite standing for it.
    @Test func aTouchedRewriteInPlaceIsUnchanged() throws {
        let source = BlobID(of: Self.html(.resolved)), rewrite = Array("<p>rewritten</p>".utf8)
        let previous = PageState(path: "p.html", fingerprint: "f1", sourceHash: source, stamp: FileStamp(size: 1, modified: 1),
                                 copy: .rewritten(source: source, rewrites: [BlobID(of: rewrite)]), complete: true, keys: [],
                                 sources: SourceDigest(), images: [], imagesKnown: true, mentions: [], references: [])
        var input = Self.input(previous: previous, touched: true)
        input.source = .success(LoadedPage(path: "p.html", bytes: rewrite, hash: BlobID(of: rewrite), siteStamp: Self.stamp,
                                           siteHash: BlobID(of: rewrite)))
        let plan = PagePlan.make(input, try Self.settings(.inPlace))
        #expect(plan.outcome == .unchanged && plan.state.copy == previous.copy && plan.state.stamp == Self.stamp)
        // Touched, but with other bytes: a new source, built.
        let edited = Array("<p>edited</p>".utf8)
        input.source = .success(LoadedPage(path: "p.html", bytes: edited, hash: BlobID(of: edited), siteStamp: Self.stamp, siteHash: BlobID(of: edited)))
        input.gathered = .scanned(try #require(Self.model("p.html", edited)))
        #expect(PagePlan.make(input, try Self.settings(.inPlace)).outcome == .asItIs)
    }

    /// In place, a page read from the source the cache kept (its site file is an earlier rewrite): the
    /// journal is told which rewrites stand for the source now, for its intent, and the source is not
    /// kept again.
    @Test func aPageReadFromItsKeptSourceNamesTheRewritesStandingForIt() throws {
        let bytes = Self.html(.resolved), source = BlobID(of: bytes), old = BlobID(of: [1])
        let previous = PageState(path: "p.html", fingerprint: "f0", sourceHash: source, stamp: Self.stamp,
                                 copy: .rewritten(source: source, rewrites: [old]), complete: true, keys: [], sources: SourceDigest(),
                                 images: [], imagesKnown: true, mentions: [], references: [])
        var input = Self.input(previous: previous)
        input.source = .success(LoadedPage(path: "p.html", bytes: bytes, hash: source, kept: source, siteStamp: Self.stamp, siteHash: old))
        let plan = PagePlan.make(input, try Self.settings(.inPlace))
        #expect(plan.outcome == .rewritten && plan.keep == nil)
        #expect(plan.read == SiteFileRead(stamp: Self.stamp, hash: old, standing: [old]))
        // A rewrite whose images now fail: the source itself comes back over the rewrite.
        input.images = Self.images(try #require(Self.model("p.html", bytes)), .resolved)
        for source in input.images.resolutions.keys { input.images.resolutions[source] = .failed(ImageFailure(reason: "gone", kind: .fetch(.permanent))) }
        let back = PagePlan.make(input, try Self.settings(.inPlace))
        #expect(back.outcome == .asItIs && back.write?.bytes == bytes && back.write?.hash != back.read?.hash && back.state.copy == .none)
    }

    /// With `--out`, a page whose last output is the page planned now (the same kept copy) is not
    /// written again while that output is there as written: the plan says which stamp to compare.
    @Test func anOutputAsWrittenBeforeIsNamedForTheJournal() throws {
        let first = PagePlan.make(Self.input(), try Self.settings(.folder))
        var previous = first.state
        previous.copy = .written(kept: first.state.kept, output: FileStamp(size: 7, modified: 7))
        previous.complete = false // read again (a failure last time, say)
        let again = PagePlan.make(Self.input(previous: previous), try Self.settings(.folder))
        #expect(again.writtenBefore == FileStamp(size: 7, modified: 7))
        // Another page now (an edit): written.
        previous.copy = .written(kept: BlobID(of: [2]), output: FileStamp(size: 7, modified: 7))
        #expect(PagePlan.make(Self.input(previous: previous), try Self.settings(.folder)).writtenBefore == nil)
    }

    /// A page a build for another output made from the same source and settings is written from the copy
    /// that build kept; not when the settings, the source or a file it needs differ.
    @Test(arguments: [OutputTarget.inPlace, .folder])
    func aPageBuiltElsewhereIsReused(target: OutputTarget) throws {
        let built = PagePlan.make(Self.input(), try Self.settings(.folder))
        let copy = try #require(built.write)
        var input = Self.input()
        input.gathered = .builtElsewhere(PageElsewhere(state: built.state, bytes: copy.bytes, hash: copy.hash))
        let plan = PagePlan.make(input, try Self.settings(target))
        #expect(plan.outcome == .reused && plan.write?.hash == copy.hash && plan.state.images == built.state.images)
        #expect(plan.state.copy == (target == .inPlace ? .rewritten(source: BlobID(of: Self.html(.resolved)), rewrites: [copy.hash])
                                                       : .written(kept: copy.hash, output: nil)))
        // A copy that does not fit (other settings, a file it needs that cannot be written, a target that
        // writes no page) is never written: the page is left for the next build rather than planned from it.
        var other = input
        var state = built.state
        state.fingerprint = "f2"
        other.gathered = .builtElsewhere(PageElsewhere(state: state, bytes: copy.bytes, hash: copy.hash))
        var unavailable = input
        unavailable.missing = [built.state.images[0]: .unavailable("no record")]
        for (input, target) in [(other, target), (unavailable, target), (input, OutputTarget.check(.folder))] {
            let plan = PagePlan.make(input, try Self.settings(target))
            guard case .failed = plan.outcome else {
                Issue.record("\(plan.outcome)")
                continue
            }
            #expect(plan.write == nil && plan.state == plan.unsettled)
        }
    }

    /// With `--out`, a page whose last build holds and whose output was lost is written again from the
    /// copy that build kept, with the files it names that are missing; its state stays that build's.
    @Test func aLostOutputIsRestoredFromTheKeptCopy() throws {
        let built = PagePlan.make(Self.input(), try Self.settings(.folder))
        let copy = try #require(built.write)
        var previous = built.state
        previous.copy = .written(kept: copy.hash, output: FileStamp(size: 7, modified: 7))
        var input = Self.input(previous: previous)
        input.source = .success(LoadedPage(path: "p.html", bytes: [], hash: try #require(previous.sourceHash), siteStamp: previous.stamp))
        input.gathered = .lostOutput(PageElsewhere(state: previous, bytes: copy.bytes, hash: copy.hash))
        let name = try #require(previous.images.first)
        let file = OutputImage(fileName: name, blob: BlobID(of: [1]), bytes: -1, key: OriginalKey("https://img.test/a.jpg"))
        input.missing = [name: .writable(file)]
        let plan = PagePlan.make(input, try Self.settings(.folder))
        #expect(plan.outcome == .restored && plan.write == PagePlan.Write(bytes: copy.bytes, hash: copy.hash, isSource: false))
        #expect(plan.keep == nil, "the copy is kept already")
        #expect(plan.missing.map(\.file) == [.writable(file)] && plan.imageFiles.isEmpty)
        #expect(plan.state.images == previous.images && plan.state.copy == .written(kept: copy.hash, output: nil))
        #expect(plan.writtenBefore == FileStamp(size: 7, modified: 7), "an output page still there as written is not written again")
        // A file it names that cannot be had: never written from the copy (the stream reads the page instead).
        input.missing = [name: .unavailable("no record")]
        guard case .failed = PagePlan.make(input, try Self.settings(.folder)).outcome else { Issue.record(); return }
    }

    /// In place, a page reached through a symbolic link is read for what it uses, never written.
    @Test func aLinkedPageIsReadNotWritten() throws {
        let plan = PagePlan.make(Self.input(writable: false), try Self.settings(.inPlace))
        #expect(plan.outcome == .notWritten(.link) && plan.write == nil && plan.imageFiles.isEmpty)
        #expect(plan.state.imagesKnown && !plan.state.complete)
    }

    /// A page too deep to parse is left as it is (copied with `--out`), every output name in it kept in use.
    @Test(arguments: targets)
    func aPageTooDeepToParseIsLeftAsItIs(target: OutputTarget) throws {
        let bytes = Array((String(repeating: "<div>", count: 20_000) + "<img src=\"/_img/x-0123456789-320.webp\">").utf8)
        var input = Self.input()
        input.source = .success(LoadedPage(path: "p.html", bytes: bytes, hash: BlobID(of: bytes), siteStamp: Self.stamp, siteHash: BlobID(of: bytes)))
        input.gathered = .tooDeep
        let plan = PagePlan.make(input, try Self.settings(target))
        #expect(plan.outcome == .unparsed && plan.state.images == ["x-0123456789-320.webp"] && plan.state.imagesKnown)
        #expect(plan.write?.isSource == (target.mirrorsSite ? true : nil))
        #expect(plan.diagnostics.count == 1)
    }

    /// A page that could not be read keeps its last state, unsettled, and says why.
    @Test(arguments: targets)
    func anUnreadablePageFails(target: OutputTarget) throws {
        let previous = PagePlan.make(Self.input(), try Self.settings(.folder)).state
        var input = Self.input(previous: previous)
        input.source = .failure(PageFile.ReadError(path: "p.html", reason: "Permission denied"))
        input.gathered = .source
        let plan = PagePlan.make(input, try Self.settings(target))
        guard case .failed = plan.outcome else {
            Issue.record("\(plan.outcome)")
            return
        }
        #expect(plan.write == nil && plan.state.keys == previous.keys && !plan.state.complete && !plan.state.imagesKnown)
        #expect(plan.state == plan.unsettled)
    }

    /// What each target answers, as `OutputTarget`'s table says: a shard of a site built in place reads
    /// the sources the cache kept (its pages name imgbake's files by now), a check looks at the site as
    /// it is.
    @Test func eachTargetAnswersForItsMode() {
        let answers = Self.targets.map { target in
            [target.writesSite, target.rewritesSources, target.keepsWrittenPages, target.mirrorsSite, target.readsKeptSources,
             target.writesThroughLinks, target.listsRemaining, target.readsEveryPage, target.trimsCache]
        }
        #expect(answers == [
            [true, true, false, false, true, false, false, false, true], // in place
            [true, false, true, true, false, true, false, false, true], // --out
            [false, false, false, false, false, true, true, false, false], // --check
            [false, false, false, false, false, true, true, false, false], // --check --out
            [false, false, false, false, true, true, false, true, true], // --shard, in place
            [false, false, false, false, false, true, false, true, true], // --shard --out
            [false, false, false, false, false, true, false, false, true], // serve
        ])
    }

    /// The same inputs give the same plan.
    @Test func aPlanIsAFunctionOfItsInputs() throws {
        let settings = try Self.settings(.folder)
        let one = PagePlan.make(Self.input(.oneFailed), settings), two = PagePlan.make(Self.input(.oneFailed), settings)
        #expect(one.write == two.write && one.state == two.state && one.diagnostics == two.diagnostics && one.outputs == two.outputs)
    }
}

extension PagePlanTests.Images {
    var namesMissingFile: Bool { self == .missingWritable || self == .missingUnavailable }
}

/// Where a response of the dev server is in the site, as a build would find it.
@Suite struct ServePathTests {
    @Test func aResponseIsThePageABuildWouldFindThere() {
        let cases: [(String, String, String, String?)] = [
            ("/", "text/html; charset=utf-8", "/", "index.html"),
            ("/posts/first-light/", "text/html", "/", "posts/first-light/index.html"),
            ("/posts/a.html?x=1", "text/html", "/", "posts/a.html"),
            ("/posts/a", "text/html", "/", "posts/a.html"),
            ("/css/site.css", "text/css", "/", "css/site.css"),
            ("/index.xml", "application/rss+xml", "/", "index.xml"),
            ("/feed", "application/atom+xml", "/", "feed.xml"),
            ("/feed.json", "application/feed+json", "/", "feed.json"),
            ("/docs/", "text/html", "/docs/", "index.html"),
            ("/docs/guide/", "text/html", "/docs/", "guide/index.html"),
            ("/other/", "text/html", "/docs/", nil),
            ("/app.js", "text/javascript", "/", nil),
            ("/img/a.jpg", "image/jpeg", "/", nil),
            ("/caf%C3%A9/", "text/html", "/", "café/index.html"),
        ]
        for (url, type, root, expected) in cases {
            #expect(ServedSite.sitePath(urlPath: url, contentType: type, siteRoot: root) == expected, "\(url) \(type) under \(root)")
        }
    }
}
