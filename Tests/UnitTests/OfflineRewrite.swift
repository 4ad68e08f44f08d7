import CommonMark
@testable import ImgBake
import ImgBakeTestSupport

/// Rewrites a scanned page without network or cache: every remote URL resolves to a made-up PNG
/// (one variant, 100 px wide, its blob named after the URL), so the local path each URL must get is
/// known in advance.
struct OfflineRewrite {
    var output = OutputSettings()
    let images = ImageSettings()

    func image(_ url: ImageSource) -> ResolvedImage {
        let blob = BlobID(of: Array(url.serialized.utf8))
        let spec = VariantSpec(width: 100, format: .png, quality: 0, effort: 0, animated: false, keepMetadata: [])
        let variant = StoredVariant(spec: spec, key: spec.key(original: blob), blob: blob, format: .png,
                                    width: 100, height: 100, bytes: 1)
        return ResolvedImage(key: OriginalKey(url.serialized), url: url, source: SourceInfo(format: .png, width: 100, height: 100, pages: 1),
                             originalBlob: blob, originalBytes: 1, variants: [variant], origin: .cached, encoded: 0,
                             credits: Credits(), placeholder: nil)
    }

    /// The path a page must now use for `url`.
    func localPath(_ url: ImageSource) -> String {
        let image = image(url)
        return OutputNaming(publicPath: output.publicPath).url(image.variants[0], of: image)
    }

    func rewrite(_ scan: PageScan) throws -> PageRewrite {
        let rewriter = PageRewriter(output: output, images: images, renderer: try MarkupRenderer())
        let plan = VariantPlan(settings: images)
        let requests = scan.references.map { _ in plan.defaultRequest }
        let priority = LoadingPriority.of(scan.references, requests: requests, output: output, plan: plan, images: image)
        return rewriter.rewrite(scan, requests: requests, images: image, priority: priority)
    }

    /// A Markdown page scanned, rewritten and rendered with cmark-gfm: what it renders to after the
    /// rewrite (`actual`), and what it must (`expected`: the original, its images mapped to local paths).
    func markdown(_ bytes: [UInt8], path: String = "post.md") throws
        -> (scan: PageScan, rewrite: PageRewrite, expected: String, actual: String) {
        let scan = MarkdownScanner.scan(SourceFile(path: path, kind: .markdown, bytes: bytes), settings: .remoteOnly)
        let rewrite = try rewrite(scan)
        return (scan, rewrite, MarkdownParser.html(bytes) { RemoteURL.resolve($0).map { localPath(.remote($0)) } },
                MarkdownParser.html(rewrite.bytes ?? bytes))
    }

    /// The page's bytes with every reference's range replaced by its local path (or, for a reference
    /// image given its own destination, by `](path "title")`): what a one-for-one rewrite must
    /// produce, every other byte kept.
    func splicedByHand(_ scan: PageScan) throws -> [UInt8] {
        try Splicer.apply(scan.references.map { reference in
            if case .markdownInlinedReference(let title) = reference.syntax {
                return Edit(reference.range, ReplacementText.markdownInlinedReference(localPath(reference.source), title: title))
            }
            return Edit(reference.range, localPath(reference.source))
        }, to: scan.file.bytes)
    }
}

extension MarkdownParser {
    static func parse(_ bytes: [UInt8]) -> [MarkdownNode] { bytes.withUnsafeBytes { parse($0) } }
    static func html(_ bytes: [UInt8], imageURL: (String) -> String? = { _ in nil }) -> String {
        bytes.withUnsafeBytes { html($0, imageURL: imageURL) }
    }
}

extension ImageReference {
    /// The remote URL of a reference the tests know to be remote.
    var url: RemoteURL { source.remoteURL ?? RemoteURL.resolve("http://local.invalid/" + source.description)! }
}

extension ScanSettings {
    /// Remote images only (`images.local = false`): what the remote-image scanner tests are about.
    static var remoteOnly: ScanSettings {
        var settings = ScanSettings()
        settings.localImages = false
        return settings
    }
}
