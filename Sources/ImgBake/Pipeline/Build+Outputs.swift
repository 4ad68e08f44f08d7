import Foundation
import ImgBakeTemplates

/// What a build leaves behind besides pages and images: the mirrored site (`--out`), the state the
/// next build starts from, the removal of outputs nothing uses, the depfile.
extension Build {
    /// With `--out`: every site file not written this build is placed in the output as it is.
    func mirror(_ inventory: SiteInventory, states: [PageState], placed: inout [String: String]) throws(BuildError) {
        let tree = OutputTree(site: configuration.site, output: configuration.outputRoot)
        let written = Set(states.filter { $0.output != nil }.map(\.path))
        for path in inventory.pages + inventory.otherFiles where !written.contains(path) {
            _ = try tree.mirror(path)
            placed[path] = "mirror"
        }
    }

    /// Saves page states, and removes what imgbake placed that nothing uses any more: images no page
    /// refers to, and (with `--out`) copies of files gone from the site. Files it did not place stay.
    ///
    /// "Refers to" is what every page of the site holds after this build, whatever path it took
    /// (unchanged, rewritten, left with a failed image, changed while the build ran): `states` has one
    /// per page. When one page could not be read, no image file is removed at all.
    func record(_ states: [PageState], previous: [String: PageState], inventory: SiteInventory,
                placedNow: [String: String], outputs: [OutputImage], images: ResolvedSet, cache: ImageCache) async -> [Diagnostic] {
        let root = stateRoot
        let config = configuration
        let present = Set(inventory.pages)
        let gone = previous.keys.filter { !present.contains($0) }
        let referenced = Set(states.flatMap { $0.images.map { config.output.imagesDirectory + "/" + $0 } })
        let everyPageKnown = states.allSatisfy(\.imagesKnown) && Set(states.map(\.path)).isSuperset(of: present)
        let sitePaths = Set(inventory.pages + inventory.otherFiles)
        let written = Set(outputs).compactMap { output in
            images.representative[output.key].map { OutputRecord(name: output.fileName, blob: output.blob, key: output.key, url: $0.description) }
        }
        do {
            return try await cache.perform { index, _ in
                try index.putPageStates(states, removing: gone, root: root)
                try index.recordOutputs(written)
                let placed = try index.placedFiles(root: root).merging(placedNow) { $1 }
                var removed: [String] = []
                let tree = OutputTree(site: config.site, output: config.outputRoot)
                for (path, kind) in placed {
                    let orphan = kind == "image"
                        ? everyPageKnown && !referenced.contains(path)
                        : (config.outputDirectory != nil && !sitePaths.contains(path))
                    guard orphan else { continue }
                    tree.remove(path)
                    removed.append(path)
                }
                try index.recordPlaced(placedNow, removed: removed, root: root)
                return removed.isEmpty ? [] : [Diagnostic(.note, "removed \(removed.count) output file(s) no page uses any more")]
            }
        } catch {
            return [Diagnostic(.warning, "cache: could not record the build's state: \(error)")]
        }
    }

    func writeDepfile(_ inventory: SiteInventory) throws(BuildError) {
        guard let target = configuration.depfilePath else { return }
        let site = configuration.site
        var prerequisites = inventory.folders.map { Depfile.join(site, $0) }
            + (inventory.pages + inventory.otherFiles).map { Depfile.join(site, $0) }
        if let file = configuration.configurationFile { prerequisites.append(file) }
        if let folder = configuration.output.templatesDirectory {
            prerequisites += DefaultTemplates.all.keys.sorted().map { folder + "/" + $0 + ".mustache" }
                .filter { FileManager.default.fileExists(atPath: $0) }
        }
        do {
            try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent.isEmpty ? "." : (target as NSString).deletingLastPathComponent)
            try AtomicFile.write(Array(Depfile.contents(target: target, prerequisites: prerequisites).utf8), to: target, durable: false)
        } catch {
            throw BuildError(.failed, error.description)
        }
    }
}
