import Foundation
import Locking

extension Build {
    /// Pages whose last build still holds but whose outputs are gone (a wiped `--out`, or a fresh CI
    /// checkout with the cache restored) are written again from the cache: their image files first,
    /// then the page as that build wrote it, without reading, scanning or rewriting anything. A page
    /// the cache cannot give back whole (a blob gone or damaged, a file it has no record of) is read
    /// and rewritten like a changed one.
    func restore(_ partition: PagePartition, _ plan: BuildPlan, _ cache: ImageCache) async throws(BuildError) -> PagePartition {
        var partition = partition
        guard !partition.lost.isEmpty else { return partition }
        let lost = partition.lost
        partition.lost = []
        let images = try await restoreImages(of: lost, plan, cache)
        partition.restoration = images.healing
        let written = try restorePages(lost.filter { $0.images.allSatisfy { !images.unavailable.contains($0) } }, plan, cache)
        for var state in lost {
            guard let stamp = written[state.path] else { partition.toRead.append(state.path); continue }
            state.output = stamp
            partition.unchanged.append(state)
            partition.restored.insert(state.path)
            partition.restoration.placed[state.path] = "mirror"
        }
        partition.toRead.sort()
        progress.update { $0.pagesUnchanged = partition.unchanged.count }
        return partition
    }

    /// Writes the missing image files of `pages` from the blobs the cache recorded for their names.
    private func restoreImages(of pages: [PageState], _ plan: BuildPlan,
                               _ cache: ImageCache) async throws(BuildError) -> (healing: Healing, unavailable: Set<String>) {
        let folder = plan.imagesFolder
        var missing: Set<String> = []
        for state in pages {
            for name in state.images where !missing.contains(name) && FileStamp.of(folder + "/" + name) == nil { missing.insert(name) }
        }
        guard !missing.isEmpty else { return (Healing(), []) }
        let (records, emitted) = try await ImageEmitter(cache: cache, directory: folder).writeRecorded(missing.sorted())
        var healing = Healing(written: emitted.written)
        for name in emitted.placed { healing.placed[plan.placedImage(name)] = "image" }
        // A damaged blob was taken out of the index; the pages that use it are rewritten, which makes it again.
        healing.diagnostics = emitted.notes.map { Diagnostic(.note, $0) }
        let restored = Set(records.filter { !emitted.corrupt.contains($0.key) }.map(\.name))
        return (healing, missing.subtracting(restored))
    }

    /// Writes each page as its last build did, from its blob (verified), on every core. Returns the
    /// written pages' stamps; a page missing from the result is to be read.
    private func restorePages(_ pages: [PageState], _ plan: BuildPlan, _ cache: ImageCache) throws(BuildError) -> [String: FileStamp] {
        let writer = PageWriter(site: plan.configuration.site, outputRoot: plan.configuration.outputRoot, inPlace: false)
        let results = Locked([String: FileStamp]())
        let failure = Locked<BuildError?>(nil)
        DispatchQueue.concurrentPerform(iterations: pages.count) { index in
            let state = pages[index]
            guard let blob = state.rendered, case .found(let bytes) = cache.readBlobHere(blob) else { return }
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
