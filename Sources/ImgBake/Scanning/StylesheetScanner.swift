/// Finds image references in the site's `.css` files: `url()` and `image-set()` candidates. A relative
/// URL in a stylesheet means a file next to the stylesheet, not next to the page that uses it (as
/// browsers resolve it), so it resolves against the stylesheet's own folder.
public enum StylesheetScanner {
    public static func scan(_ file: SourceFile, settings: ScanSettings = ScanSettings()) -> PageScan {
        let resolver = ReferenceResolver(settings: settings, pagePath: file.path)
        var diagnostics: [Diagnostic] = []
        var outputs: [OutputUse] = []
        let references = CSSScanner.references(in: file.bytes, .text(at: 0), file: file) { written, offset in
            resolver.image(written, at: file.location(ofByte: offset), imageExtensionRequired: true, diagnostics: &diagnostics,
                           outputs: &outputs)
        }
        var scan = PageScan(file: file, references: references, diagnostics: diagnostics)
        scan.outputs = outputs
        return scan
    }
}
