import Foundation
import Glibc
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The remote store stays something any machine can build from, whatever happens to the builds that
/// write it: killed with SIGKILL at random moments, or several at once with different settings. After
/// each: every pack in the store is whole and verifies (its key is the one its name says, every blob
/// in it hashes to its name, every variant's key is its spec's), every original's blob hashes to its
/// name, and a new machine reading through publishes exactly the site a build without a remote does,
/// with no warning. `IMGBAKE_STRESS_KILLS` sets the number of kills (`make stress`: 80; `make test`: 4).
@Suite(.hangGuard) struct RemoteStoreIntegrityTests {
    static let kills = max(2, (Int(ProcessInfo.processInfo.environment["IMGBAKE_STRESS_KILLS"] ?? "") ?? 8) / 2)

    /// Every object of the store checks out; returns how many packs there are.
    @discardableResult
    static func expectWholeStore(_ dav: DAVServer, after: String) throws -> Int {
        var packs = 0
        for object in dav.objects() {
            let bytes = try #require(FileManager.default.contents(atPath: dav.storage + "/" + object).map { [UInt8]($0) })
            if object == "layout.json" {
                #expect(RemoteLayout.parse(bytes) == RemoteLayout(layouts: [2]), "\(after): \(object)")
            } else if object.hasPrefix("v2/blobs/") {
                #expect(BlobID(of: bytes).hex == object.dropFirst("v2/blobs/".count), "\(after): \(object) does not hash to its name")
            } else if object.hasPrefix("v2/packs/") {
                packs += 1
                let newline = try #require(bytes.firstIndex(of: 0x0A), "\(after): \(object)")
                let length = try #require(Int(String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ").last ?? ""))
                let header = try #require(RemoteJSON.decode(PackHeader.self, Array(bytes[(newline + 1)..<(newline + 1 + length)])))
                let key: PackKey = header.key.hasPrefix("blob:")
                    ? .content(try #require(BlobID(hex: String(header.key.dropFirst(5))))) : .original(OriginalKey(header.key))
                #expect(RemotePath.pack(key) == object, "\(after): a pack under another key's name")
                let pack = try Pack.decode(bytes, expected: key, maxOriginalBytes: 50_000_000).get()
                #expect(pack.badBlobs.isEmpty && pack.foreign == 0 && pack.variants.count == header.variants.count, "\(after): \(object)")
            } else {
                Issue.record("\(after): \(object) is not an object of layout 2")
            }
        }
        return packs
    }

    func site(_ origin: Origin) -> RemoteSite {
        let site = RemoteSite(origin: origin, images: Paths.exampleImages + ["drawing.svg"])
        site.site.file("img/local.png", Paths.fixture("colour/two-colours.png"))
        site.site.page("local.html", "<img src=\"/img/local.png\" alt=\"a file of the site\">\n")
        return site
    }

    @Test func writingBuildsKilledAtRandomMomentsLeaveOnlyWholePacks() async throws {
        let origin = try Origin(latencyMilliseconds: 40)
        let dav = try await DAVServer()
        let site = site(origin)
        site.configure(cache: "remote = \"\(dav.url)\"")
        let reference = try await site.build("reference", ["--no-remote"])
        #expect(reference.result.status == 0 && !site.output("reference").isEmpty)

        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        var typical = 800
        for round in 0..<Self.kills {
            // Each round a new machine (an empty local cache) writing back what it makes, killed at a random moment.
            let name = "killed\(round)"
            let arguments = ["build", site.site.site, "--out", site.out(name), "--cache-dir", site.site.folder.path + "/\(name)-cache",
                             "--config", site.configFile, "--connect-to", origin.connectTo, "--quiet"]
            let delay = Int.random(in: 0...typical, using: &generator)
            let process = try ChildProcess(Paths.binary, arguments, stdout: .null, stderr: .null)
            let pid = process.pid
            let sent = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                Thread {
                    usleep(UInt32(delay) * 1000)
                    done.resume(returning: kill(pid, SIGKILL) == 0)
                }.start()
            }
            if await process.termination().signal == SIGKILL && sent { interrupted += 1 }
            try Self.expectWholeStore(dav, after: "round \(round), killed after \(delay) ms")

            // Another new machine reads through what is there: the reference site, no warning.
            let started = ContinuousClock.now
            let reader = try await site.build("reader\(round)")
            typical = max(200, (ContinuousClock.now - started).wholeMilliseconds)
            #expect(reader.result.status == 0 && reader.result.warnings.isEmpty, "round \(round): \(reader.result.stderr)")
            #expect(site.output("reader\(round)") == site.output("reference"), "round \(round)")
            try Self.expectWholeStore(dav, after: "round \(round), after a reader")
        }
        print("remote store integrity: \(interrupted) of \(Self.kills) writing builds killed mid-way")
        #expect(interrupted >= Self.kills / 3, "too few builds were still running when killed to test anything")
        // Everything is in the store now: one more machine asks no origin.
        try await origin.reset()
        let last = try await site.build("last")
        #expect(last.result.warnings.isEmpty && site.output("last") == site.output("reference"))
        #expect(try await origin.stats().requests_total == 0)
        #expect(last.report?.remote?.requests == 1 + Paths.exampleImages.count + 2, "the marker, then one pack per image")
    }

    @Test func concurrentWritersWithOtherSettingsLeaveAStoreEveryMachineCanBuildFrom() async throws {
        let origin = try Origin(latencyMilliseconds: 20)
        let dav = try await DAVServer()
        let narrow = site(origin), wide = site(origin)
        narrow.configure(cache: "remote = \"\(dav.url)\"")
        wide.site.folder.write("imgbake.toml", "[images]\nwidths = [96, 200]\nformats = [\"webp\", \"original\"]\nplaceholder = \"color\"\n\n[cache]\nremote = \"\(dav.url)\"\n")
        let references = [try await narrow.build("reference", ["--no-remote"]), try await wide.build("reference", ["--no-remote"])]
        #expect(references.allSatisfy { $0.result.status == 0 })

        // Four machines at once, two with each configuration, writing the same images' packs.
        let writers = try await withThrowingTaskGroup(of: RemoteSite.Run.self) { group in
            for n in 0..<4 { group.addTask { try await (n % 2 == 0 ? narrow : wide).build("writer\(n)") } }
            return try await group.reduce(into: [RemoteSite.Run]()) { $0.append($1) }
        }
        for writer in writers { #expect(writer.result.status == 0 && writer.result.warnings.isEmpty, "\(writer.result.stderr)") }
        try Self.expectWholeStore(dav, after: "four writers at once")

        // A new machine of each configuration: its reference site, whatever the last writer of each pack had.
        for (site, name) in [(narrow, "narrow"), (wide, "wide")] {
            let reader = try await site.build("reader")
            #expect(reader.result.status == 0 && reader.result.warnings.isEmpty, "\(name): \(reader.result.stderr)")
            #expect(site.output("reader") == site.output("reference"), "\(name)")
        }
        // The readers put back what last-writer-wins had lost: now both configurations find all of it.
        try Self.expectWholeStore(dav, after: "two readers")
        try await origin.reset()
        for (site, name) in [(narrow, "narrow"), (wide, "wide")] {
            let again = try await site.build("again")
            #expect(again.result.warnings.isEmpty && again.report?.totals.variantsEncoded == 0, "\(name): \(again.result.stderr)")
            #expect(site.output("again") == site.output("reference"), "\(name)")
        }
        #expect(try await origin.stats().requests_total == 0)
    }
}
