import Foundation

/// Image files written again this build.
struct Healing: Sendable {
    var written = 0
    var placed: [String: String] = [:]
    var diagnostics: [Diagnostic] = []
}

extension Build {
    /// After a build, every image file a page refers to exists. One that went missing — removed by
    /// hand or by another tool, or by a build of an older imgbake — is written again from the cache; if
    /// the cache no longer holds it, its image is resolved again (fetched if need be) and the file made
    /// again when the same bytes come out. What cannot be made again is a warning at the page.
    func heal(_ site: SiteChanges, _ plan: BuildPlan, _ services: BuildServices) async throws(BuildError) -> Healing {
        let folder = plan.imagesFolder
        var users: [String: [String]] = [:] // missing file → pages referring to it
        for state in site.states where !site.unchanged.contains(state.path) {
            for name in state.images where OwnImageReferences.isOutputName(name) && FileStamp.of(folder + "/" + name) == nil {
                users[name, default: []].append(state.path)
            }
        }
        guard !users.isEmpty else { return Healing() }
        let names = users.keys.sorted()
        let emitter = ImageEmitter(cache: services.cache, directory: folder)
        var result = Healing()
        let (records, fromCache) = try await emitter.writeRecorded(names)
        var healed = fromCache.placed
        // Blobs gone from the cache: made again from their image, when it still gives the same bytes.
        let remade = try await remake(records.filter { fromCache.corrupt.contains($0.key) }, plan, services.manager, emitter)
        healed.formUnion(remade)
        result.written = healed.count
        for name in healed { result.placed[plan.placedImage(name)] = "image" }
        if !healed.isEmpty {
            result.diagnostics.append(Diagnostic(.note, "wrote \(healed.count) missing image file(s) again that pages still refer to"))
        }
        let known = Set(records.map(\.name))
        for name in names where !healed.contains(name) {
            let why = known.contains(name)
                ? "its image no longer gives the same file (changed upstream, or unavailable); build the page again from its source"
                : "this cache has no record of it; build the page again from its source"
            for page in users[name]! {
                result.diagnostics.append(Diagnostic(.warning, "refers to \(plan.ownPublicPath)\(name), which is missing: \(why)",
                                                     at: location(of: name, inPage: page, plan)))
            }
        }
        return result
    }

    private func remake(_ records: [OutputRecord], _ plan: BuildPlan, _ manager: ImageManager,
                        _ emitter: ImageEmitter) async throws(BuildError) -> Set<String> {
        var outputs: [OutputImage] = []
        for record in records {
            guard let url = ImageSource(serialized: record.url),
                  case .resolved(let image, _) = await manager.reload(url, request: nil) else { continue }
            let naming = OutputNaming(publicPath: plan.configuration.output.publicPath)
            if let variant = image.variants.first(where: { naming.fileName($0, of: image) == record.name }) {
                outputs.append(OutputImage(fileName: record.name, blob: variant.blob, bytes: variant.bytes, key: image.key))
            }
        }
        return try await emitter.write(outputs).placed
    }

    /// Where the page (as it is in the output) first refers to `name`.
    private func location(of name: String, inPage page: String, _ plan: BuildPlan) -> SourceLocation {
        let fallback = SourceLocation(file: page, line: 1, column: 1)
        guard let kind = SourceFile.kind(forPath: page),
              let bytes = try? AtomicFile.readWithStamp(plan.configuration.outputRoot + "/" + page).0,
              let offset = (bytes.firstRange(of: Array((plan.ownPublicPath + name).utf8)) ?? bytes.firstRange(of: Array(name.utf8)))?.lowerBound
        else { return fallback }
        return SourceFile(path: page, kind: kind, bytes: bytes).location(ofByte: offset)
    }
}
