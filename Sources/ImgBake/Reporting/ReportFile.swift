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
            throw BuildError(error)
        }
    }
}

extension BuildReport {
    /// Writes the report to `path` (JSON, or the page for `.html`), atomically, creating its folder; a
    /// failure names the file and the system's reason once.
    public func write(to path: String) throws(BuildError) {
        try ReportFile.write(self, to: path)
    }
}
