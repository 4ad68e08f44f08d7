import Foundation
import Testing
import ImgBake
import ImgBakeTestSupport

/// One version in one place: `SystemInfo.version`. The packages take it from the binary and the report
/// and the User-Agent from the library; the CHANGELOG is written by hand, so this keeps it in step.
@Suite struct VersionTests {
    @Test func theChangelogsLatestReleaseIsThisVersion() throws {
        let changelog = try String(contentsOfFile: Paths.root + "/CHANGELOG.md", encoding: .utf8)
        let headings = changelog.split(separator: "\n").filter { $0.hasPrefix("## ") }
        let released = try #require(headings.first { $0.dropFirst(3).first?.isNumber == true }, "no released version in CHANGELOG.md")
        let match = try #require(released.wholeMatch(of: /## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})/),
                                 "\(released): want \"## X.Y.Z — YYYY-MM-DD\"")
        #expect(String(match.output.1) == SystemInfo.version,
                "CHANGELOG.md's latest release is \(match.output.1), SystemInfo.version is \(SystemInfo.version): change both")
        // Only an Unreleased section may come before it.
        #expect(headings.prefix { $0 != released }.allSatisfy { $0 == "## Unreleased" }, "\(headings.prefix(3))")
    }

    /// The GitHub Action installs this version's package unless told otherwise.
    @Test func theActionInstallsThisVersionByDefault() throws {
        let action = try String(contentsOfFile: Paths.root + "/action.yml", encoding: .utf8)
        let match = try #require(action.firstMatch(of: /\n  version:\n(?:    [^\n]*\n)*?    default: "([^"]*)"/), "no version input in action.yml")
        #expect(String(match.output.1) == SystemInfo.version)
    }

    /// The Python package (the plugins, and the wheel `make dist` builds around the binary) and the
    /// Jekyll gem say the same version.
    @Test func thePluginPackagesAreThisVersion() throws {
        let python = try String(contentsOfFile: Paths.root + "/integrations/python/imgbake/__init__.py", encoding: .utf8)
        #expect(python.firstMatch(of: /\n__version__ = "([^"]*)"/)?.output.1 == Substring(SystemInfo.version))
        let gem = try String(contentsOfFile: Paths.root + "/integrations/jekyll/jekyll-imgbake.gemspec", encoding: .utf8)
        #expect(gem.firstMatch(of: /spec\.version = "([^"]*)"/)?.output.1 == Substring(SystemInfo.version))
    }

    /// What users copy names this release: `uses: imgbake/imgbake@vX.Y.Z` in the README, the docs and
    /// the CI examples, and the GitLab example's `IMGBAKE_VERSION`. (The release workflow checks the
    /// same before publishing; this finds it before a tag is pushed.)
    @Test func theExamplesInstallThisVersion() throws {
        var files = ["README.md", "action.yml"] + (FileManager.default.subpaths(atPath: Paths.root + "/Examples/ci") ?? []).map { "Examples/ci/" + $0 }
        files += (FileManager.default.subpaths(atPath: Paths.root + "/docs") ?? []).filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        var named = 0
        for file in files {
            let text = try String(contentsOfFile: Paths.root + "/" + file, encoding: .utf8)
            for match in text.matches(of: /imgbake\/imgbake@v([0-9.]+)|IMGBAKE_VERSION: "([0-9.]+)"/) {
                named += 1
                let version = String(match.output.1 ?? match.output.2 ?? "")
                #expect(version == SystemInfo.version, "\(file) installs imgbake \(version), this is \(SystemInfo.version)")
            }
        }
        #expect(named >= 5, "found \(named) places that name a release")
    }

    /// `+dirty` is shown (`--version`, the report) and never enters a key, a fingerprint or a request:
    /// a build from a modified tree must find the same cache entries as a clean one.
    @Test func theDirtyMarkerIsOnlyShown() throws {
        #expect(!SystemInfo.version.contains("+"))
        let library = Paths.root + "/Sources/ImgBake"
        for file in FileManager.default.subpaths(atPath: library)?.filter({ $0.hasSuffix(".swift") }) ?? [] {
            let text = try String(contentsOfFile: library + "/" + file, encoding: .utf8)
            if text.contains("displayVersion") || text.contains("BuildStamp") {
                #expect(["Configuration/SystemInfo.swift", "Reporting/Report.swift"].contains(file), "\(file) uses the shown version")
            }
        }
    }
}
