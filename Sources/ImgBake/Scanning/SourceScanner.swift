/// The one place that knows which scanner reads which kind of source file.
public enum SourceScanner {
    public static func scan(_ file: SourceFile, settings: ScanSettings = ScanSettings()) -> PageScan {
        switch file.kind {
        case .html: HTMLScanner.scan(file, settings: settings)
        case .markdown: MarkdownScanner.scan(file, settings: settings)
        case .css: StylesheetScanner.scan(file, settings: settings)
        case .feed: FeedScanner.scan(file, settings: settings)
        }
    }
}
