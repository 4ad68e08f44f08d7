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
        let scan: SiteScan
        do { scan = try await SiteScan.scan(site: site, jobs: Configuration.defaultJobs) } catch {
            Terminal.error("imgbake: error: \(error.message)")
            throw ExitCode(2)
        }
        for diagnostic in scan.diagnostics { Terminal.error(diagnostic.description) }
        if json {
            print(scan.json())
        } else {
            for entry in scan.entries { print("\(entry.location): \(entry.kind.rawValue) \(entry.url)") }
        }
    }
}
