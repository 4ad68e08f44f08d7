import Foundation

/// Tests/Support/layout_check.py: a site before and after imgbake, every `<img>` of every page compared
/// in Chromium (Debian's, through its DevTools protocol) at a phone and a desktop viewport. The
/// invariant every layout test holds: no box changed, no image broke, no text changed.
package struct LayoutCheck {
    package var status: Int32
    /// The table the script printed, for messages.
    package var output: String
    /// Page × viewport rows, images compared and changed boxes, from its JSON.
    package var rows: [[String: Any]] = []
    package var totals: [String: Any] = [:]

    package static let chromium = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")

    /// `connectTo`: routes for the browser, as imgbake's `--connect-to` (a loopback origin).
    package static func run(before: String, after: String, siteRoot: String = "/", connectTo: [String] = [], pages: [String] = [],
                            label: String = "") async throws -> LayoutCheck {
        var arguments = ["python3", Paths.root + "/Tests/Support/layout_check.py", before, after, "--json", "--site-root", siteRoot]
        for route in connectTo { arguments += ["--connect-to", route] }
        if !pages.isEmpty { arguments += ["--pages"] + pages }
        if !label.isEmpty { arguments += ["--label", label] }
        let result = try await ImgBakeTestSupport.run(arguments, in: FileManager.default.temporaryDirectory.path)
        var check = LayoutCheck(status: result.status, output: result.stdout + result.stderr)
        if let line = result.stdout.split(separator: "\n").last, line.hasPrefix("{"),
           let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
            check.rows = json["rows"] as? [[String: Any]] ?? []
            check.totals = json["totals"] as? [String: Any] ?? [:]
        }
        return check
    }

    /// Images compared over every page and viewport.
    package var images: Int { rows.reduce(0) { $0 + ($1["compared"] as? Int ?? 0) } }
    /// Every image kept its box, none broke, no text changed, every page measured.
    package var holds: Bool { status == 0 && !rows.isEmpty }
}
