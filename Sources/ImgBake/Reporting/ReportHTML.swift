/// `--report FILE.html`: the JSON report as one self-contained page a person can open offline —
/// failures first, then every image with a thumbnail (embedded) and its sizes before and after.
public enum ReportHTML {
    public static func render(_ report: BuildReport) -> String {
        let t = report.totals
        var html = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>imgbake report</title>
        <style>
        body{font:15px/1.45 system-ui,sans-serif;margin:2rem;color:#222;max-width:72rem}
        h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
        table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
        .failed{color:#a40000}.ok{color:#276b27}.num{text-align:right;font-variant-numeric:tabular-nums}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:1rem}
        .card{border:1px solid #ddd;border-radius:6px;padding:.6rem;overflow-wrap:anywhere}
        .card img{display:block;max-width:100%;height:auto;margin-bottom:.4rem;background:#eee}
        code{font-size:.85em}
        </style></head><body>
        <h1>imgbake report</h1>
        <p>\(e(report.site)) → \(e(report.output)) · imgbake \(e(report.imgbake)) · \(e(report.generatedAt)) · \(format(report.seconds)) s\(report.check ? " · check only" : "")</p>
        <table><tr><th>pages</th><th>references</th><th>images</th><th>downloads</th><th>bytes before → after</th></tr>
        <tr><td>\(t.pages) (\(t.pagesRewritten) rewritten, \(t.pagesUnchanged) unchanged)</td>
        <td>\(t.referencesLocalised) of \(t.references) localised</td>
        <td>\(t.images): \(t.imagesCached) cached, \(t.imagesDownloaded) downloaded, \(t.imagesRevalidated) revalidated, <span class="\(t.imagesFailed > 0 ? "failed" : "ok")">\(t.imagesFailed) failed</span></td>
        <td>\(t.requests) requests, \(ByteCount.describe(t.bytesDownloaded))</td>
        <td>\(ByteCount.describe(t.bytesBefore)) → \(ByteCount.describe(t.bytesAfter))</td></tr></table>

        """
        let problems = report.references.filter { $0.outcome == "failed" || $0.outcome == "skipped" }
        html += "<h2>Failures and skipped references (\(problems.count))</h2>\n"
        if problems.isEmpty {
            html += "<p class=\"ok\">None: every reference was localised.</p>\n"
        } else {
            html += "<table><tr><th>where</th><th>URL</th><th>why</th></tr>\n"
            for reference in problems {
                html += "<tr><td><code>\(e(reference.file)):\(reference.line):\(reference.column)</code></td><td><code>\(e(reference.url))</code></td><td class=\"failed\">\(e(reference.reason ?? reference.outcome))</td></tr>\n"
            }
            html += "</table>\n"
        }
        if !report.hosts.isEmpty {
            html += "<h2>Hosts</h2>\n<table><tr><th>host</th><th class=\"num\">requests</th><th class=\"num\">bytes</th><th class=\"num\">transfer time</th><th class=\"num\">failures</th></tr>\n"
            for host in report.hosts {
                html += "<tr><td>\(e(host.host))</td><td class=\"num\">\(host.requests)</td><td class=\"num\">\(ByteCount.describe(host.bytes))</td><td class=\"num\">\(format(host.seconds)) s</td><td class=\"num\">\(host.failures)</td></tr>\n"
            }
            html += "</table>\n"
        }
        html += "<h2>Images (\(report.images.count))</h2>\n<div class=\"grid\">\n"
        for image in report.images.sorted(by: { ($0.outcome == "failed" ? 0 : 1, $0.url) < ($1.outcome == "failed" ? 0 : 1, $1.url) }) {
            html += "<div class=\"card\">"
            if let thumbnail = image.thumbnail { html += "<img src=\"\(e(thumbnail))\" alt=\"\">" }
            html += "<code>\(e(image.url))</code><br>"
            if image.outcome == "failed" {
                html += "<span class=\"failed\">failed: \(e(image.reason ?? ""))</span>"
            } else {
                html += "<span class=\"ok\">\(e(image.outcome))</span> · \(e(image.format ?? "")) \(image.width ?? 0)×\(image.height ?? 0)<br>"
                html += "\(ByteCount.describe(image.bytesBefore ?? 0)) → \(ByteCount.describe(image.bytesAfter ?? 0))<br>"
                html += image.files.map { "<code>\(e($0.name))</code> \(ByteCount.describe($0.bytes))" }.joined(separator: "<br>")
            }
            html += "</div>\n"
        }
        html += "</div>\n</body></html>\n"
        return html
    }

    private static func e(_ text: String) -> String { HTMLEntities.escapeAttribute(text) }

    private static func format(_ seconds: Double) -> String { String(format2: seconds) }
}
