import Foundation

/// `--report FILE`: the JSON report, or with `.html`/`.htm` the page a person can open offline.
enum ReportFile {
    static func isHTML(_ path: String) -> Bool {
        path.lowercased().hasSuffix(".html") || path.lowercased().hasSuffix(".htm")
    }

    static func write(_ report: BuildReport, to path: String) throws(BuildError) {
        let bytes = isHTML(path) ? Array(ReportHTML.render(report).utf8) : [UInt8](report.json())
        do {
            try AtomicFile.makeDirectory(AtomicFile.folder(of: path))
            try AtomicFile.write(bytes, to: path, durable: false)
        } catch {
            throw BuildError(.failed, "cannot write the report: \(error.description)")
        }
    }
}
