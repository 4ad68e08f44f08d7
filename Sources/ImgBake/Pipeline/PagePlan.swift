/// What becomes of one page, decided from what is known of it and nothing else: its source and model,
/// its last state, how its images resolved, and where the build writes (`PagePlan.make`). No disk, no
/// cache, no clock: the same inputs give the same plan, whoever asks for it. The
/// journal carries a plan out (`BuildJournal`).
struct PagePlan: Sendable {
    /// What the page comes to.
    enum Outcome: Sendable, Equatable {
        /// Only its file was touched: left as it is, its state given the new stamp.
        case unchanged
        /// Its references localised: written (in place over its source, or into the output).
        case rewritten
        /// Nothing to localise: its source as it is (copied with `--out`; in place, written back over an
        /// earlier rewrite when there is one).
        case asItIs
        /// Written as a build for another output made it, from the copy kept of it.
        case reused
        /// With `--out`, its output lost: written again from the copy the cache kept of it as this
        /// output's last build wrote it (its files too), not read, scanned or rewritten.
        case restored
        /// Read for what it uses, not written.
        case notWritten(NotWritten)
        /// Too deep to parse: left as it is (copied with `--out`), every output name in it kept in use.
        case unparsed
        /// Could not be read (or what was gathered does not fit it): left as it is, its last state kept
        /// but unsettled.
        case failed(String)
    }

    enum NotWritten: Sendable, Equatable {
        /// In place, a page reached through a symbolic link (writing it would replace the link).
        case link
        /// The target writes no page (`--check`, `--shard`).
        case target
    }

    /// The page file as the plan leaves it, when it is written or copied.
    struct Write: Sendable, Equatable {
        var bytes: [UInt8]
        var hash: BlobID
        /// The bytes are the source's: with `--out`, a copy (with the source's stamp) rather than a write.
        var isSource: Bool
    }

    /// What the journal writes for the page, in its order: image files, missing files, the kept copy,
    /// the page.
    struct Effects: Sendable {
        /// The page file as it is to be: nil when nothing is written.
        var write: Write?
        /// A copy for the cache to keep (`PageCopy`): in place the source of a page written over it, with
        /// `--out` the page as written. The planned state names it; the journal keeps it, or takes it out
        /// of the state when the cache cannot.
        var keep: Write?
        /// The image files the rewrite put in: written before the page, so that it never points at a file
        /// that is not there yet.
        var imageFiles: [OutputImage] = []
        /// The files the page uses that the rewrite does not make and that were missing when it was
        /// gathered, each with what it can be written again from: the journal writes those still missing
        /// at the page's turn (an earlier page may have written one since), and warns of those it cannot.
        var missing: [MissingUse] = []
    }

    /// What the build says of the page.
    struct Notes: Sendable {
        var diagnostics: [Diagnostic] = []
        /// `--check`: what would stay remote, and the files the page names that do not exist.
        var remaining: [Diagnostic] = []
        /// For the report: the page's references, with their images' keys.
        var report: ReportPage?
        /// The image files the page uses, with the blob and image each came from.
        var outputs: [OutputRecord] = []
        /// References on the page, and of them the ones localised.
        var references = 0
        var localised = 0
    }

    let path: String
    let outcome: Outcome
    /// The state the page is in once the plan is carried out.
    let state: PageState
    let effects: Effects
    let notes: Notes
    /// The site file as the page was read: what the journal compares before it writes over it.
    let read: SiteFileRead?
    /// With `--out`: the output page as the last build wrote it, when it is the page planned now (the same
    /// kept copy): not written again while it is still there as written.
    let writtenBefore: FileStamp?
    /// The state the page keeps when the plan cannot be carried out (its file changed while the build
    /// ran, a file it needs damaged): its last state, unsettled.
    let unsettled: PageState

    var write: Write? { effects.write }
    var keep: Write? { effects.keep }
    var imageFiles: [OutputImage] { effects.imageFiles }
    var missing: [MissingUse] { effects.missing }
    var diagnostics: [Diagnostic] { notes.diagnostics }
    var remaining: [Diagnostic] { notes.remaining }
    var report: ReportPage? { notes.report }
    var outputs: [OutputRecord] { notes.outputs }
    var references: Int { notes.references }
    var localised: Int { notes.localised }

