import Locking

/// Where a page to build is read from.
enum PageSource: Sendable, Equatable {
    /// The site file.
    case siteFile
    /// In place, the site file is imgbake's rewrite of the source the cache kept: the page is built
    /// again from that source (the site file no longer holds the original references).
    case kept(BlobID)
    /// With `--out`, its last build holds but its output is gone (a wiped `--out`, a fresh CI checkout
    /// with the cache restored): written again from the copy the cache kept of the page as written,
    /// without reading its site file, when every file it names can be had; else read from the site file.
    case lostOutput(BlobID)
}

/// A page the stream builds.
struct PageToBuild: Sendable {
    var path: String
    var previous: PageState?
    var source: PageSource
    /// The site file's stamp when the site was walked.
    var stamp: FileStamp?
    /// In place, a page reached through a symbolic link is read (what it uses counts) but never
    /// written: writing it would replace the link with a file, and the page it points at is in the site
    /// and built where it is.
    var writable = true
    /// Everything of its last build holds but the site file's stamp: unchanged if its bytes are (a
    /// generator that writes every file each time, or `touch`).
    var touched = false
}

/// Which pages a build reads, and which it leaves alone.
struct PageTriage: Sendable {
    /// What the last build of this site and output knew, by page.
    var previous: [String: PageState]
    /// Pages left alone: unchanged, built with the same settings, complete, outputs present, every
    /// source (the page's, its images') as it was.
    var unchanged: [PageState]
    /// Pages the stream reads: new, changed, or (`PageSource.lostOutput`) with their output gone.
    var toBuild: [PageToBuild]
    /// When the site's seal held: every page, left alone without even reading its state.
    var sealed: Int? = nil
    /// The originals the triage looked up: the stream's checks start from them (each key once a build).
    var sources = SourceCheck()

    var unchangedCount: Int { unchanged.count + (sealed ?? 0) }
}

extension BuildRun {
    /// Every page and other file of the site, outside the images folder and the output.
    func takeInventory() async -> SiteInventory {
        let config = plan.configuration
        var skipped = [plan.imagesFolder]
        if let out = config.outputDirectory { skipped.append(out) }
        let options = SiteInventory.Options(skipped: skipped, excluded: config.exclude, output: plan.target.separateOutput ? config.outputRoot : nil)
        return await SiteInventory.walk(config.site, options, on: services.pages)
    }

    /// Which pages to build: those whose last build no longer holds (a new or changed page, other
    /// settings, a reference that failed, an output gone, an image whose original changed or went
    /// stale), and where each is read from.
    func triage(_ inventory: SiteInventory, previous: [String: PageState], folder: ImagesFolder) async -> PageTriage {
        let pages = zip(inventory.pages, inventory.stamps).map { (path: $0, stamps: $1) }
        // A `stat` or two per page, on the page stage's threads, in slices (the folder remembers the
        // image files it saw).
        let verdicts = await pages.map(slicesOf: 256, on: services.pages) { slice in
            slice.map { page in verdict(page.path, page.stamps, previous[page.path], folder) }
        }
        var triage = PageTriage(previous: previous, unchanged: [], toBuild: [])
        var candidates: [Candidate] = []
        for (verdict, page) in zip(verdicts, pages) {
            switch verdict {
            case .build(let source):
                triage.toBuild.append(PageToBuild(path: page.path, previous: previous[page.path], source: source, stamp: page.stamps.site,
                                                  writable: plan.target.writesThroughLinks || !inventory.linkedPages.contains(page.path)))
            case .unchanged(let state), .lost(let state), .touched(let state): candidates.append(Candidate(state, verdict, page.stamps.site))
            }
        }
        await checkSources(of: candidates, into: &triage)
        triage.toBuild.sort { $0.path < $1.path }
        progress.update { $0.pagesTotal = inventory.pages.count; $0.pagesUnchanged = triage.unchanged.count }
        return triage
    }

    /// A page whose last build holds by its state, stamp and outputs, before its images are checked.
    private struct Candidate {
        var state: PageState
        var verdict: Verdict
        var stamp: FileStamp?
        init(_ state: PageState, _ verdict: Verdict, _ stamp: FileStamp?) { (self.state, self.verdict, self.stamp) = (state, verdict, stamp) }
    }

    /// Pages whose images changed or went stale are built again: their originals are revalidated and
    /// the pages rewritten with what comes back.
    private func checkSources(of candidates: [Candidate], into triage: inout PageTriage) async {
        let sources = await SourceCheck.of(Set(candidates.flatMap(\.state.keys)), self)
        triage.sources = sources
        for candidate in candidates {
            let state = candidate.state, holds = sources.holds(state.keys, state.sources)
            switch candidate.verdict {
            case .unchanged where holds: triage.unchanged.append(state)
            case .lost where holds:
                triage.toBuild.append(PageToBuild(path: state.path, previous: state, source: state.kept.map(PageSource.lostOutput) ?? .siteFile, stamp: candidate.stamp))
            case .touched:
                triage.toBuild.append(PageToBuild(path: state.path, previous: state, source: .siteFile, stamp: candidate.stamp, touched: holds))
            default:
                triage.toBuild.append(PageToBuild(path: state.path, previous: state, source: source(of: state), stamp: state.stamp))
            }
        }
    }

