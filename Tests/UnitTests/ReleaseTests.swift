import Foundation
import Testing
import ImgBake
import ImgBakeTestSupport

/// A release publishes what is downloaded from it: `.github/workflows/release.yml` uploads files from
/// `dist/`, `packaging/dist.sh` names them, and the Action's installer (`packaging/action/install.sh`)
/// and the GitLab example download by name. The names are read from the four files, their variables
/// set as they would be for this version on amd64, and compared.
@Suite struct ReleaseTests {
    func text(_ path: String) throws -> String { try String(contentsOfFile: Paths.root + "/" + path, encoding: .utf8) }

    /// `imgbake_${version}_${arch}.deb` → `imgbake_0.2.0_amd64.deb`, for each spelling the scripts use.
    func named(_ template: Substring) -> String {
        var name = String(template)
        for (variable, value) in [("${IMGBAKE_VERSION}", SystemInfo.version), ("$IMGBAKE_VERSION", SystemInfo.version),
                                  ("${version}", SystemInfo.version), ("$version", SystemInfo.version),
                                  ("${arch}", "amd64"), ("$arch", "amd64"), ("$machine", "x86_64")] {
            name = name.replacingOccurrences(of: variable, with: value)
        }
        return name
    }

    @Test func theReleasePublishesWhatIsDownloadedFromIt() throws {
        let release = try text(".github/workflows/release.yml")
        let published = Set(release.matches(of: /"dist\/([^"\/\s]+)"/).map { named($0.output.1) })
        let wheel = "imgbake-\(SystemInfo.version)-py3-none-manylinux_2_34_x86_64.whl"
        let npmPackage = "imgbake-\(SystemInfo.version).tgz"
        #expect(published == ["imgbake_\(SystemInfo.version)_amd64.deb", "imgbake-\(SystemInfo.version)-linux-x86_64.tar.gz", wheel, npmPackage,
                              "SHA256SUMS"], "\(published)")
        // The wheel goes to PyPI too, by trusted publishing (an OIDC token, no stored secret); the npm
        // package to npm, with the token from the repository's secret.
        #expect(release.contains("pypa/gh-action-pypi-publish@release/v1") && release.contains("id-token: write"))
        #expect(release.contains(#"npm publish "./dist/imgbake-${version}.tgz""#) && release.contains("NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}"))
        #expect(release.contains(#"tags: ["v*"]"#))

        // The Action's installer: the tarball by name, and SHA256SUMS, from the release tagged v<version>.
        let install = try text("packaging/action/install.sh")
        let package = try #require(install.firstMatch(of: /\n  name="([^"]+)"/), "install.sh names no package")
        #expect(install.contains(#"base="https://github.com/imgbake/imgbake/releases/download/v${IMGBAKE_VERSION}""#))
        let sums = install.matches(of: /"\$base\/([A-Za-z0-9_.-]+)"/).map { named($0.output.1) }
        #expect(sums == ["SHA256SUMS"], "\(sums)")
        #expect(published.isSuperset(of: [named(package.output.1)] + sums), "install.sh downloads \(named(package.output.1)) and \(sums)")

        // The GitLab example downloads the same way.
        let gitlab = try text("Examples/ci/gitlab-ci.yml")
        let gitlabPackage = try #require(gitlab.firstMatch(of: /tarball="([^"]+)"/), "gitlab-ci.yml names no tarball")
        #expect(published.contains(named(gitlabPackage.output.1)) && gitlab.contains(#""$release/SHA256SUMS""#))

        // make dist makes them under these names.
        let dist = try text("packaging/dist.sh")
        let deb = try #require(dist.firstMatch(of: /deb="\$DIST\/([^"]+)"/), "dist.sh names no package")
        let tarball = try #require(dist.firstMatch(of: /\nname=(imgbake-[^\s]+)\n/), "dist.sh names no tarball")
        #expect(dist.contains("> SHA256SUMS)") && dist.contains(#""$(basename "$npm_package")" "$(basename "$wheel")" > SHA256SUMS"#))
        // The wheel's name comes from wheel.sh's tags: the platform is the glibc floor dist-check holds at 2.34.
        let npm = try text("packaging/npm.sh")
        let packed = try #require(npm.firstMatch(of: /\nmade=\$out\/([^\s]+)\n/), "npm.sh names no package")
        #expect(Set([named(deb.output.1), named(tarball.output.1) + ".tar.gz", wheel, named(packed.output.1), "SHA256SUMS"]) == published)
    }
}
