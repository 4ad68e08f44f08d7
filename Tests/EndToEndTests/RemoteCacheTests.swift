import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The remote cache on real servers started here: nginx with WebDAV PUT, and moto's S3 server with
/// signature checking on. Each build is another "machine": a local cache and output of its own.
@Suite(.hangGuard) struct RemoteCacheTests {
    /// Distinctive, so that a grep for it over everything imgbake printed means something.
    static let token = "imgbake-test-token-7f3c9a1e5b"

    @Test func aSecondMachineGetsEverythingFromTheHTTPRemoteAndNothingFromTheOrigin() async throws {
        let origin = try Origin()
        let dav = try await DAVServer(token: Self.token)
        let site = RemoteSite(origin: origin, images: ["hubble.jpg", "coffee.png", "drawing.svg"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        let environment = ["IMGBAKE_REMOTE_TOKEN": Self.token]

        let first = try await site.build("a", environment: environment)
        #expect(first.result.status == 0 && first.result.warnings.isEmpty, "\(first.result.stderr)")
        let written = try #require(first.report?.remote)
        #expect(written.uploads > 0 && written.failures == 0)
        let hubble = BlobID(of: Paths.image("hubble.jpg"))
        #expect(dav.objects().contains("v2/blobs/" + hubble.hex), "the original went up")
        #expect(dav.objects().filter { $0.hasPrefix("v2/packs/") }.count == 3, "one pack per image: \(dav.objects())")
        #expect(!dav.objects().contains { $0.hasPrefix("cas/") || $0.hasPrefix("ac/") }, "nothing of layout 1")
        #expect(dav.requests().allSatisfy { $0.status != 401 }, "every request carried the token")
        // Writing back, per image: its pack, and a raster original's bytes (an SVG is in its pack); per
        // build: the layout marker read and written, and the one look for a layout 1 record.
        let writes = dav.requests()
        #expect(writes.filter { $0.method == "PUT" }.map(\.path).sorted()
                == (["layout.json", "v2/blobs/" + hubble.hex, "v2/blobs/" + BlobID(of: Paths.image("coffee.png")).hex]
                    + dav.objects().filter { $0.hasPrefix("v2/packs/") }).map { "/cache/" + $0 }.sorted(), "\(writes)")
        #expect(writes.filter { $0.method != "PUT" }.map { "\($0.method) \($0.status)" }.sorted() == ["GET 404", "HEAD 404"], "\(writes)")
        #expect(written.requests == writes.count && written.uploads == 6 && written.misses == 3)

        try await origin.reset()
        let second = try await site.build("b", environment: environment)
        #expect(second.result.status == 0 && second.result.warnings.isEmpty, "\(second.result.stderr)")
        #expect(try await origin.stats().requests_total == 0)
        let report = try #require(second.report)
        #expect(report.totals.variantsEncoded == 0 && report.totals.imagesCached == 3)
        #expect(report.remote?.hits ?? 0 > 0 && report.remote?.uploads == 0 && report.remote?.misses == 0)
        #expect(second.result.stdout.contains("remote cache: \(report.remote?.hits ?? -1) hits, 0 misses"))
        #expect(site.output("b") == site.output("a"))
        // Reading through: the marker, then one pack per image; the raster originals stay in the remote
        // (every variant was in the packs; the SVG is its own output, in its pack).
        let reads = dav.requests().dropFirst(writes.count)
        #expect(reads.map { "\($0.method) \($0.status)" } == Array(repeating: "GET 200", count: 4), "\(reads)")
        #expect(reads.map(\.path).sorted() == (["layout.json"] + dav.objects().filter { $0.hasPrefix("v2/packs/") }).map { "/cache/" + $0 }.sorted())
        #expect(report.remote?.requests == 4 && report.remote?.hits == 3)
        for run in [first, second] { #expect(!run.everythingPrinted.contains(Self.token)) }
    }

    @Test func aSecondMachineGetsEverythingFromTheS3RemoteWithSignedRequests() async throws {
        let s3 = try await S3Server.shared()
        let origin = try Origin()
        let site = RemoteSite(origin: origin, images: ["astronaut.jpg", "deep-field.gif"])
        site.configure(cache: s3.cacheTOML(prefix: "second-machine-\(UUID().uuidString)"))

        let first = try await site.build("a", environment: s3.environment)
        #expect(first.result.status == 0 && first.result.warnings.isEmpty, "\(first.result.stderr)")
        #expect(first.report?.remote?.uploads ?? 0 > 0)
        try await origin.reset()
        let second = try await site.build("b", environment: s3.environment)
        #expect(second.result.status == 0 && second.result.warnings.isEmpty, "\(second.result.stderr)")
        #expect(try await origin.stats().requests_total == 0)
        #expect(second.report?.totals.variantsEncoded == 0 && second.report?.remote?.misses == 0)
        #expect(site.output("b") == site.output("a"))
        for run in [first, second] {
            #expect(!run.everythingPrinted.contains(s3.secretKey) && !run.everythingPrinted.contains(s3.accessKey))
        }

        // moto checks signatures: a wrong secret is refused, and the build goes on without the remote.
        let forged = try await site.build("c", environment: ["AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": "not-the-secret"])
        #expect(forged.result.status == 0 && forged.report?.totals.referencesLocalised == 2)
        #expect(forged.remoteWarnings.count == 1 && forged.remoteWarnings.first?.contains("refused (HTTP 403)") == true, "\(forged.result.stderr)")
        #expect(!forged.everythingPrinted.contains("not-the-secret"))

        let validation = try await run(["python3", "-c", """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1])); report = json.load(open(sys.argv[2]))
            jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(report)
            print("valid")
            """, Paths.root + "/docs/report.schema.json", site.site.folder.path + "/b-report.json"], in: site.site.folder.path)
        #expect(validation.stdout.hasSuffix("valid\n"), "\(validation.stdout)")
    }

    @Test func aCorruptedRemoteBlobIsCaughtByItsHash() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let site = RemoteSite(origin: origin, images: ["coffee.png"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        let first = try await site.build("a")
        #expect(first.result.status == 0)
        // Damage the WebP variant the page uses most, inside the image's pack: same length, other bytes.
        let file = try #require(first.report?.images.first?.files.first { $0.format == "webp" })
        let name = try #require(dav.objects().first { $0.hasPrefix("v2/packs/") })
        let path = dav.storage + "/" + name
        var bytes = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let newline = try #require(bytes.firstIndex(of: 0x0A))
        let length = try #require(Int(String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")[2]))
        let header = try #require(RemoteJSON.decode(PackHeader.self, Array(bytes[(newline + 1)..<(newline + 1 + length)])))
        let entry = try #require(header.blobs.first { $0.blob.hasPrefix(file.name.split(separator: "-").dropLast().last!) })
        let payload = newline + 1 + length + entry.offset
        for i in stride(from: payload + 40, to: payload + entry.length, by: 97) { bytes[i] ^= 0x5A }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))

        try await origin.reset()
        let second = try await site.build("b")
        #expect(second.result.status == 0)
        #expect(second.remoteWarnings.count == 1 && second.remoteWarnings.first?.contains("did not match its hash") == true, "\(second.result.stderr)")
        #expect(second.report?.totals.variantsEncoded == 1, "only the damaged variant is made again, from the remote's original")
        #expect(try await origin.stats().requests_total == 0)
        // Made alone, the variant need not have the same bytes as when made with its siblings: every file
        // is named by the hash of what it holds, and the page refers to the files there are.
        let files = site.output("b").keys.filter { $0.hasPrefix("_img/") }
        #expect(files.count == site.output("a").count - 1)
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: site.out("b") + "/" + file))
            #expect(file.contains("-" + BlobID(of: [UInt8](bytes)).hex.prefix(10) + "-"))
            #expect(try String(contentsOfFile: site.out("b") + "/p0.html", encoding: .utf8).contains(String(file.dropFirst(5))))
        }
        let verify = try await runImgbake(["cache", "verify", "--cache-dir", site.site.folder.path + "/b-cache"])
        #expect(verify.status == 0, "the bad bytes were never stored: \(verify.stdout)")
        // The remote's record now names the new, good blob: a third machine finds everything.
        let third = try await site.build("c")
        #expect(third.result.warnings.isEmpty && third.report?.totals.variantsEncoded == 0, "\(third.result.stderr)")
        #expect(site.output("c") == site.output("b"))
    }

    // Timed against slow downloads: under ThreadSanitizer the build is too slow for the remote to be
    // stopped in the middle of it.
    @Test(.disabled(if: Sanitizer.active == "thread", "timing-dependent under ThreadSanitizer"))
    func aRemoteStoppedMidBuildCostsOneWarning() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        // One image comes at once; the others take 10 s (under the 15 s low-speed limit), so the remote
        // goes away while they download (with margin: under a loaded test run, another build beside it,
        // the first upload was seen more than 6 s late).
        let site = RemoteSite(origin: origin, images: ["coffee.png", "fault/slow/10000/hubble.jpg", "fault/slow/10000/astronaut.jpg"])
        site.configure(cache: "remote = \"\(dav.url)\"\nremote_timeout = \"5s\"")
        async let build = site.build("a")
        let clock = ContinuousClock()
        let started = clock.now
        while !dav.requests().contains(where: { $0.method == "PUT" }) && clock.now - started < .seconds(60) {
            try await Task.sleep(for: .milliseconds(30))
        }
        dav.stop()
        let run = try await build
        #expect(run.result.status == 0)
        #expect(run.report?.totals.referencesLocalised == 3)
        #expect(run.remoteWarnings.count == 1 && run.remoteWarnings.first?.contains("unavailable") == true, "\(run.result.stderr)")
        #expect(run.result.warnings.split(separator: "\n").count == 1, "\(run.result.stderr)")
    }

    @Test func aRemoteAnswering500IsGivenUpOnAfterAFewRequests() async throws {
        let origin = try Origin()
        let dav = try await DAVServer(fault: .serverErrors)
        let site = RemoteSite(origin: origin, images: ["coffee.png", "hubble.jpg", "astronaut.jpg", "hubble-wide.jpg"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        let run = try await site.build("a")
        #expect(run.result.status == 0 && run.report?.totals.referencesLocalised == 4)
        #expect(run.remoteWarnings.count == 1 && run.remoteWarnings.first?.contains("unavailable (HTTP 500)") == true, "\(run.result.stderr)")
        // Three failures in a row turn it off; a few more may already have been in flight.
        #expect(dav.requests().count <= 12, "\(dav.requests().count) requests")
    }

    @Test func aRemoteRefusingWritesIsStillReadFrom() async throws {
        let origin = try Origin()
        let writable = try await DAVServer()
        let site = RemoteSite(origin: origin, images: ["coffee.png"])
        site.configure(cache: "remote = \"\(writable.url)\"")
        #expect(try await site.build("a").result.status == 0)
        writable.stop()

        let readOnly = try await DAVServer(fault: .refuseWrites, storage: writable.storage)
        let grown = RemoteSite(origin: origin, images: ["coffee.png", "astronaut.jpg"])
        grown.configure(cache: "remote = \"\(readOnly.url)\"")
        try await origin.reset()
        let run = try await grown.build("b")
        #expect(run.result.status == 0 && run.report?.totals.referencesLocalised == 2)
        #expect(run.report?.remote?.hits ?? 0 > 0, "coffee.png came from the remote")
        #expect(try await origin.stats().paths == ["/img/astronaut.jpg": 1])
        #expect(run.remoteWarnings.count == 1 && run.remoteWarnings.first?.contains("refused (HTTP 403)") == true, "\(run.result.stderr)")
        // No more writes after the first refusal (those already running in parallel aside).
        #expect(readOnly.requests().filter { $0.method == "PUT" }.count <= RemoteSettings(location: .http(base: "")).uploads)
    }

    @Test func readOnlyModeUploadsNothingAndNoRemoteAsksNothing() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let site = RemoteSite(origin: origin, images: ["coffee.png"])
        site.configure(cache: "remote = \"\(dav.url)\"")
        let flag = try await site.build("a", ["--remote-read-only"])
        #expect(flag.result.status == 0 && flag.report?.remote?.misses ?? 0 > 0 && flag.report?.remote?.uploads == 0)
        site.configure(cache: "remote = \"\(dav.url)\"\nremote_write = false")
        #expect(try await site.build("b").result.status == 0)
        // Reading only: the marker (absent), and once per build the look for a layout 1 record.
        #expect(dav.requests().map(\.method).sorted() == ["GET", "GET", "HEAD", "HEAD"], "\(dav.requests())")
        #expect(dav.objects().isEmpty)

        let before = dav.requests().count
        let none = try await site.build("c", ["--no-remote"])
        #expect(none.result.status == 0 && none.report?.remote == nil && !none.result.stdout.contains("remote cache"))
        #expect(dav.requests().count == before)
    }

    @Test func frozenUsesTheRemoteAndFailsOnlyForImagesNeitherLocalNorRemote() async throws {
        let origin = try Origin()
        let dav = try await DAVServer()
        let one = RemoteSite(origin: origin, images: ["coffee.png"])
        one.configure(cache: "remote = \"\(dav.url)\"")
        #expect(try await one.build("a").result.status == 0)

        let two = RemoteSite(origin: origin, images: ["coffee.png", "hubble.jpg"])
        two.configure(cache: "remote = \"\(dav.url)\"")
        try await origin.reset()
        let frozen = try await two.build("b", ["--frozen"])
        #expect(frozen.result.status == 1)
        #expect(frozen.result.stderr.contains("--frozen: 1 image(s) not in the cache:\n  \(origin.url("img/hubble.jpg"))\n"), "\(frozen.result.stderr)")
        #expect(frozen.report?.totals.referencesLocalised == 1)
        #expect(try await origin.stats().requests_total == 0)
    }
}

/// `--shard`, `--no-remote` and `--remote-read-only` at the command line.
@Suite struct RemoteCommandLineTests {
    @Test(arguments: [
        (["--shard", "0/4"], "expected K/N"),
        (["--shard", "5/4"], "expected K/N"),
        (["--shard", "two"], "expected K/N"),
        (["--shard", "1/2"], "--shard needs a remote cache"),
        (["--shard", "1/2", "--config", "REMOTE", "--remote-read-only"], "excludes --remote-read-only"),
        (["--shard", "1/2", "--config", "REMOTE", "--frozen"], "needs the network"),
    ])
    func shardMisuseIsAUsageError(arguments: [String], message: String) async throws {
        let site = TestSite()
        site.page("a.html", "<p>no images</p>")
        site.folder.write("remote.toml", "[cache]\nremote = \"http://127.0.0.1:9/cache\"\n")
        let given = arguments.map { $0 == "REMOTE" ? site.folder.path + "/remote.toml" : $0 }
        let result = try await runImgbake(["build", site.site, "--cache-dir", site.cache] + given)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