    /// Whether the plan writes anything: a page, or image files.
    var writes: Bool { write != nil || !imageFiles.isEmpty || !missing.isEmpty }
}

/// The site file as a page was read.
struct SiteFileRead: Sendable, Equatable {
    var stamp: FileStamp
    /// Its SHA-256, when its bytes were read (not when the page was read from the copy the cache kept).
    var hash: BlobID?
    /// In place, when the page was read from its kept source: the rewrites that stand for that source
    /// now. A build stopped after recording its intent and before writing leaves one of them in the site.
    var standing: [BlobID]
}

/// What is known of a page when it is planned: gathered by the stream (`PageStream.gather`), from the
/// site, the cache and the image demand.
struct PageInput: Sendable {
    var page: PageToBuild
    /// The source, or why it could not be read.
    var source: Result<LoadedPage, PageFile.ReadError>
    /// What was gathered beyond the source.
    var gathered = Gathered.source
    /// How its images resolved (with the bytes of files small enough to inline).
    var images = PageImages()
    /// The files the page names that are not in the images folder: what each can be written again from.
    var missing: [String: MissingFile] = [:]

    /// What the gathering found the page to need, besides its source.
    enum Gathered: Sendable {
        /// Nothing more: the source is as its last build left it (only its stamp changed).
        case source
        /// A copy a build for another output kept, of the same source, with the same settings and images
        /// still as they were: the page may be written from it.
        case builtElsewhere(PageElsewhere)
        /// With `--out`, the copy this output's last build kept of the page, whose output is gone, with
        /// every file it names there or writable from the cache.
        case lostOutput(PageElsewhere)
        /// Its one scan, with its images.
        case scanned(PageModel)
        /// Nested too deep to parse.
        case tooDeep
    }
}

/// A page as a build for another output left it, with the copy it kept.
struct PageElsewhere: Sendable {
    var state: PageState
    var bytes: [UInt8]
    var hash: BlobID

    /// Whether `other` was built from the same source (`sourceHash`) with the same settings, whole, so
    /// that its copy is what this build would write.
    static func matches(_ other: PageState, fingerprint: String, sourceHash: BlobID) -> Bool {
        other.fingerprint == fingerprint && other.sourceHash == sourceHash && other.complete && other.imagesKnown
    }
}

/// A file a page names that is missing from the images folder: writable from the cache, or not.
enum MissingFile: Sendable, Equatable {
    case writable(OutputImage)
    case unavailable(String)

    var isWritable: Bool { if case .writable = self { true } else { false } }
}

/// A file the page uses that was missing, where the page names it.
struct MissingUse: Sendable, Equatable {
    var use: OutputUse
    var file: MissingFile
}

/// What planning needs of the build, the same for every page.
struct PlanSettings: Sendable {
    var target: OutputTarget
    var fingerprint: String
    /// Every way a page can write the start of a reference to an output (`ScanSettings.ownPrefixes`).
    var publicPaths: [String]
    /// `public_path` as references to the images folder start.
    var ownPublicPath: String
    var reports: Bool
    /// How pages are rendered.
    var rendering: PageRendering.Settings
    /// With `--out` and `output.originals = "referenced"`: the site's image files, to see which a page mentions.
    var siteImageNames: Set<String>
}

/// A page's source, read once: the site file, or in place the source the cache kept when the site file
/// is imgbake's rewrite of it.
struct LoadedPage: Sendable {
    var path: String
    /// The source's bytes and their SHA-256.
    var bytes: [UInt8]
    var hash: BlobID
    /// In place, when the site file is imgbake's rewrite: the kept source these bytes are.
    var kept: BlobID?
    /// The site file as it was read: its stamp, and the hash of its bytes when known.
    var siteStamp: FileStamp
    var siteHash: BlobID?
    var notes: [Diagnostic] = []

    /// The site file holds what the last build left there: the same source, or imgbake's rewrite of it.
    func isAsBuilt(_ previous: PageState) -> Bool {
        guard let siteHash else { return false }
        return previous.written.isEmpty ? siteHash == previous.sourceHash : previous.written.contains(siteHash)
    }
}

