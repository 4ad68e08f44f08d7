import ImgBakeTemplates
import Mustache

/// `--report FILE.html`: the JSON report as one self-contained page a person can open offline —
/// failures first, then every image with a thumbnail (embedded) and its sizes before and after. The
/// page is `Templates/report.mustache`; Mustache escapes every value.
public enum ReportHTML {
    private static let template: MustacheTemplate = {
        // The template is part of the binary and checked by the tests: failing to parse it is a bug.
        do { return try MustacheTemplate(string: DefaultTemplates.report) } catch { fatalError("report.mustache: \(error)") }
    }()

    public static func render(_ report: BuildReport) -> String {
        template.render(context(report))
    }

    static func context(_ report: BuildReport) -> [String: Any] {
        let t = report.totals
        let problems = report.references.filter { $0.outcome == .failed || $0.outcome == .skipped }
        let images = report.images.sorted { ($0.outcome == .failed ? 0 : 1, $0.url) < ($1.outcome == .failed ? 0 : 1, $1.url) }
        return [
            "site": report.site, "output": report.output, "imgbake": report.imgbake, "generatedAt": report.generatedAt,
            "seconds": String(format2: report.seconds), "check": report.check,
            "totals": [
                "pages": t.pages, "pagesRewritten": t.pagesRewritten, "pagesUnchanged": t.pagesUnchanged,
                "references": t.references, "referencesLocalised": t.referencesLocalised, "images": t.images,
                "imagesCached": t.imagesCached, "imagesDownloaded": t.imagesDownloaded,
                "imagesRevalidated": t.imagesRevalidated, "imagesFailed": t.imagesFailed, "requests": t.requests,
            ] as [String: Any],
            "failedClass": t.imagesFailed > 0 ? "failed" : "ok",
            "bytesDownloaded": ByteCount.describe(t.bytesDownloaded),
            "bytesBefore": ByteCount.describe(t.bytesBefore), "bytesAfter": ByteCount.describe(t.bytesAfter),
            "problemCount": problems.count, "hasProblems": !problems.isEmpty,
            "problems": problems.map { r -> [String: Any] in
                ["file": r.file, "line": r.line, "column": r.column, "url": r.url, "why": r.reason ?? r.outcome.rawValue]
            },
            "hasHosts": !report.hosts.isEmpty,
            "hosts": report.hosts.map { h -> [String: Any] in
                ["host": h.host, "requests": h.requests, "bytes": ByteCount.describe(h.bytes),
                 "seconds": String(format2: h.seconds), "failures": h.failures]
            },
            "imageCount": images.count,
            "images": images.map { image -> [String: Any] in
                var card: [String: Any] = [
                    "url": image.url, "outcome": image.outcome.rawValue, "failed": image.outcome == .failed,
                    "reason": image.reason ?? "", "format": image.format ?? "", "width": image.width ?? 0,
                    "height": image.height ?? 0, "before": ByteCount.describe(image.bytesBefore ?? 0),
                    "after": ByteCount.describe(image.bytesAfter ?? 0),
                    "files": image.files.enumerated().map { index, file -> [String: Any] in
                        ["name": file.name, "bytes": ByteCount.describe(file.bytes), "last": index == image.files.count - 1]
                    },
                ]
                if let thumbnail = image.thumbnail { card["thumbnail"] = thumbnail }
                return card
            },
        ]
    }
}