    private enum Verdict {
        case build(PageSource)
        /// Unchanged, with its outputs in place (its images' sources still to be checked).
        case unchanged(PageState)
        /// Unchanged, but its page or image files are gone from the output.
        case lost(PageState)
        /// Unchanged but for the site file's stamp: read, and left alone if its bytes are the same.
        case touched(PageState)
    }

    /// Whether the page's last build still holds, by its state, its file's stamp and its outputs.
    private func verdict(_ path: String, _ stamps: SiteInventory.FileStamps, _ previous: PageState?, _ folder: ImagesFolder) -> Verdict {
        guard let state = previous, let stamp = stamps.site else { return .build(.siteFile) }
        // A site file other than the build left it is read: a new source, or the same bytes touched.
        let touched = stamp != state.stamp
        guard !plan.readsEveryPage, state.fingerprint == plan.fingerprint, state.complete else { return .build(touched ? .siteFile : source(of: state)) }
        let outputsThere = folder.holdsAll(state.images)
        // A page the last build did not rewrite (nothing to localise) is a copy of its source, which
        // the mirror places whether or not it is there.
        guard plan.target.separateOutput, let written = state.output else {
            return !outputsThere ? .build(touched ? .siteFile : source(of: state)) : touched ? .touched(state) : .unchanged(state)
        }
        if outputsThere && stamps.output == written { return touched ? .touched(state) : .unchanged(state) }
        if touched { return .build(.siteFile) }
        // Restored only when the output page is as written or gone: one that is there but different
        // may be newer than this state (a build that wrote it and was killed before recording it).
        return plan.target.restoresLostOutputs && state.kept != nil && (stamps.output == written || stamps.output == nil) ? .lost(state) : .build(.siteFile)
    }

    /// In place, a page whose site file is the rewrite the last build left is built from the source the
    /// cache kept; otherwise from the site file. `--check` looks at the site as it is.
    private func source(of state: PageState) -> PageSource {
        guard plan.target.readsKeptSources, state.isRewrittenInPlace, let kept = state.kept else { return .siteFile }
        return .kept(kept)
    }
}

/// Whether the images pages were built from are still what they were: each key's original is the one
/// it was (by the hash of its bytes) and is fresh (a remote one within its max-age or TTL, a local one
/// with the stamp it was read with). One check for the triage of pages and for the seal.
struct SourceCheck: Sendable {
    /// The digest term of each key whose original is fresh; a key missing here is stale or gone.
    private var terms: [OriginalKey: UInt64] = [:]
    /// Every key looked up.
    private(set) var checked: Set<OriginalKey> = []

    static func of(_ keys: Set<OriginalKey>, _ run: BuildRun) async -> SourceCheck {
        var check = SourceCheck()
        await check.add(keys, run)
        return check
    }

    /// Looks up `keys` too.
    mutating func add(_ keys: Set<OriginalKey>, _ run: BuildRun) async {
        guard !keys.isEmpty else { return }
        let config = run.plan.configuration
        let moment = run.services.manager.now()
        let records = (try? await run.services.cache.originals(keys)) ?? [:]
        for key in keys {
            checked.insert(key)
            guard let record = records[key] else { continue }
            let fresh: Bool
            if let path = key.sitePath {
                // A local image is as fresh as its file: changed since it was read, its pages are built again.
                fresh = FileStamp.of(config.site + "/" + path).map(LocalFiles.validator) == record.validators.etag
            } else {
                fresh = config.fetch.isOffline || Freshness.isFresh(record, now: moment, defaultTTL: config.fetch.ttl)
            }
            if fresh { terms[key] = SourceDigest.term(key, record.blob) }
        }
    }

    /// Another check's keys too.
    mutating func merge(_ other: SourceCheck) {
        terms.merge(other.terms) { $1 }
        checked.formUnion(other.checked)
    }

    /// The digest term of `key`, nil when its original is stale or gone.
    func term(_ key: OriginalKey) -> UInt64? { terms[key] }

    /// Every key fresh, and with the originals `digest` was made of.
    func holds(_ keys: [OriginalKey], _ digest: SourceDigest) -> Bool {
        var current = SourceDigest()
        for key in keys {
            guard let term = terms[key] else { return false }
            current.add(term)
        }
        return current == digest
    }
}

/// `SourceCheck` for the pages of a stream, keys looked up as pages need them, each once per build.
/// Keys already looked up are answered on the caller's thread (most pages of a site share their images).
final class SourceChecks: Sendable {
    private let run: BuildRun
    private let check: Locked<SourceCheck>

    /// `checked`: what the triage already looked up.
    init(run: BuildRun, checked: SourceCheck) { (self.run, check) = (run, Locked(checked)) }

    func holds(_ keys: [OriginalKey], _ digest: SourceDigest) async -> Bool {
        let missing = check.withLock { Set(keys).subtracting($0.checked) }
        if !missing.isEmpty {
            var more = SourceCheck()
            await more.add(missing, run)
            check.withLock { $0.merge(more) }
        }
        return check.withLock { $0.holds(keys, digest) }
    }
}
