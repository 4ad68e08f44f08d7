import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// `--shard K/N`: many machines resolve one site's images, each its own part, into one remote cache;
/// a last build without `--shard` assembles the site from it.
@Suite(.hangGuard) struct ShardTests {
    /// Sixteen small images with bytes of their own (identical bytes would share variants).
    static let images = (1...8).map { "o\($0).jpg" }
        + ["diagram.png", "p3.png", "prophoto.jpg", "reference.png", "camera.jpg", "two-colours.png", "coffee.png", "astronaut.jpg"]

    @Test func fourShardsAndAnAssemblingBuildDoEachImageOnceAndMatchASingleMachine() async throws {
        let s3 = try await S3Server.shared()
        let origin = try Origin(extraRoots: [Paths.fixtures + "/orientation"])
        let site = RemoteSite(origin: origin, images: Self.images)
        // A page asking for several images, one of them with widths of its own, and a Markdown page.
        site.site.page("many.html", Self.images.prefix(4).map { "<img src=\"\(origin.url("img/" + $0))\" alt=\"\">" }.joined()
                       + "<img src=\"\(origin.url("img/coffee.png"))\" data-imgbake-widths=\"32, 96\" alt=\"coffee\">\n")
        site.site.page("post.md", "![a](\(origin.url("img/astronaut.jpg")))\n")
        site.configure(cache: s3.cacheTOML(prefix: "shards-\(UUID().uuidString)"))

        let shards = try await withThrowingTaskGroup(of: RemoteSite.Run.self) { group in
            for k in 1...4 { group.addTask { try await site.build("shard\(k)", ["--shard", "\(k)/4"], environment: s3.environment) } }
            return try await group.reduce(into: [RemoteSite.Run]()) { $0.append($1) }
        }
        for shard in shards {
            #expect(shard.result.status == 0 && shard.result.warnings.isEmpty, "\(shard.result.stderr)")
            #expect(shard.result.stdout.contains("no pages or image files written"))
        }
        for k in 1...4 { #expect(!FileManager.default.fileExists(atPath: site.out("shard\(k)")), "a shard writes nothing") }
        let reports = try shards.map { try #require($0.report) }
        #expect(reports.map(\.totals.images).reduce(0, +) == Self.images.count, "the shards cover every image, without overlap")
        let downloaded = reports.flatMap { $0.images.filter { $0.outcome == .downloaded }.map(\.url) }
        #expect(downloaded.sorted() == Self.images.map { origin.url("img/" + $0) }.sorted(), "each image made in exactly one shard")

        let assembled = try await site.build("assembled", environment: s3.environment)
        #expect(assembled.result.status == 0 && assembled.result.warnings.isEmpty, "\(assembled.result.stderr)")
        let stats = try await origin.stats()
        #expect(stats.requests_total == Self.images.count && stats.paths.values.allSatisfy { $0 == 1 }, "\(stats.paths)")
        let assembledReport = try #require(assembled.report)
        #expect(assembledReport.totals.variantsEncoded == 0 && assembledReport.totals.imagesDownloaded == 0)
        #expect(assembledReport.totals.pagesRewritten == Self.images.count + 2)

        // One machine alone, without the remote: the same site, byte for byte, and the same encodes.
        let single = try await site.build("single", ["--no-remote"])
        #expect(single.result.status == 0)
        #expect(reports.map(\.totals.variantsEncoded).reduce(0, +) == single.report?.totals.variantsEncoded)
        #expect(site.output("assembled") == site.output("single"))
        #expect(!site.output("single").isEmpty)
        for run in shards + [assembled] {
            #expect(!run.everythingPrinted.contains(s3.secretKey) && !run.everythingPrinted.contains(s3.accessKey))
        }
    }

    @Test func aShardLeavesNoPageStateBehind() async throws {
        let s3 = try await S3Server.shared()
        let origin = try Origin()
        let site = RemoteSite(origin: origin, images: ["coffee.png", "astronaut.jpg"])
        site.configure(cache: s3.cacheTOML(prefix: "shard-state-\(UUID().uuidString)"))
        let shard = try await site.build("one", ["--shard", "1/1"], environment: s3.environment)
        #expect(shard.result.status == 0 && shard.report?.totals.images == 2)
        // The same machine, same cache, then builds the site: every page is written.
        let build = try await site.build("one", cache: "one", environment: s3.environment)
        #expect(build.report?.totals.pagesRewritten == 2 && build.report?.totals.pagesUnchanged == 0)
        #expect(build.report?.totals.imagesCached == 2 && build.report?.totals.variantsEncoded == 0)
    }

    @Test func aShardUploadsWhatItsLocalCacheAlreadyHad() async throws {
        let s3 = try await S3Server.shared()
        let origin = try Origin()
        let site = RemoteSite(origin: origin, images: ["coffee.png"])
        site.configure(cache: s3.cacheTOML(prefix: "warm-shard-\(UUID().uuidString)"))
        #expect(try await site.build("warm", ["--no-remote"]).result.status == 0)
        let shard = try await site.build("shard", ["--shard", "1/1"], cache: "warm", environment: s3.environment)
        #expect(shard.report?.totals.imagesCached == 1 && shard.report?.totals.variantsEncoded == 0)
        #expect(shard.report?.remote?.uploads ?? 0 > 0, "a runner that kept its cache still fills the remote")
        try await origin.reset()
        let assembled = try await site.build("assembled", environment: s3.environment)
        #expect(assembled.report?.totals.variantsEncoded == 0 && assembled.result.warnings.isEmpty, "\(assembled.result.stderr)")
        #expect(try await origin.stats().requests_total == 0)
    }
}
