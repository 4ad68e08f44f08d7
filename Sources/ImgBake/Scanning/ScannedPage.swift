/// A page read and scanned this build. Its bytes are not kept: pages are read again to be rewritten
/// (and must not have changed in between), so memory does not grow with the site.
struct ScannedPage: Sendable {
    var scan: PageScan
    var hash: String
    var stamp: FileStamp
    /// Files of the images folder the page already refers to (localised by an earlier build).
    var ownImages: Set<String>
}
