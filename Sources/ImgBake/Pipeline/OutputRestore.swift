import Foundation
import Locking

extension BuildRun {
    /// With `--out`: pages whose last build still holds but whose outputs are gone (a wiped `--out`, or
    /// a fresh CI checkout with the cache restored) are written again from the cache: their image files
    /// first, then the page as that build wrote it, without reading, scanning or rewriting anything. A
    /// page the cache cannot give back whole (a blob gone or damaged, a file it has no record of) is
    /// built like a changed one.
    func restoreLost(_ triage: PageTriage) async throws(BuildError) -> PageTriage {
        var triage = triage
        guard !triage.lost.isEmpty else { return triage }
        let lost = triage.lost
        triage.lost = []
        let (images, unavailable) = try await restoreImages(of: lost)
        triage.restoration = images
        let written = try restorePages(lost.filter { $0.images.allSatisfy { !unavailable.contains($0) } })
        for var state in lost {
            guard let stamp = written[state.path] else {
                triage.toBuild.append(PageToBuild(path: state.path, previous: state, source: .siteFile, stamp: state.stamp))
                continue
            }
            state.output = stamp
            triage.unchanged.append(state)
            triage.restored.insert(state.path)
        }
        triage.toBuild.sort { $0.path < $1.path }
        progress.update { $0.pagesUnchanged = triage.unchanged.count }
        return triage
    }

    /// Writes the missing image files of `pages` from the blobs the cache recorded for their names;
    /// returns what it wrote and the names it could not.
    private func restoreImages(of pages: [PageState]) async throws(BuildError) -> (ImageFilesWritten, unavailable: Set<String>) {
        let folder = plan.imagesFolder
        var missing: Set<String> = []
        for state in pages {
            for name in state.images where !missing.contains(name) && FileStamp.of(folder + "/" + name) == nil { missing.insert(name) }
        }
        guard !missing.isEmpty else { return (ImageFilesWritten(), []) }
        let records = await store.outputRecords(named: missing.sorted())
        var written = try await ImageFiles(cache: services.cache, directory: folder)
            .write(records.map { OutputImage(fileName: $0.name, blob: $0.blob, bytes: -1, key: $0.key) })
        // A damaged blob was taken out of the index; the pages that use it are built again, which
        // makes it again.
        let restored = Set(records.filter { !written.corrupt.contains($0.key) }.map(\.name))
        written.corrupt = []
        return (written, missing.subtracting(restored))
    }

    /// Writes each page as its last build did, from its kept copy (verified), on every core. Returns the
    /// written pages' stamps; a page missing from the result is to be built.
    private func restorePages(_ pages: [PageState]) throws(BuildError) -> [String: FileStamp] {
        let writer = PageWriter(site: plan.configuration.site, outputRoot: plan.configuration.outputRoot)
        let store = self.store
        let results = Locked([String: FileStamp]())
        let failure = Locked<BuildError?>(nil)
        DispatchQueue.concurrentPerform(iterations: pages.count) { index in
            let state = pages[index]
            guard let blob = state.kept, let bytes = store.keptPage(blob) else { return }
            do throws(BuildError) {
                if let stamp = try writer.write(state.path, bytes) { results.withLock { $0[state.path] = stamp } }
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return results.withLock { $0 }
    }
}
