import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The clean-up and in-place rewriting checked over generated sequences of builds: pages added,
/// edited and deleted, images failing, recovering and changing upstream, time passing, `cache clean`,
/// outputs lost, cache blobs damaged, and modes switched; one image asked for in different ways (an
/// `<img>`, a social card, other widths, a CSS background) by different pages at different times.
/// After every build, every local reference resolves and the output equals a clean build of the
/// same sources (`World.buildAndCheck`): a warm build after any history gives the cold build's site. Seeded, so a failure names the sequence that
/// reproduces it; `IMGBAKE_STRESS_SEQUENCES` runs more (`make stress`).
@Suite struct BuildSequenceTests {
    static let count = Int(ProcessInfo.processInfo.environment["IMGBAKE_STRESS_SEQUENCES"] ?? "") ?? 6
    /// Sequences that once failed, kept as regressions, then generated ones.
    static let regressions: [UInt64] = [
        // A page's image file removed as the copy of a file deleted from the site: the site had its own
        // _img/ (built in place before), --out had copied it, and the --out build then needed the file.
        28_704_896,
    ]
    /// `IMGBAKE_STRESS_SEED=<seed>` runs that one sequence (the seed a failure names).
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["IMGBAKE_STRESS_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? regressions + (0..<count).map { UInt64(0x1B6_0000) &+ UInt64($0) }

    enum Step: CustomStringConvertible {
        case addPage(String, [String]), editPage(String, [String]), deletePage(String)
        case breakImage(String), restoreImage(String), changeImage(String, to: String)
        case advanceDays(Double), cleanCache, build(Mode)
        case loseOutputs(Mode), damageCacheBlob(Int)
        /// A site file's time moved (its bytes kept), a file other than a page written, a hidden file added.
        case touchFile(Int), writeOtherFile(Int), addHiddenFile(Int)

        var description: String {
            switch self {
            case .addPage(let p, let i): "add \(p) (\(i.joined(separator: ",")))"
            case .editPage(let p, let i): "edit \(p) (\(i.joined(separator: ",")))"
            case .deletePage(let p): "delete \(p)"
            case .breakImage(let i): "break \(i)"
            case .restoreImage(let i): "restore \(i)"
            case .changeImage(let i, let to): "change \(i) to \(to)'s bytes"
            case .advanceDays(let d): "advance \(Int(d)) days"
            case .cleanCache: "cache clean"
            case .build(let mode): "build \(mode)"
            case .loseOutputs(let mode): "lose the outputs of \(mode)"
            case .damageCacheBlob(let pick): "damage cache blob #\(pick)"
            case .touchFile(let pick): "touch site file #\(pick)"
            case .writeOtherFile(let pick): "write other file #\(pick)"
            case .addHiddenFile(let pick): "add hidden file #\(pick)"
            }
        }
    }

    /// Outputs lost and cache blobs damaged between builds come from a second generator, so that the
    /// sequences of the regression seeds stay what they were when they failed.
    static func steps(seed: UInt64, builds: Int = 6) -> [Step] {
        let regression = regressions.contains(seed)
        var extra = SplitMix(state: ~seed)
        var random = SplitMix(state: seed)
        let images = ["a.png", "b.jpg", "c.png", "d.png", "missing.png"]
        var pages: [String] = []
        var steps: [Step] = []
        for _ in 0..<builds {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let refs = (0..<Int.random(in: 1...3, using: &random)).map { _ in images.randomElement(using: &random)! }
                switch Int.random(in: 0..<10, using: &random) {
                case 0...2 where pages.count < 6:
                    let page = Bool.random(using: &random) ? "p\(steps.count).html" : "notes/m\(steps.count).md"
                    pages.append(page)
                    steps.append(.addPage(page, refs))
                case 3...4 where !pages.isEmpty: steps.append(.editPage(pages.randomElement(using: &random)!, refs))
                case 5 where !pages.isEmpty:
                    let page = pages.remove(at: Int.random(in: 0..<pages.count, using: &random))
                    steps.append(.deletePage(page))
                // An upstream change is seen once the cached copy is stale (a clean build sees it at once):
                // breaking, restoring or changing an image also lets its freshness run out.
                case 6: steps += [.breakImage(images.dropLast().randomElement(using: &random)!), .advanceDays(8)]
                case 7: steps += [.restoreImage(images.dropLast().randomElement(using: &random)!), .advanceDays(8)]
                case 8:
                    steps += [.changeImage(["a.png", "c.png"].randomElement(using: &random)!, to: ["d.png", "c.png", "a.png"].randomElement(using: &random)!),
                              .advanceDays(8)]
                default: steps.append(Bool.random(using: &random) ? .advanceDays(8) : .cleanCache)
                }
            }
            let mode: Mode = Bool.random(using: &random) ? .inPlace : .out
            // Before `--out` builds only: their sources still name the remote images, so whatever is
            // lost or damaged can be made again. In place, images lost from the site together with a
            // damaged cache and a changed upstream are gone for good (a warning at the page, which a
            // clean build, the oracle, cannot match); OutputIntegrityTests covers lost in-place images.
            // Touches, other files and hidden files change nothing a page needs: they test that the
            // seal breaks (or holds) as it should around them.
            if !regression {
                switch Int.random(in: 0..<6, using: &extra) {
                case 0 where mode == .out: steps.append(.loseOutputs(mode))
                case 1 where mode == .out: steps.append(.damageCacheBlob(Int.random(in: 0..<64, using: &extra)))
                case 2: steps.append(.touchFile(Int.random(in: 0..<64, using: &extra)))
                case 3: steps.append(.writeOtherFile(Int.random(in: 0..<64, using: &extra)))
                case 4: steps.append(.addHiddenFile(Int.random(in: 0..<64, using: &extra)))
                default: break
                }
            }
            steps.append(.build(mode))
        }
        return steps
    }

