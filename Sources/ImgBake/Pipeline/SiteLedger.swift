/// What building one page left: its state, what it says, and what it put in the output.
struct BuiltPage: Sendable {
    var state: PageState
    var diagnostics: [Diagnostic] = []
    /// `--check`: what would stay remote, and the files the page names that do not exist.
    var remaining: [Diagnostic] = []
    /// For the report: the page's references, with how each image resolved.
    var report: ReportPage?
    var placed: [OutputPath: PlacedFile] = [:]
    /// The image files the page uses, with the blob and image each came from.
    var outputs: [OutputRecord] = []
    var files = ImageFilesWritten()
    /// Read and scanned (not an unreadable page).
    var scanned = false
    /// Read, and found as its last build left it: not scanned.
    var unchanged = false
    var references = 0
    var localised = 0
    var written = false
}

/// What a build did to the site, page by page as the stream hands them in, then for the rest of the
/// site: the state every page is left in, the files placed, what to say. Names, keys and stamps, not
/// bytes: this is what is kept for the whole site.
struct SiteLedger: Sendable {
    /// One per page of the site once the site is complete (`completeSite`), in the order they came.
    var states: [PageState] = []
    /// How many of `states`, from the first, the stream recorded already.
    var recorded = 0
    /// Output paths placed by this build.
    var placed: [OutputPath: PlacedFile] = [:]
    /// Of `placed`, those the stream has not recorded yet.
    private var unrecordedPlaced: [OutputPath: PlacedFile] = [:]
    /// Image files whose origin is recorded this build (once each).
    var recordedOutputs: Set<String> = []
    /// Image files pages named this build, there or recorded as placed before they were written.
    var namedFiles: Set<String> = []
    var diagnostics: [Diagnostic] = []
    var remaining: [Diagnostic] = []
    var report: ReportBuilder?
    var pagesScanned = 0
    /// Pages read only to find them as their last build left them (their stamp had changed).
    var pagesUnchanged = 0
    var pagesWritten = 0
    var references = 0
    var referencesLocalised = 0
    var filesWritten = 0
    /// Image files pages named that were missing, written again.
    var filesWrittenAgain = 0
    /// With `--out` and `output.originals = "referenced"`: the site's image files nothing mentions,
    /// kept out of the output.
    var leftOut: Set<String> = []

    init(report: ReportBuilder? = nil, imagesDirectory: String = "") {
        self.report = report
        self.imagesDirectory = imagesDirectory
    }

    /// The image names and keys of the pages' states share their storage: a site's pages use a few
    /// hundred images between them, and the states of every page are kept until the clean-up.
    private var strings = Interner()

    /// A page from the stream; returns the image files it uses whose origin is not recorded yet.
    mutating func add(_ page: BuiltPage) -> [OutputRecord] {
        var state = page.state
        state.images = state.images.map { strings.intern($0) }
        state.keys = state.keys.map { OriginalKey(strings.intern($0.string)) }
        state.mentions = state.mentions.map { strings.intern($0) }
        state.fingerprint = strings.intern(state.fingerprint)
        states.append(state)
        placed.merge(page.placed) { $1 }
        unrecordedPlaced.merge(page.placed) { $1 }
        diagnostics += page.diagnostics + page.files.notes.map { Diagnostic(.note, $0) }
        remaining += page.remaining
        if let entries = page.report { report?.add(entries) }
        if page.scanned { pagesScanned += 1 }
        if page.unchanged {
            pagesUnchanged += 1
            report?.add(unchanged: page.state)
        }
        if page.written { pagesWritten += 1 }
        references += page.references
        referencesLocalised += page.localised
        filesWritten += page.files.written
        filesWrittenAgain += page.files.again
        for name in page.files.placed {
            placed[imagePath(name)] = .image
            unrecordedPlaced[imagePath(name)] = .image
        }
        let new = page.outputs.filter { !recordedOutputs.contains($0.name) }
        recordedOutputs.formUnion(new.map(\.name))
        return new
    }

    /// The images folder's name: placed image files are recorded by their path under the output root.
    let imagesDirectory: String

    func imagePath(_ name: String) -> OutputPath { imagesDirectory + "/" + name }

    /// The states and placed files the stream handed in since the last time, to record; the states'
    /// references are then let go (recorded with them; a large site's states are mostly those).
    mutating func takeUnrecorded() -> (states: [PageState], placed: [OutputPath: PlacedFile]) {
        let batch = Array(states[recorded...])
        for index in states.indices[recorded...] { states[index].references = nil }
        recorded = states.count
        defer { unrecordedPlaced = [:] }
        return (batch, unrecordedPlaced)
    }
}
