import Foundation
import Testing
import ImgBake
import ImgBakeTestSupport

/// `packaging/release-check.sh`, which the release workflow runs before publishing: it passes when the
/// tag, the binary, the CHANGELOG and the Action name one version and the packages are there, and
/// fails naming what disagrees. The binary is a stand-in that prints a chosen version, so the check is
/// tried on a clean and a `+dirty` build alike.
@Suite struct ReleaseCheckTests {
    let folder = TemporaryFolder()

    func binary(saying version: String) -> String {
        folder.write("imgbake-\(version)", "#!/bin/sh\necho 'imgbake \(version) (x86_64 Linux)'\n")
        chmod(folder.path + "/imgbake-\(version)", 0o755)
        return folder.path + "/imgbake-\(version)"
    }

    func check(_ arguments: [String]) async throws -> CommandResult {
        try await retryingWhileTextFileBusy { try await run(["bash", "packaging/release-check.sh"] + arguments, in: Paths.root) }
    }

    @Test func theTagTheBinaryTheChangelogAndTheActionAgree() async throws {
        let version = SystemInfo.version
        let agreed = try await check(["v\(version)", binary(saying: version)])
        #expect(agreed.status == 0, "\(agreed.stdout)")

        let otherTag = try await check(["v9.9.9", binary(saying: version)])
        #expect(otherTag.status == 1)
        for what in ["--version says \(version)", "CHANGELOG.md's latest release is \(version)", "action.yml installs \(version)"] {
            #expect(otherTag.stdout.contains(what), "\(otherTag.stdout)")
        }
        let dirty = try await check(["v\(version)", binary(saying: version + "+dirty")])
        #expect(dirty.status == 1 && dirty.stdout.contains("says \(version)+dirty"), "\(dirty.stdout)")
        #expect(try await check(["\(version)", binary(saying: version)]).status == 1, "a tag without its v")
    }

    @Test func thePackagesAreThereUnderTheirNamesWithTheirSums() async throws {
        let version = SystemInfo.version
        let names = ["imgbake_\(version)_amd64.deb", "imgbake-\(version)-linux-x86_64.tar.gz",
                     "imgbake-\(version)-py3-none-manylinux_2_34_x86_64.whl", "imgbake-\(version).tgz"]
        for name in names { folder.write("dist/" + name, "bytes of \(name)\n") }
        #expect(try await run(["sh", "-c", "sha256sum \(names.joined(separator: " ")) > SHA256SUMS"], in: folder.path + "/dist").status == 0)
        let complete = try await check(["v\(version)", binary(saying: version), folder.path + "/dist"])
        #expect(complete.status == 0, "\(complete.stdout)")

        folder.write("dist/" + names[0], "other bytes\n")
        let changed = try await check(["v\(version)", binary(saying: version), folder.path + "/dist"])
        #expect(changed.status == 1 && changed.stdout.contains("SHA256SUMS does not match"), "\(changed.stdout)")
        try FileManager.default.removeItem(atPath: folder.path + "/dist/" + names[1])
        let missing = try await check(["v\(version)", binary(saying: version), folder.path + "/dist"])
        #expect(missing.status == 1 && missing.stdout.contains("\(names[1]) is missing"), "\(missing.stdout)")
    }

    @Test func theNotesAreTheChangelogsSection() async throws {
        let notes = try await check(["--notes", "v\(SystemInfo.version)"])
        #expect(notes.status == 0)
        #expect(notes.stdout.contains("### Added") && !notes.stdout.contains("## \(SystemInfo.version)") && !notes.stdout.contains("## 0.1.0"))
    }
}
