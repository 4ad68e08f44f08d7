import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Same sources, same site, in place: generated histories of a site built in place again and again,
/// each incremental build compared with a clean build of the sources as the generator last wrote them
/// (`World.buildAndCheck`). Pages are added, edited and deleted; the site's own images are changed,
/// deleted and restored; upstream images change (and their cached copies go stale); builds are killed
/// at random moments; two builds run at once. Seeded, so a failure names the history that reproduces
/// it; `IMGBAKE_STRESS_HISTORIES` runs more (`make stress`).
@Suite(.hangGuard) struct InPlaceHistoryTests {
    static let count = Int(ProcessInfo.processInfo.environment["IMGBAKE_STRESS_HISTORIES"] ?? "") ?? 4
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["IMGBAKE_STRESS_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? (0..<count).map { UInt64(0x1A_0000) &+ UInt64($0) }

    /// The site's own images, and the fixtures they are made of.
    static let ownImages = ["img/one.png", "img/two.jpg", "img/three.png"]
    static let fixtures = ["colour/two-colours.png", "metadata/camera.jpg", "colour/diagram.png", "colour/p3.png"]

    enum Step: CustomStringConvertible {
        case addPage(String, [Int]), editPage(String, [Int]), deletePage(String)
        case changeOwnImage(Int, to: Int), deleteOwnImage(Int), restoreOwnImage(Int)
        case changeUpstream(String, to: String), advanceDays(Double)
        case killBuild(afterMilliseconds: Int), build(together: Int)

        var description: String {
            switch self {
            case .addPage(let page, let refs): "add \(page) \(refs)"
            case .editPage(let page, let refs): "edit \(page) \(refs)"
            case .deletePage(let page): "delete \(page)"
            case .changeOwnImage(let image, let fixture): "change \(InPlaceHistoryTests.ownImages[image]) to fixture \(fixture)"
            case .deleteOwnImage(let image): "delete \(InPlaceHistoryTests.ownImages[image])"
            case .restoreOwnImage(let image): "restore \(InPlaceHistoryTests.ownImages[image])"
            case .changeUpstream(let image, let other): "change upstream \(image) to \(other)'s bytes"
            case .advanceDays(let days): "advance \(Int(days)) days"
            case .killBuild(let milliseconds): "build killed after \(milliseconds) ms"
            case .build(let together): together == 1 ? "build" : "\(together) builds at once"
            }
        }
    }

    /// A reference, by number: remote images (0–3), the site's own images root-relative (4–6) and
    /// page-relative (7–9).
    static func reference(_ number: Int, page: String, _ world: World) -> String {
        switch number % 10 {
        case 0...3: world.url(World.images[number % 10])
        case 4...6: "/" + ownImages[number % 10 - 4]
        default: String(repeating: "../", count: page.split(separator: "/").count - 1) + ownImages[number % 10 - 7]
        }
    }

    static func text(_ page: String, _ refs: [Int], _ world: World) -> String {
        if page.hasSuffix(".md") { return refs.map { "![x](\(reference($0, page: page, world)))\n\n" }.joined() }
        return "<!doctype html>\n<title>t</title>\n" + refs.enumerated().map { index, number in
            let url = reference(number, page: page, world)
            return index % 3 == 2 ? "<div style=\"background: url('\(url)')\"></div>\n" : "<p><img src=\"\(url)\" alt=\"x\"></p>\n"
        }.joined()
    }

    static func steps(seed: UInt64, builds: Int = 7) -> [Step] {
        var random = SplitMix(state: seed)
        var pages: [String] = []
        var steps: [Step] = []
        for round in 0..<builds {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let refs = (0..<Int.random(in: 1...4, using: &random)).map { _ in Int.random(in: 0..<10, using: &random) }
                switch Int.random(in: 0..<12, using: &random) {
                case 0...2 where pages.count < 5 || round == 0:
                    let page = ["p\(steps.count).html", "posts/m\(steps.count).md", "posts/deep/q\(steps.count).html"].randomElement(using: &random)!
                    pages.append(page)
                    steps.append(.addPage(page, refs))
                case 3...4 where !pages.isEmpty: steps.append(.editPage(pages.randomElement(using: &random)!, refs))
                case 5 where pages.count > 1: steps.append(.deletePage(pages.remove(at: Int.random(in: 0..<pages.count, using: &random))))
                case 6...7: steps.append(.changeOwnImage(Int.random(in: 0..<3, using: &random), to: Int.random(in: 0..<4, using: &random)))
                case 8: steps.append(.deleteOwnImage(Int.random(in: 0..<3, using: &random)))
                case 9: steps.append(.restoreOwnImage(Int.random(in: 0..<3, using: &random)))
                case 10:
                    steps += [.changeUpstream(World.images[Int.random(in: 0..<3, using: &random)], to: World.images[Int.random(in: 0..<4, using: &random)]),
                              .advanceDays(8)]
                default: steps.append(.advanceDays(8))
                }
            }
            if Int.random(in: 0..<3, using: &random) == 0 { steps.append(.killBuild(afterMilliseconds: Int.random(in: 0..<600, using: &random))) }
            steps.append(.build(together: Int.random(in: 0..<4, using: &random) == 0 ? 2 : 1))
        }
        return steps
    }

    @Test(arguments: seeds)
    func everyInPlaceBuildIsTheCleanBuildOfTheSameSources(seed: UInt64) async throws {
        let world = try World()
        world.rememberFailures = false
        world.configure = { $0.output.baseURL = RemoteURL.resolve("https://example.org/") }
        // The same settings for the killed builds, which run the binary.
        let settings = world.site.folder.path + "/imgbake.toml"
        TemporaryFolder.write("""
            [output]
            base_url = "https://example.org/"
            inline_images = 0
            [images]
            quality = { webp = 80 }
            formats = ["webp", "original"]
            [fetch]
            retries = 0
            failure_ttl = "0s"
            [build]
            require_alt = "off"

            """, to: settings)
        for (index, image) in Self.ownImages.enumerated() { world.write(image, Paths.fixture(Self.fixtures[index])) }
        var done: [String] = []
        for step in Self.steps(seed: seed) {
            done.append(step.description)
            switch step {
            case .addPage(let page, let refs), .editPage(let page, let refs): world.write(page, Self.text(page, refs, world))
            case .deletePage(let page): world.delete(page)
            case .changeOwnImage(let image, let fixture): world.write(Self.ownImages[image], Paths.fixture(Self.fixtures[fixture]))
            case .deleteOwnImage(let image): world.delete(Self.ownImages[image])
            case .restoreOwnImage(let image): world.write(Self.ownImages[image], Paths.fixture(Self.fixtures[image]))
            case .changeUpstream(let image, let other): world.replace(image, with: other)
            case .advanceDays(let days): world.advance(days: days)
            case .killBuild(let milliseconds):
                _ = try await CrashSafetyTests().runKilled(["build", world.site.site, "--cache-dir", world.site.cache, "--connect-to",
                                                            world.origin.connectTo, "--quiet", "--config", settings],
                                                           afterMilliseconds: milliseconds)
            case .build(let together):
                let comment = "seed \(seed): \(done.joined(separator: "; "))"
                let result = try await world.buildAndCheck(.inPlace, together: together, comment: comment)
                if together == 1 { try await world.expectTheSealToTellTheTruth(.inPlace, after: result, comment: comment) }
            }
        }
    }
}
