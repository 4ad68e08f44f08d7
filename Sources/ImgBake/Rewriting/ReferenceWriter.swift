/// The one way a localised reference is written, whatever kind of source it is in: which file replaces
/// it (its target), under what URL (the public path, or `base_url` and the path where an absolute URL is
/// needed), escaped for the syntax it sits in. `<img src>` markup and Markdown-to-HTML are the page
/// rewriter's; everything else goes through here.
struct ReferenceWriter: Sendable {
    let naming: OutputNaming
    /// For absolute URLs (feeds, social cards): under `base_url`, from the public path.
    let rootNaming: OutputNaming
    let output: OutputSettings

    enum Written {
        case edit(Edit, used: [StoredVariant], url: String)
        /// The reference stays: why (a warning; it fails a `--strict` build).
        case problem(String)
    }

    /// Nil when the image has nothing this reference can use.
    func write(_ reference: ImageReference, image: ResolvedImage, variants: [StoredVariant]) -> Written? {
        switch reference.target {
        case .fallback, .social:
            guard let file = variants.widest(in: image.fallbackFormats) else { return nil }
            guard let url = url(file, of: image, absolute: reference.absolute) else { return missingBase(reference) }
            return .edit(Edit(reference.range, ReplacementText.value(url, in: reference.syntax)), used: [file], url: url)
        case .formatSet(let resolution):
            let files = variants.formats.compactMap { variants.widest(in: $0) }
            guard !files.isEmpty else { return nil }
            var candidates: [String] = []
            var attributeQuote: UInt8?
            if case .cssCandidate(let quote) = reference.syntax { attributeQuote = quote }
            for file in files {
                guard let url = url(file, of: image, absolute: reference.absolute) else { return missingBase(reference) }
                candidates.append(ReplacementText.cssImageSetCandidate(url, resolution: resolution, type: file.format.mimeType,
                                                                       inAttribute: attributeQuote))
            }
            let fallback = url(files.last!, of: image, absolute: reference.absolute) ?? ""
            return .edit(Edit(reference.range, candidates.joined(separator: ", ")), used: files, url: fallback)
        }
    }

    private func url(_ file: StoredVariant, of image: ResolvedImage, absolute: Bool) -> String? {
        return absolute ? output.absolute(rootNaming.url(file, of: image)) : naming.url(file, of: image)
    }

    private func missingBase(_ reference: ImageReference) -> Written {
        .problem("\(reference.source): \(reference.kind.rawValue) needs an absolute URL: set output.base_url (the URL the site is served at); left as it is")
    }
}