extension PagePlan {
    /// Only touched since its last build (its stamp changed, its bytes did not): nothing more of it is
    /// needed to plan it.
    static func isUnchanged(_ page: PageToBuild, _ loaded: LoadedPage) -> Bool {
        guard page.touched, let previous = page.previous else { return false }
        return loaded.isAsBuilt(previous)
    }

    /// The plan of one page: the pure function of the page stage.
    static func make(_ input: PageInput, _ settings: PlanSettings) -> PagePlan {
        var maker = Maker(input: input, settings: settings)
        return maker.plan()
    }

    /// The plan made step by step; each step is a case of what a page can come to.
    private struct Maker {
        let input: PageInput
        let settings: PlanSettings
        var page: PageToBuild { input.page }
        var target: OutputTarget { settings.target }

        mutating func plan() -> PagePlan {
            let loaded: LoadedPage
            switch input.source {
            case .failure(let problem): return failed(problem.diagnostic)
            case .success(let source): loaded = source
            }
            if let unchanged = unchanged(loaded) { return unchanged }
            switch input.gathered {
            case .scanned(let model): return built(loaded, model)
            case .tooDeep: return unparsed(loaded)
            case .lostOutput(let copy):
                if let restored = reused(loaded, copy, as: .restored) { return restored }
                return failed(Diagnostic(.warning, "the copy the cache kept of this page does not fit it; left for the next build",
                                         at: SourceLocation(file: page.path, line: 1, column: 1)))
            case .builtElsewhere(let other):
                if let reused = reused(loaded, other, as: .reused) { return reused }
                return failed(Diagnostic(.warning, "the copy another build kept of this page does not fit it; left for the next build",
                                         at: SourceLocation(file: page.path, line: 1, column: 1)))
            case .source:
                return failed(Diagnostic(.warning, "not scanned; left for the next build", at: SourceLocation(file: page.path, line: 1, column: 1)))
            }
        }

        /// A plan of `outcome` with what every plan has.
        func plan(_ outcome: Outcome, state: PageState, _ effects: Effects = Effects(), _ notes: Notes = Notes()) -> PagePlan {
            let previous = page.previous
            let writtenBefore = previous.flatMap { previous in previous.kept != nil && previous.kept == state.kept ? previous.output : nil }
            return PagePlan(path: page.path, outcome: outcome, state: state, effects: effects, notes: notes, read: read,
                            writtenBefore: writtenBefore, unsettled: .unsettled(page.path, previous: previous, fingerprint: settings.fingerprint))
        }

        /// The site file as it was read, for the journal.
        var read: SiteFileRead? {
            guard case .success(let loaded) = input.source else { return nil }
            return SiteFileRead(stamp: loaded.siteStamp, hash: loaded.siteHash,
                                standing: loaded.kept != nil ? page.previous?.written ?? [] : [])
        }

        /// Could not be read: left as it is, its last state kept but unsettled.
        func failed(_ diagnostic: Diagnostic) -> PagePlan {
            plan(.failed(diagnostic.message), state: .unsettled(page.path, previous: page.previous, fingerprint: settings.fingerprint),
                 Effects(), Notes(diagnostics: [diagnostic]))
        }

        /// Only touched since its last build (its stamp changed, its bytes did not): its last state, with
        /// the new stamp.
        func unchanged(_ loaded: LoadedPage) -> PagePlan? {
            guard PagePlan.isUnchanged(page, loaded), let previous = page.previous else { return nil }
            var state = previous
            state.stamp = loaded.siteStamp
            if case .rewritten(let source, let rewrites) = previous.copy, !rewrites.isEmpty, let hash = loaded.siteHash {
                state.copy = .rewritten(source: source, rewrites: [hash])
            }
            return plan(.unchanged, state: state)
        }

