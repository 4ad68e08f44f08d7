import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// `imgbake cache gc --remote` on real stores: S3 (moto: ListObjectsV2, DeleteObjects with Content-MD5)
/// and nginx WebDAV (PROPFIND from libnginx-mod-http-dav-ext, DELETE). Age is the time since the last
/// write; what a bound removes costs later builds a miss, never a wrong image.
@Suite(.hangGuard) struct RemoteRetentionTests {
    func gc(_ site: RemoteSite, _ arguments: [String], environment: [String: String] = [:]) async throws -> CommandResult {
        try await runProcess(Paths.binary, ["cache", "gc", "--remote", "--config", site.configFile] + arguments, in: nil, environment: environment)
    }

    /// WebDAV: objects whose files were last written 40 days ago go with `--max-age 30d`, layout 1's too;
    /// the marker and recent objects stay; the next builds still publish the right site.
    @Test func webDAVObjectsOlderThanMaxAgeAreRemoved() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let old = RemoteSite(origin: origin, images: ["coffee.png", "hubble.jpg"])
        old.configure(cache: "remote = \"\(dav.url)\"")
        #expect(try await old.build("a").result.status == 0)
        dav.folder.write("root/cache/cas/" + String(repeating: "0", count: 64), "layout 1's")
        let aged = Date(timeIntervalSinceNow: -40 * 86_400)
        let oldObjects = dav.objects().filter { $0 != "layout.json" }
        for object in oldObjects {
            try FileManager.default.setAttributes([.modificationDate: aged], ofItemAtPath: dav.storage + "/" + object)
        }
        let recent = RemoteSite(origin: origin, images: ["astronaut.jpg"])
        recent.configure(cache: "remote = \"\(dav.url)\"")
        #expect(try await recent.build("a").result.status == 0)
        let recentObjects = Set(dav.objects()).subtracting(oldObjects).subtracting(["layout.json"])
        #expect(recentObjects.count == 2, "a pack and an original: \(recentObjects)")

