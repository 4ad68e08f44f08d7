import ImgBake

/// The properties the fuzz targets check (Tests/Fuzz, `make fuzz`), one input at a time. They live
/// beside the fuzz programs, not in the library imgbake ships; what they exercise is internal to the
/// library and reached at `package` access (visible inside this package only). FuzzSeedTests runs the
/// same checks on every committed corpus input, so an input that once failed stays fixed.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// `SrcsetParser.parse`: candidate URL ranges lie within the input, in order, hold the URL as
    /// written, and with every URL replaced the same candidates come out, with the new URLs.
    case srcset
    /// `MarkdownSyntax`'s destination and bracket lexers: every range lies within the input.
    case markdownDestination = "markdown-destination"
    /// `TOMLParser.parse`: an error names a line of the document.
    case toml
    /// `HTMLScanner.scan` and `Splicer.apply`: rewriting every reference with its own bytes gives the
    /// input back byte for byte; with fresh URLs, a second scan finds exactly those URLs.
    case htmlRewrite = "html-rewrite"
    /// `MarkdownScanner.scan` and `Splicer.apply`: rewriting every reference with its own bytes gives
    /// the input back byte for byte, and every destination decodes to the URL it was found for.
    case markdownRewrite = "markdown-rewrite"
    /// `Pack.decode` and `RemoteLayout.parse` on what a remote store holds (`RemotePackProperty`).
    case remotePack = "remote-pack"

    /// Checks one input: nil when every property holds, else what went wrong.
    package func check(_ input: [UInt8]) -> String? {
        switch self {
        case .srcset: Self.checkSrcset(input)
        case .markdownDestination: Self.checkMarkdownDestination(input)
        case .toml: Self.checkTOML(input)
        case .htmlRewrite: Self.checkRewrite(SourceFile(path: "fuzz.html", kind: .html, bytes: input))
        case .markdownRewrite: Self.checkRewrite(SourceFile(path: "fuzz.md", kind: .markdown, bytes: input))
        case .remotePack: RemotePackProperty.check(input)
        }
    }

    // MARK: srcset

    private static func checkSrcset(_ input: [UInt8]) -> String? {
        let candidates = SrcsetParser.parse(input)
        var end = 0
        for (number, candidate) in candidates.enumerated() {
            let range = candidate.urlRange
            guard range.lowerBound >= end, range.upperBound <= input.count, !range.isEmpty else {
                return "candidate \(number) has range \(range), after \(end) in \(input.count) bytes"
            }
            guard String(decoding: input[range], as: UTF8.self) == candidate.url else { return "candidate \(number)'s URL is not its bytes" }
            end = range.upperBound
        }
        // What a rewrite does: every URL replaced, every other byte kept; the same candidates must come out.
        var edits: [Edit] = []
        for (number, candidate) in candidates.enumerated() { edits.append(Edit(candidate.urlRange, "u\(number)")) }
        guard let rewritten = try? Splicer.apply(edits, to: input) else { return "candidate ranges overlap" }
        let again = SrcsetParser.parse(rewritten)
        guard again.map(\.url) == candidates.indices.map({ "u\($0)" }), again.map(\.descriptors) == candidates.map(\.descriptors) else {
            return "after replacing the URLs, \(again.map(\.url)) instead of \(candidates.count) candidates u0..."
        }
        return nil
    }

    // MARK: Markdown destinations

    private static func checkMarkdownDestination(_ input: [UInt8]) -> String? {
        let all = 0..<input.count
        if let destination = MarkdownSyntax.destination(in: input, at: 0, limit: input.count),
           !within(destination.range, all) {
            return "destination \(destination.range) outside \(all)"
        }
        if let close = MarkdownSyntax.closingBracket(in: input, from: 0, limit: input.count),
           !all.contains(close) || input[close] != UInt8(ascii: "]") {
            return "closing bracket at \(close), not a ] in \(all)"
        }
        // Candidates, in order; they may nest (`](a](b)`), as the lexer cannot know which `](` cmark took.
        var start = -1
        for destination in MarkdownSyntax.inlineDestinations(in: input, range: all) {
            guard within(destination.range, all), destination.range.lowerBound > start else {
                return "inline destination \(destination.range) outside \(all) or not after \(start)"
            }
            start = destination.range.lowerBound
        }
        return nil
    }

    // MARK: TOML

    private static func checkTOML(_ input: [UInt8]) -> String? {
        do {
            _ = try TOMLParser.parse(input)
        } catch {
            let lines = input.count { $0 == 0x0A } + 1
            guard (1...lines + 1).contains(error.line) else { return "error on line \(error.line) of \(lines): \(error.message)" }
        }
        return nil
    }

    // MARK: Pages

    private static func checkRewrite(_ file: SourceFile) -> String? {
        let scan = scanRemote(file)
        let all = 0..<file.bytes.count
        // In document order for Markdown; an HTML tag's attributes come in the order the tag has them.
        var end = 0
        for range in scan.references.map(\.range).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            guard within(range, all), range.lowerBound >= end else { return "reference at \(range) outside \(all) or before \(end)" }
            end = range.upperBound
        }
        if file.kind == .markdown, !scan.references.map(\.range.lowerBound).isSorted() { return "references out of order" }
        for (number, reference) in scan.references.enumerated() {
            if let problem = rangeProblem(reference, in: file, base: scan.remoteBase?.url) {
                return "reference \(number) at \(reference.range): \(problem)"
            }
            if let element = reference.element, !within(element.tagRange, all)
                || !(element.tagRange.lowerBound...element.tagRange.upperBound).contains(element.insertionOffset) {
                return "reference \(number)'s element \(element.tagRange) (insertion \(element.insertionOffset)) outside \(all)"
            }
        }
        for slot in scan.markdownImages {
            if let reference = slot.reference, !scan.references.indices.contains(reference) {
                return "Markdown image \(slot.written) points at reference \(reference) of \(scan.references.count)"
            }
            if let span = slot.span, !within(span, all) { return "Markdown image span \(span) outside \(all)" }
        }

        // The identity mapping: every reference rewritten to its own bytes.
        let identity = scan.references.map { Edit($0.range, Array(file.bytes[$0.range])) }
        guard let same = try? Splicer.apply(identity, to: file.bytes) else { return "references overlap" }
        guard same == file.bytes else { return "rewriting every reference with its own bytes changed the page" }

        // Fresh URLs in an HTML page (Markdown rewrites have their own check, by parsing the result again).
        guard file.kind == .html else { return nil }
        let fresh = scan.references.indices.map { "https://imgbake.invalid/\($0)" }
        var edits: [Edit] = []
        for (reference, url) in zip(scan.references, fresh) {
            edits.append(Edit(reference.range, ReplacementText.value(url, in: reference.syntax)))
        }
        guard let rewritten = try? Splicer.apply(edits, to: file.bytes) else { return "references overlap" }
        let again = scanRemote(SourceFile(path: file.path, kind: .html, bytes: rewritten)).references.map(\.source.serialized)
        guard again == fresh else { return "after rewriting to fresh URLs, a second scan finds \(again)" }
        return nil
    }

    /// Remote references only: local ones depend on the files of a site, which a fuzz input has not.
    private static func scanRemote(_ file: SourceFile) -> PageScan {
        var settings = ScanSettings()
        settings.localImages = false
        return SourceScanner.scan(file, settings: settings)
    }

    /// What gumbo's input stream turns into U+FFFD besides invalid UTF-8 (its utf8.c): C0 controls but
    /// for white space, DEL and C1 controls, noncharacters.
    private static func gumboReplaces(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (v < 0x20 && ![0x09, 0x0A, 0x0C, 0x0D].contains(v)) || (0x7F...0x9F).contains(v)
            || (0xFDD0...0xFDEF).contains(v) || v & 0xFFFE == 0xFFFE
    }

    private static func within(_ range: Range<Int>, _ bounds: Range<Int>) -> Bool {
        range.lowerBound >= bounds.lowerBound && range.upperBound <= bounds.upperBound
    }

    /// The bytes of a reference must be the URL it was found for: what they decode to resolves to it.
    private static func rangeProblem(_ reference: ImageReference, in file: SourceFile, base: RemoteURL?) -> String? {
        let bytes = file.bytes[reference.range]
        // A deliberate difference: characters gumbo replaces. gumbo, whose attribute values give the
        // URL, replaces bytes that are not UTF-8 by U+FFFD in its own way (Swift's decoding, as browsers'
        // WHATWG decoder, once per maximal invalid subpart), and control characters and noncharacters
        // by U+FFFD too, which browsers keep (found by this target). Neither is in a URL a page written
        // in UTF-8 means to hold, and the rewrite, which replaces exactly these bytes, is checked below
        // all the same.
        guard let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains(where: gumboReplaces) else { return nil }
        let written: String
        switch (reference.kind, reference.syntax) {
        case (.imgSrc, _):
            return nil // the parser's decoded value is the URL; its bytes may hold references HTMLEntities lacks
        case (_, .attribute):
            written = HTMLEntities.decodeAttribute(bytes).string
        case (_, .markdownDestination):
            written = MarkdownSyntax.decode(bytes)
        case (_, .markdownInlinedReference):
            guard bytes.first == UInt8(ascii: "]"), bytes.last == UInt8(ascii: "]") else { return "not ] ... ]" }
            return nil
        default:
            return nil // CSS, meta and other values: checked by rewriting them to fresh URLs and scanning again
        }
        // Markdown has no <base>; a raw HTML block in it does not honour one either.
        let resolved = RemoteURL.resolve(written, against: file.kind == .html ? base : nil)
        return resolved.map(ImageSource.remote) == reference.source ? nil : "its bytes read \(written), not \(reference.source.serialized)"
    }
}

extension Array where Element: Comparable {
    fileprivate func isSorted() -> Bool { zip(self, dropFirst()).allSatisfy { $0 <= $1 } }
}