        /// Built for another output (`.reused`), or for this one before its output was lost
        /// (`.restored`), from the same source, with the same settings and originals: written from the
        /// copy that build kept, not scanned or rewritten (its image files come from the cache).
        func reused(_ loaded: LoadedPage, _ other: PageElsewhere, as outcome: Outcome) -> PagePlan? {
            guard page.writable, target.writesSite,
                  PageElsewhere.matches(other.state, fingerprint: settings.fingerprint, sourceHash: loaded.hash) else { return nil }
            let start = SourceLocation(file: page.path, line: 1, column: 1)
            let missing = missingUses(other.state.images.map { OutputUse(name: $0, location: start) }, made: [])
            // Every file it names is there, or can be written from the cache.
            guard missing.allSatisfy(\.file.isWritable) else { return nil }
            let write = Write(bytes: other.bytes, hash: other.hash, isSource: false)
            let (copy, keep) = target.rewritesSources ? copyOverSource(loaded, write) : (.written(kept: other.hash, output: nil), nil)
            // Its state is that build's (the same source, settings and images) but for what is this output's.
            var state = other.state
            state.stamp = loaded.siteStamp
            state.copy = copy
            state.mentions = mentions(other.bytes)
            return plan(outcome, state: state, Effects(write: write, keep: keep, missing: missing))
        }

        /// In place, a page written over its source: the source is kept, so that the page can be built
        /// again from it when an image changes, and the rewrite stands for it.
        func copyOverSource(_ loaded: LoadedPage, _ write: Write) -> (PageCopy, Write?) {
            (.rewritten(source: loaded.hash, rewrites: [write.hash]),
             loaded.kept == nil ? Write(bytes: loaded.bytes, hash: loaded.hash, isSource: true) : nil)
        }

        /// Too deep to parse: left as it is; the files it keeps in use are every output name in its bytes
        /// after the images folder's name, however the URL is written. With `--out`, copied.
        func unparsed(_ loaded: LoadedPage) -> PagePlan {
            var state = PageState.unsettled(page.path, previous: page.previous, fingerprint: settings.fingerprint)
            state.imagesKnown = true
            state.images = OwnImageReferences.unparsedUses(in: loaded.bytes, ownPrefix: settings.ownPublicPath,
                                                           publicPaths: settings.publicPaths).sorted()
            let diagnostic = PageFile.tooDeep(page.path, loaded.bytes).diagnostic
            let write = target.mirrorsSite ? Write(bytes: loaded.bytes, hash: loaded.hash, isSource: true) : nil
            return plan(.unparsed, state: state, Effects(write: write), Notes(diagnostics: [diagnostic]))
        }

        /// Read, scanned, given its images: rewritten (or left as it is when nothing changes); read only,
        /// when the page is not to be written.
        func built(_ loaded: LoadedPage, _ model: PageModel) -> PagePlan {
            let images = input.images
            guard target.rewritesPages, page.writable else {
                let priority = PageRendering.priority(model, images, settings.rendering)
                return readOnly(model, Notes(diagnostics: loaded.notes + PageRendering.notes(model, images),
                                             report: settings.reports ? Self.report(model, images, priority) : nil,
                                             references: model.scan.references.count))
            }
            let rendering = PageRendering.render(model, images, settings.rendering)
            let rewrite = rendering.rewrite
            var notes = Notes(diagnostics: loaded.notes + rendering.diagnostics,
                              report: settings.reports ? Self.report(model, images, rendering.priority) : nil,
                              references: rendering.references)
            let write = rendering.bytes.map { bytes in
                let hash = BlobID(of: bytes)
                return Write(bytes: bytes, hash: hash, isSource: hash == loaded.hash)
            } ?? Write(bytes: loaded.bytes, hash: loaded.hash, isSource: true)
            let uses = model.uses(rewrite, publicPaths: settings.publicPaths)
            let made = rendering.files
            notes.outputs = outputRecords(made, images)
            notes.localised = rewrite.localised
            let complete = rendering.complete
            let (copy, keep): (PageCopy, Write?) = if target.rewritesSources && !write.isSource {
                copyOverSource(loaded, write)
            } else if target.keepsWrittenPages && rewrite.bytes != nil {
                // The page as written is kept, so that a lost output is written again from the cache.
                (.written(kept: write.hash, output: nil), write)
            } else {
                (.none, nil)
            }
            let state = PageState(path: page.path, fingerprint: settings.fingerprint, sourceHash: loaded.hash, stamp: loaded.siteStamp,
                                  copy: copy, complete: complete, keys: Array(Set(images.keys.values)).sorted(), sources: images.sources,
                                  images: uses.map(\.name), imagesKnown: true, mentions: mentions(write.bytes),
                                  references: model.recordedReferences)
            let effects = Effects(write: write, keep: keep, imageFiles: made, missing: missingUses(uses, made: Set(made.map(\.fileName))))
            return plan(rewrite.bytes == nil ? .asItIs : .rewritten, state: state, effects, notes)
        }