        let dry = try await gc(old, ["--max-age", "30d", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout.contains("would remove \(oldObjects.count) ("), "\(dry.stdout)\(dry.stderr)")
        #expect(Set(dav.objects()) == Set(oldObjects + Array(recentObjects) + ["layout.json"]))

        let run = try await gc(old, ["--max-age", "30d"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\(oldObjects.count + recentObjects.count) objects") && run.stdout.contains("removed \(oldObjects.count) ("),
                "\(run.stdout)")
        #expect(Set(dav.objects()) == recentObjects.union(["layout.json"]))
        #expect(dav.requests().contains { $0.method == "PROPFIND" } && dav.requests().filter { $0.method == "DELETE" }.count == oldObjects.count)

        // What went is a miss (the origin again); what stayed is still read; both sites come out right.
        try await origin.reset()
        let again = try await old.build("b")
        #expect(again.result.status == 0 && again.result.warnings.isEmpty && old.output("b") == old.output("a"), "\(again.result.stderr)")
        #expect(try await origin.stats().requests_total == 2)
        try await origin.reset()
        let kept = try await recent.build("b")
        #expect(kept.result.warnings.isEmpty && recent.output("b") == recent.output("a"))
        #expect(try await origin.stats().requests_total == 0)
    }

    /// S3: `--max-size` removes the objects written longest ago until the rest fits; `--max-age` the
    /// ones written before it. The bucket's other keys are never looked at.
    @Test func s3ObjectsAreBoundedBySizeOldestFirstAndByAge() async throws {
        let s3 = try await S3Server.shared()
        let origin = try Origin()
        let prefix = "retention-\(UUID().uuidString)"
        let old = RemoteSite(origin: origin, images: ["coffee.png", "hubble.jpg"])
        old.configure(cache: s3.cacheTOML(prefix: prefix))
        #expect(try await old.build("a", environment: s3.environment).result.status == 0)
        try await Task.sleep(for: .seconds(5)) // S3 times have a second's precision; and the age bound below
        let recent = RemoteSite(origin: origin, images: ["astronaut.jpg"])
        recent.configure(cache: s3.cacheTOML(prefix: prefix))
        let recentRun = try await recent.build("a", environment: s3.environment)
        #expect(recentRun.result.status == 0)
        let outside = RemoteSite(origin: origin, images: ["coffee.png"])
        outside.configure(cache: s3.cacheTOML(prefix: prefix + "-other"))
        #expect(try await outside.build("a", environment: s3.environment).result.status == 0)

        let listing = try await gc(old, ["--max-age", "3650d", "--dry-run"], environment: s3.environment)
        #expect(listing.status == 0 && listing.stdout.contains(": 6 objects"), "two images' packs and originals, then one's; not the marker: \(listing.stdout)\(listing.stderr)")
        // The recent site's pack and original fit; the old site's four objects do not.
        let recentBytes = try #require(recentRun.report?.remote?.bytesUp)
        let bySize = try await gc(old, ["--max-size", "\(recentBytes)"], environment: s3.environment)
        #expect(bySize.status == 0 && bySize.stdout.contains("removed 0 (0 B) older than --max-age, 4 ("), "\(bySize.stdout)\(bySize.stderr)")
        try await origin.reset()
        #expect(try await old.build("b", environment: s3.environment).result.warnings.isEmpty)
        #expect(try await origin.stats().requests_total == 2, "the old site's objects went")
        try await origin.reset()
        #expect(try await recent.build("b", environment: s3.environment).result.warnings.isEmpty)
        #expect(try await origin.stats().requests_total == 0, "the recent site's stayed")

        // Reading did not make the recent site's objects younger; the old site's were written again just now.
        try await Task.sleep(for: .seconds(4))
        let byAge = try await gc(old, ["--max-age", "3s"], environment: s3.environment)
        #expect(byAge.status == 0 && byAge.stdout.contains("removed 6 ("), "\(byAge.stdout)\(byAge.stderr)")
        #expect(try await gc(outside, ["--max-age", "3650d", "--dry-run"], environment: s3.environment).stdout.contains(": 2 objects"),
                "another prefix is another cache")
    }

    /// A pack written more than 7 days ago that a writing build uses is written again, so an age bound
    /// spares images still in use.
    @Test func aPackInUseIsWrittenAgainWhenOld() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let site = RemoteSite(origin: origin, images: ["coffee.png"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        #expect(try await site.build("a").result.status == 0)
        let name = try #require(dav.objects().first { $0.hasPrefix("v2/packs/") })
        let path = dav.storage + "/" + name
        let bytes = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let newline = try #require(bytes.firstIndex(of: 0x0A))
        let length = try #require(Int(String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")[2]))
        var header = try #require(RemoteJSON.decode(PackHeader.self, Array(bytes[(newline + 1)..<(newline + 1 + length)])))
        header.written -= 10 * 86_400
        let json = RemoteJSON.encode(header)
        let aged = Array("imgbake-pack 2 \(json.count)\n".utf8) + json + bytes[(newline + 1 + length)...]
        #expect(FileManager.default.createFile(atPath: path, contents: Data(aged)))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -10 * 86_400)], ofItemAtPath: path)

        let before = dav.requests().count
        let reader = try await site.build("b", ["--remote-read-only"])
        #expect(reader.result.status == 0 && !dav.requests().dropFirst(before).contains { $0.method == "PUT" }, "a read-only build writes nothing")
        let writer = try await site.build("c")
        #expect(writer.result.status == 0 && writer.result.warnings.isEmpty, "\(writer.result.stderr)")
        #expect(dav.requests().dropFirst(before).filter { $0.method == "PUT" }.map(\.path) == ["/cache/" + name])
        let gc = try await gc(site, ["--max-age", "8d"])
        #expect(gc.status == 0 && dav.objects().contains(name), "\(gc.stdout)")
        let rewritten = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let pack = try Pack.decode(rewritten, expected: .original(OriginalKey(origin.url("img/coffee.png"))), maxOriginalBytes: 1 << 30).get()
        // WebP at 64 and 128, and the one fallback (at 128, the widest up to `fallback_width`) as JPEG
        // and as PNG, one of them recorded as dropped.
        #expect(pack.variants.count == 4 && abs(pack.written - Date().timeIntervalSince1970) < 120)
    }

    @Test func gcRemoteNeedsABoundAndARemote() async throws {
        let site = TestSite()
        site.folder.write("imgbake.toml", "[cache]\n")
        let none = try await runImgbake(["cache", "gc", "--remote", "--max-age", "30d", "--config", site.folder.path + "/imgbake.toml"])
        #expect(none.status == 2 && none.stderr.contains("names no remote cache"), "\(none.stderr)")
        let unbounded = try await runImgbake(["cache", "gc", "--remote"])
        #expect(unbounded.status != 0 && unbounded.stderr.contains("--remote needs --max-age, --max-size or both"), "\(unbounded.stderr)")
        let local = try await runImgbake(["cache", "gc", "--max-age", "3d"])
        #expect(local.status != 0 && local.stderr.contains("--max-size"), "\(local.stderr)")
    }
}
