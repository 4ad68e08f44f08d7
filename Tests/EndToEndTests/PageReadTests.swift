import Foundation
import ImgBakeTestSupport
import Testing

/// A page is read once per build, whatever the mode: the real binary under `strace -f -e trace=openat`
/// on a site with every kind of reference (remote, the site's own, and imgbake's own outputs), counting
/// the opens of each page file for reading. Cold with `--out`, warm into a new `--out`, in place, in
/// place after an edit, in place after one of the site's images changed (the pages using it built
/// again from their kept sources), and with `--refresh`.
@Suite(.hangGuard) struct PageReadTests {
    static let strace = "/usr/bin/strace"

    enum Step: String, CaseIterable, Sendable {
        case coldOut, warmIntoNewOut, coldInPlace, inPlaceAgain, inPlaceAfterAnEdit, inPlaceAfterAnImageChanged, inPlaceRefresh
    }

    @Test func everyPageFileIsOpenedForReadingAtMostOncePerBuild() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.strace), "strace is not installed (`make test` installs it)")
        let origin = try Origin()
        let folder = TemporaryFolder()
        let site = folder.path + "/site"
        folder.write("site/img/a.png", Paths.fixture("colour/two-colours.png"))
        folder.write("site/img/b.jpg", Paths.fixture("metadata/camera.jpg"))
        var pages: [String] = []
        for (n, kind) in ReferenceKindIntegrityTests.Kind.allCases.enumerated() {
            let urls = [origin.url("img/" + Paths.exampleImages[n % Paths.exampleImages.count]), "/img/a.png", "../img/b.jpg",
                        "https://example.org/img/a.png"]
            let (path, text) = ReferenceKindIntegrityTests.source(kind, urls, extra: "")
            let page = "kinds/\(kind.rawValue)/" + path
            folder.write("site/" + page, text)
            pages.append(page)
        }
        folder.write("imgbake.toml", "[output]\nbase_url = \"https://example.org/\"\n")
        let common = ["--cache-dir", folder.path + "/cache", "--connect-to", origin.connectTo, "--quiet", "--config", folder.path + "/imgbake.toml"]

        var counts: [Step: Int] = [:]
        for step in Step.allCases {
            var arguments = ["build", site] + common
            switch step {
            case .coldOut: arguments += ["--out", folder.path + "/out1"]
            case .warmIntoNewOut: arguments += ["--out", folder.path + "/out2"]
            case .coldInPlace, .inPlaceAgain: break
            case .inPlaceAfterAnEdit:
                let page = pages[0]
                let text = try #require(folder.text("site/" + page))
                folder.write("site/" + page, text.replacingOccurrences(of: "</body>", with: "<p>edited</p></body>"))
            case .inPlaceAfterAnImageChanged: folder.write("site/img/a.png", Paths.fixture("colour/diagram.png"))
            case .inPlaceRefresh: arguments += ["--refresh"]
            }
            let log = folder.path + "/strace-\(step.rawValue).log"
            let result = try await runProcess(Self.strace, ["-f", "-qq", "-e", "trace=openat", "-o", log, Paths.binary] + arguments, in: nil)
            #expect(result.status == 0, "\(step): \(result.stderr)")
            let opens = Self.readOpens(log, under: site)
            for page in pages {
                #expect(opens[page, default: 0] <= 1, "\(step): \(page) opened for reading \(opens[page, default: 0]) times")
            }
            counts[step] = pages.map { opens[$0, default: 0] }.max() ?? 0
        }
        // Every build reads the pages it builds: the cold ones all of them, once.
        #expect(counts[.coldOut] == 1 && counts[.coldInPlace] == 1)
        print("page reads, most opens of one page file per build: " + Step.allCases.map { "\($0.rawValue) \(counts[$0] ?? -1)" }.joined(separator: ", "))
    }

    /// Opens for reading (not for writing, not of folders) of files under `root`, by path relative to it.
    static func readOpens(_ log: String, under root: String) -> [String: Int] {
        var opens: [String: Int] = [:]
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.contains("openat(") && line.contains("O_RDONLY") && !line.contains("O_DIRECTORY") {
            guard let start = line.range(of: "\"" + root + "/"), let end = line[start.upperBound...].firstIndex(of: "\"") else { continue }
            opens[String(line[start.upperBound..<end]), default: 0] += 1
        }
        return opens
    }
}