        /// A page that is read and not written: in place one reached through a symbolic link (what it
        /// uses counts), or any page of a target that writes none (`--check` lists what would stay remote).
        func readOnly(_ model: PageModel, _ notes: Notes) -> PagePlan {
            var state = PageState.unsettled(page.path, previous: page.previous, fingerprint: settings.fingerprint)
            var notes = notes
            let why: NotWritten = target.writesSite ? .link : .target
            if why == .link {
                state.images = model.uses(nil, publicPaths: settings.publicPaths).map(\.name)
                state.imagesKnown = true
            }
            if target.listsRemaining { notes.remaining = remaining(model, input.images) }
            return plan(.notWritten(why), state: state, Effects(), notes)
        }

        /// Of the files the page uses that the rewrite does not make, those that were missing.
        func missingUses(_ uses: [OutputUse], made: Set<String>) -> [MissingUse] {
            uses.compactMap { use in
                guard !made.contains(use.name), let file = input.missing[use.name] else { return nil }
                return MissingUse(use: use, file: file)
            }
        }

        func outputRecords(_ made: [OutputImage], _ images: PageImages) -> [OutputRecord] {
            var urls: [OriginalKey: String] = [:]
            for case .resolved(let image, _) in images.resolutions.values { urls[image.key] = image.url.serialized }
            return made.compactMap { output in
                urls[output.key].map { OutputRecord(name: output.fileName, blob: output.blob, key: output.key, url: $0) }
            }
        }

        /// With `--out` and `output.originals = "referenced"`: the site's image files the page mentions.
        func mentions(_ bytes: [UInt8]) -> [String] {
            guard !settings.siteImageNames.isEmpty else { return [] }
            return Originals.mentioned(in: bytes, among: settings.siteImageNames).sorted()
        }

        /// `--check`: every reference that would stay remote, with why, and every file the page names that
        /// is not there (`PageModel.uses`, as the clean-up counts them).
        func remaining(_ model: PageModel, _ images: PageImages) -> [Diagnostic] {
            var remaining: [Diagnostic] = []
            for use in model.uses(nil, publicPaths: settings.publicPaths) where input.missing[use.name] != nil {
                remaining.append(Diagnostic(.error, "refers to \(settings.ownPublicPath)\(use.name), which does not exist", at: use.location))
            }
            for reference in model.scan.references {
                if let why = model.leftAlone {
                    remaining.append(Diagnostic(.error, "\(reference.source): stays remote (\(why))", at: reference.location))
                } else if images.image(for: reference.source) == nil {
                    let why = images.failure(for: reference.source)?.reason ?? "not resolved"
                    remaining.append(Diagnostic(.error, "\(reference.source): \(why)", at: reference.location))
                }
            }
            // What would stay remote; a missing alt is not that (build.require_alt = "error" fails a build on it).
            for diagnostic in model.diagnostics where diagnostic.severity == .warning && diagnostic.code != .missingAlt {
                remaining.append(Diagnostic(.error, diagnostic.message, at: diagnostic.location))
            }
            return remaining
        }

        /// The page's references for the report, each with its image's key (how it resolved is filled in
        /// when every image is known) and the reason it was taken for the likely LCP image.
        static func report(_ model: PageModel, _ images: PageImages, _ priority: LoadingPriority) -> ReportPage {
            var page = ReportPage()
            for (index, reference) in model.scan.references.enumerated() {
                var entry = BuildReport.Reference(file: reference.location.file, line: reference.location.line, column: reference.location.column,
                                                  kind: reference.kind.rawValue, url: reference.source.description, outcome: .skipped,
                                                  reason: model.leftAlone)
                if priority.candidate?.index == index { entry.lcp = priority.candidate?.reason }
                page.references.append(entry)
                page.keys.append(model.leftAlone == nil && images.resolutions[reference.source] != nil ? images.keys[reference.source] : nil)
            }
            return page
        }
    }
}
