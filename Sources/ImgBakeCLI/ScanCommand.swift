import ArgumentParser
import Foundation
import ImgBake

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List the remote image references of the site (no network).")

    @Argument(help: "The site folder (default: the current folder).")
    var site: String = "."

    @Flag(help: "Print JSON: an array of {file, line, column, kind, url}.")
    var json = false

    func run() async throws {
        // Each entry printed as it is found: a site of a million references streams through.
        var writer = JSONArrayWriter()
        var opened = false // nothing on stdout before the site is known to be there
        let diagnostics: [Diagnostic]
        do {
            diagnostics = try await SiteScan.stream(site: site, jobs: Configuration.defaultJobs) { entry in
                guard json else { return print("\(entry.location): \(entry.kind.rawValue) \(entry.url)") }
                print((opened ? "" : writer.start) + writer.element(entry), terminator: "")
                opened = true
            }
            if json { print((opened ? "" : writer.start) + writer.end) }
        } catch {
            Terminal.error("imgbake: error: \(error.message)")
            throw ExitCode(2)
        }
        for diagnostic in diagnostics { Terminal.error(diagnostic.description) }
    }
}
