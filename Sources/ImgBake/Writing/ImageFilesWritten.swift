/// What writing image files did.
struct ImageFilesWritten: Sendable {
    var written = 0
    /// Files whose blob turned out missing or damaged: not written. (A page's blobs are checked before
    /// it is planned, so for a page this is a blob damaged since; for a lost output being written again,
    /// one the cache lost.)
    var damaged: Set<String> = []
    var notes: [String] = []
    /// Files written now (imgbake placed them: they may be removed when nothing uses them).
    var placed: Set<String> = []
    /// Of `placed`, files pages already named that were missing, written again.
    var again = 0

    mutating func add(_ other: ImageFilesWritten) {
        written += other.written
        damaged.formUnion(other.damaged)
        notes += other.notes
        placed.formUnion(other.placed)
        again += other.again
    }
}
