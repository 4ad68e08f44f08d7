import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// `imgbake build` killed with SIGKILL at random moments, in place and with `--out`, again and again
/// on one site and one cache, whose pages, stylesheets, feeds and front matter hold every kind of
/// reference (root-relative, page-relative, absolute under `base_url`). After every kill: no page is
/// truncated or half-rewritten and every local reference resolves; after the next build: it
/// completed, `cache verify` is clean, no temporary file is left anywhere. `IMGBAKE_STRESS_KILLS` sets
/// the number of kills (`make stress` runs 80; `make test` a few) in each of two chains, on sites and
/// caches of their own, that run side by side: one longer chain was the last test of the suite to
/// end, by half a minute.
@Suite struct CrashSafetyTests {
    static let kills = Int(ProcessInfo.processInfo.environment["IMGBAKE_STRESS_KILLS"] ?? "") ?? 6
    static let chains = 2

    @Test(arguments: 0..<chains)
    func killedAtRandomMomentsTheSiteAndCacheStayWhole(chain: Int) async throws {
        let kills = Self.kills
        let origin = try Origin(latencyMilliseconds: 40)
        let site = TestSite()
        let images = Paths.exampleImages + ["drawing.svg", "gone.png"]
        var sources: [String: String] = [:]
        for n in 0..<16 {
            let refs = (0..<3).map { images[(n + $0 * 5) % images.count] }
            sources["p\(n).html"] = "<!doctype html>\n" + refs.map { "<img src=\"\(origin.url("img/\($0)?v=\(n % 4)"))\" alt=x>\n" }.joined() + "<!-- end -->\n"
            sources["posts/m\(n).md"] = refs.map { "![x](\(origin.url("img/\($0)?w=\(n % 3)")))\n\n" }.joined() + "<!-- end -->\n"
        }
        for (n, kind) in ReferenceKindIntegrityTests.Kind.allCases.enumerated() {
            let urls = [origin.url("img/\(images[n % images.count])?k=\(n)"), "/img/local.png", "https://example.org/img/local.jpg"]
            let (path, text) = ReferenceKindIntegrityTests.source(kind, urls, extra: "")
            sources["kinds/\(kind.rawValue)/" + path] = text + Self.end(path)
        }
        let configuration = site.folder.path + "/imgbake.toml"
        // One width at a fixed quality: what a kill interrupts is the same, the builds shorter.
        TemporaryFolder.write("[output]\nbase_url = \"https://example.org/\"\n" + TestSite.oneWidthTOML, to: configuration)
        func reset(_ root: String) {
            for (path, text) in sources { TemporaryFolder.write(text, to: root + "/" + path) }
            site.folder.write(String(root.dropFirst(site.folder.path.count + 1)) + "/img/local.png", Paths.fixture("colour/two-colours.png"))
            site.folder.write(String(root.dropFirst(site.folder.path.count + 1)) + "/img/local.jpg", Paths.fixture("metadata/camera.jpg"))
        }
        reset(site.site)
        let inPlace = site.folder.path + "/inplace"
        reset(inPlace)
        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        // ms: how long an uninterrupted build of the same kind (in place or out, revalidating or not,
        // after a reset or not) took last time; kills land in the first four fifths of it. One figure
        // for all kinds let a long revalidating build set the window of a build with nothing to do,
        // which was over before most kills: one chain killed 1 of 6 mid-way in a loaded full suite.
        var typical: [String: Int] = [:]
        for round in 0..<kills {
            let useOut = round % 2 == 1
            let afresh = !useOut && round % 4 == 0
            if afresh { reset(inPlace) } // remote references again, for the kill to interrupt rewriting
            let root = useOut ? site.out : inPlace
            var arguments = ["build", useOut ? site.site : inPlace, "--cache-dir", site.cache, "--connect-to", origin.connectTo, "--quiet",
                             "--config", configuration]
            if useOut { arguments += ["--out", site.out] }
            if round % 3 != 0 { arguments.append("--refresh") } // revalidating: network and cache work to interrupt
            let kind = "\(useOut) \(round % 3 != 0) \(afresh)"
            let delay = Int.random(in: 0...(typical[kind, default: 600] * 4 / 5), using: &generator)
            let killed = try await runKilled(arguments, afterMilliseconds: delay)
            if killed { interrupted += 1 }

            // With --out, a page the killed build had not reached yet is simply not there yet.
            try expectWhole(root, sources: sources, after: "round \(round), killed after \(delay) ms (\(killed ? "killed" : "had finished"))",
                            missingAllowed: useOut)
            let started = ContinuousClock.now
            let next = try await runImgbake(arguments)
            typical[kind] = max(100, (ContinuousClock.now - started).wholeMilliseconds)
            #expect(next.status == 0, "round \(round): \(next.stderr)")
            let verify = try await runImgbake(["cache", "verify", "--cache-dir", site.cache])
            #expect(verify.status == 0 && verify.stdout.contains(" 0 corrupt, 0 missing"), "round \(round): \(verify.stdout)\(verify.stderr)")
            try expectWhole(root, sources: sources, after: "round \(round), next build")
            let leftovers = (FileManager.default.subpaths(atPath: site.folder.path) ?? []).filter { $0.contains(".tmp-") }
            #expect(leftovers.isEmpty, "round \(round): \(leftovers)")
        }
        print("crash safety, chain \(chain): \(interrupted) of \(kills) builds killed mid-way, each followed by a clean build and verify")
        #expect(interrupted >= kills / 3, "too few builds were still running when killed to test anything")
    }

    /// Every page is its source or a complete rewrite of it (rewriting replaces URLs, never a file's
    /// last line), and every `_img/` file it names, however the URL starts, exists.
    func expectWhole(_ root: String, sources: [String: String], after: String, missingAllowed: Bool = false) throws {
        for (path, source) in sources {
            guard let text = try? String(contentsOfFile: root + "/" + path, encoding: .utf8) else {
                #expect(missingAllowed, "\(after): \(path) missing")
                continue
            }
            #expect(text == source || (text.hasSuffix(Self.end(path)) && text.contains("/_img/")), "\(after): \(path) is not whole")
            for match in text.matches(of: /\/_img\/([A-Za-z0-9._-]+)/) {
                #expect(FileManager.default.fileExists(atPath: root + "/_img/" + match.output.1), "\(after): \(path) → \(match.output.1)")
            }
        }
    }

    /// The last bytes of every source, in its file's syntax: a page cut short lacks them.
    static func end(_ path: String) -> String {
        path.hasSuffix(".css") ? "/* end */\n" : path.hasSuffix(".json") ? "\n \t \n" : "<!-- end -->\n"
    }

    /// Runs the real binary and kills it with SIGKILL after `milliseconds` (from a thread of its own,
    /// so a busy test run cannot delay the kill). Returns whether it was still running.
    func runKilled(_ arguments: [String], afterMilliseconds milliseconds: Int) async throws -> Bool {
        let process = try ChildProcess(Paths.binary, arguments, stdout: .null, stderr: .null)
        let pid = process.pid
        let killed = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            Thread {
                usleep(UInt32(milliseconds) * 1000)
                done.resume(returning: kill(pid, SIGKILL) == 0)
            }.start()
        }
        return await process.termination().signal == SIGKILL && killed
    }
}
