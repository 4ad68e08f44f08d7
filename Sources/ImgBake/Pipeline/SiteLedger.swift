/// What a build did to the site, as the journal carried it out: the state every page is left in, the
/// files placed, what to say, and the counts. Names, keys and stamps, not bytes: this is what is kept
/// for the whole site. Only the journal writes it (`BuildJournal`); the stages after it read it.
struct SiteLedger: Sendable {
    /// One per page of the site once the site is complete, in the order the pages came.
    var states: [PageState] = []
    /// Output paths placed by this build.
    var placed: [OutputPath: PlacedFile] = [:]
    var diagnostics: [Diagnostic] = []
    /// `--check`: what would stay remote, and the files pages name that do not exist.
    var remaining: [Diagnostic] = []
    var report: ReportBuilder?
    var pages = PageTally()
    /// Image files written, by the pages and by the restoring of lost outputs.
    var files = ImageFilesWritten()
    /// With `--out` and `output.originals = "referenced"`: the site's image files nothing mentions,
    /// kept out of the output.
    var leftOut: Set<String> = []
}

/// The pages of a build by what became of them.
struct PageTally: Sendable, Equatable {
    /// Read and scanned.
    var scanned = 0
    /// Read only to find them as their last build left them (their stamp had changed).
    var unchanged = 0
    /// Written as a build for another output made them.
    var reused = 0
    /// With `--out`, written again from the cache as this output's last build made them (their output
    /// was lost); not counted as written.
    var restored = 0
    var written = 0
    var references = 0
    var localised = 0

    mutating func count(_ plan: PagePlan, written: Bool) {
        switch plan.outcome {
        case .rewritten, .asItIs, .notWritten: scanned += 1
        case .unchanged: unchanged += 1
        case .reused: reused += 1
        case .restored: restored += 1
        case .unparsed, .failed: break
        }
        if written && plan.outcome != .restored { self.written += 1 }
        references += plan.references
        localised += plan.localised
    }
}