    /// A page asking for each image in one of four ways, chosen by its place in the sequence: the same
    /// image made for a social card alone, or beside other widths, must give the same files.
    static func mixedPage(_ refs: [String], salt: Int, _ world: World) -> String {
        "<!doctype html>\n<title>t</title>\n" + refs.enumerated().map { index, name in
            let url = world.url(name)
            switch (salt + index) % 4 {
            case 0: return "<p><img src=\"\(url)\" alt=\"x\"></p>\n"
            case 1: return "<meta property=\"og:image\" content=\"\(url)\">\n"
            case 2: return "<p><img src=\"\(url)\" alt=\"x\" data-imgbake-widths=\"60, 100\"></p>\n"
            default: return "<div style=\"background: url('\(url)')\"></div>\n"
            }
        }.joined()
    }

    @Test(arguments: seeds)
    func everyGeneratedSequenceKeepsTheOutputWhole(seed: UInt64) async throws {
        let world = try World()
        world.rememberFailures = false
        world.configure = { $0.output.baseURL = RemoteURL.resolve("https://example.org/") }
        let mixed = !Self.regressions.contains(seed)
        let originals = try FileManager.default.contentsOfDirectory(atPath: world.served)
            .reduce(into: [String: Data]()) { $0[$1] = FileManager.default.contents(atPath: world.served + "/" + $1) }
        let steps = Self.steps(seed: seed)
        var done: [String] = []
        for step in steps {
            done.append(step.description)
            switch step {
            case .addPage(let page, let refs), .editPage(let page, let refs):
                let text = page.hasSuffix(".md") ? refs.map { "![\($0)](\(world.url($0)))\n\n" }.joined()
                    : mixed ? Self.mixedPage(refs, salt: done.count, world) : world.page(refs.map { ($0, String($0.prefix(1))) })
                world.write(page, text)
            case .deletePage(let page): world.delete(page)
            case .breakImage(let image): unlink(world.served + "/" + image)
            case .restoreImage(let image): FileManager.default.createFile(atPath: world.served + "/" + image, contents: originals[image])
            case .changeImage(let image, let other):
                guard FileManager.default.fileExists(atPath: world.served + "/" + other) else { continue }
                world.replace(image, with: other)
            case .advanceDays(let days): world.advance(days: days)
            case .cleanCache: try world.cleanCache()
            case .loseOutputs(let mode): world.loseOutputs(mode)
            case .damageCacheBlob(let pick): world.damageCacheBlob(pick)
            case .touchFile(let pick):
                let files = world.site.folder.files(under: "site").sorted()
                guard !files.isEmpty else { continue }
                let path = world.site.site + "/" + files[pick % files.count]
                var times = [timespec(tv_sec: 1_700_000_000 + pick, tv_nsec: 0), timespec(tv_sec: 1_700_000_000 + pick, tv_nsec: 0)]
                _ = utimensat(AT_FDCWD, path, &times, 0)
            case .writeOtherFile(let pick): world.write("notes/readme-\(pick % 3).txt", "version \(pick)")
            case .addHiddenFile(let pick): world.write(".drafts/d\(pick).html", world.page([("a.png", "a")]))
            case .build(let mode):
                let comment = "seed \(seed): \(done.joined(separator: "; "))"
                let result = try await world.buildAndCheck(mode, comment: comment)
                try await world.expectTheSealToTellTheTruth(mode, after: result, comment: comment)
            }
        }
    }
}
