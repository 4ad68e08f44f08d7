import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Pages other people wrote, at their worst: invalid UTF-8, NUL bytes, a 50 MB one-line page, 100,000
/// nested elements, unterminated comments and attributes, pathological Markdown nesting. No crash,
/// bounded time and memory, every byte outside a rewritten URL unchanged, nothing written outside
/// the output folder.
@Suite(.hangGuard) struct MalformedPageTests {
    static let url = "http://images.test/img/coffee.png"

    /// Pages, each with at most one remote image, which `markup = "localize"` replaces one for one.
    static func pages() -> [String: [UInt8]] {
        let img = Array("<img src=\"\(url)\" alt=x>".utf8)
        var pages: [String: [UInt8]] = [:]
        pages["invalid-utf8.html"] = Array("<p>caf".utf8) + [0xE9, 0xFF, 0xC3, 0x28] + Array("</p>".utf8) + img + [0xF0, 0x9F, 0x98]
        pages["nul.html"] = Array("<p>a\u{0}b</p>".utf8) + img + [0, 0, 0] + Array("<p>\u{0}</p>".utf8)
        pages["nested.html"] = Array(String(repeating: "<div>", count: 100_000).utf8) + img + Array(String(repeating: "</div>", count: 100_000).utf8)
        pages["unterminated-comment.html"] = img + Array("<p>before</p><!-- <img src=\"\(url)\"> never closed".utf8)
        pages["unterminated-attribute.html"] = img + Array("<img alt=\"x\" src=\"\(url)".utf8)
        pages["unterminated-tag.html"] = img + Array("<img src=\"\(url)\"".utf8)
        pages["nested-lists.md"] = Array((String(repeating: "> ", count: 5000) + "![a](\(url))\n").utf8)
        pages["brackets.md"] = Array((String(repeating: "[", count: 50_000) + "![a](\(url))" + String(repeating: "]", count: 50_000) + "\n").utf8)
        pages["emphasis.md"] = Array((String(repeating: "*a _b ", count: 20_000) + "![a](\(url))\n").utf8)
        pages["links.md"] = Array((String(repeating: "[x](", count: 20_000) + "![a](\(url))\n").utf8)
        return pages
    }

    @Test(arguments: [true, false])
    func malformedPagesNeitherCrashNorLoseBytes(inPlace: Bool) async throws {
        let origin = try Origin()
        let site = TestSite()
        let pages = Self.pages()
        for (name, bytes) in pages { site.folder.write("site/" + name, bytes) }
        site.folder.write("site/imgbake.toml", "[output]\nmarkup = \"localize\"\n")
        let outside = site.folder.files()
        var arguments = [Paths.binary, "build", site.site, "--cache-dir", site.cache, "--connect-to", origin.connectTo]
        if !inPlace { arguments += ["--out", site.out] }
        let (result, peak) = try await runMeasuringPeakMemory(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(peak < memoryBound(600 << 20), "peak RSS \(peak >> 20) MiB")
        // 100,000 nested elements would take gumbo minutes: left as they are, said so.
        #expect(result.stderr.contains("nested.html:1:1: warning: page not read: elements nested 100000 deep, more than 10000"), "\(result.stderr)")
        let root = inPlace ? site.site : site.out
        for (name, original) in pages {
            let written = try #require(FileManager.default.contents(atPath: root + "/" + name).map { [UInt8]($0) }, "\(name)")
            #expect(Self.restoringURLs(written) == original, "\(name): only the image URL may change")
        }
        // Nothing beside the site (and the output and cache the build was given).
        let now = Set(site.folder.files()).subtracting(site.folder.files(under: "site").map { "site/" + $0 })
            .subtracting(site.folder.files(under: "out").map { "out/" + $0 }).subtracting(site.folder.files(under: "cache").map { "cache/" + $0 })
        #expect(now.isSubset(of: Set(outside)), "\(now.subtracting(outside))")
    }

    /// A page far larger than any real one is left as it is, with a warning, instead of taking 15 times
    /// its size in memory to parse.
    @Test func aFiftyMegabytePageIsLeftWithAWarning() async throws {
        let origin = try Origin()
        let site = TestSite()
        let filler = String(repeating: "<span class=\"x\">lorem ipsum dolor</span>", count: 1_300_000)
        site.page("big.html", "<img src=\"\(Self.url)\" alt=x>" + filler)
        site.page("small.html", "<img src=\"\(Self.url)\" alt=x>")
        let before = site.folder.read("site/big.html")
        let (result, peak) = try await runMeasuringPeakMemory([Paths.binary, "build", site.site, "--out", site.out,
                                                               "--cache-dir", site.cache, "--connect-to", origin.connectTo])
        #expect(result.status == 0)
        #expect(result.stderr.contains("big.html:1:1: warning: page not read: 49.59 MB, over the 16.00 MB limit (build.max_page_size); left as it is"),
                "\(result.stderr)")
        #expect(site.folder.read("out/big.html") == before && site.output("small.html")?.contains("/_img/") == true)
        // Measured ~160 MiB (the page is read once, to keep the images it may refer to).
        #expect(peak < memoryBound(400 << 20), "peak RSS \(peak >> 20) MiB")
    }

    /// `/_img/<name>` back to the remote URL: what the page was.
    static func restoringURLs(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        let marker = Array("/_img/".utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == marker[0], bytes[index...].starts(with: marker) {
                var end = index + marker.count
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") && bytes[end] != UInt8(ascii: ")") && bytes[end] != UInt8(ascii: " ") {
                    end += 1
                }
                out += Array(url.utf8)
                index = end
                continue
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }
}
