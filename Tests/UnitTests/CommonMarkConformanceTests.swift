import CommonMark
import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// Every example of the CommonMark spec (Tests/Conformance/commonmark), with each link and image
/// destination made remote, scanned, rewritten to local paths and rendered with cmark-gfm: the
/// result must render exactly as the example does with the same URL mapping applied to its images,
/// and no byte outside the rewritten destinations may change. Then again with every link turned into
/// an image, and with one link at a time. `make test` runs it; a failure names the example number.
@Suite struct CommonMarkConformanceTests {
    struct Example: Decodable {
        let markdown: String
        let example: Int
    }

    static let examples: [Example] = {
        let path = Paths.root + "/Tests/Conformance/commonmark/spec.json"
        let data = FileManager.default.contents(atPath: path) ?? Data()
        return (try? JSONDecoder().decode([Example].self, from: data)) ?? []
    }()

    /// Examples where imgbake deliberately does not rewrite (or not everything), with the reason.
    /// An entry that starts passing is reported too, so the list stays true.
    static let differences: [Int: String] = [:]
    static let differencesWithLinksAsImages: [Int: String] = [:]

    @Test func theVendoredSpecIsComplete() {
        #expect(Self.examples.count == 655)
    }

    @Test func everyExampleWithRemoteDestinations() throws {
        try check(Self.examples.map { ($0.example, ExampleSource.remoteDestinations(Array($0.markdown.utf8))) },
                  differences: Self.differences, name: "examples")
    }

    @Test func everyExampleWithLinksTurnedIntoImages() throws {
        let variants = Self.examples.compactMap { example -> (Int, [UInt8])? in
            let bytes = Array(example.markdown.utf8)
            let images = ExampleSource.linksAsImages(bytes)
            return images == bytes ? nil : (example.example, ExampleSource.remoteDestinations(images))
        }
        #expect(variants.count == 95)
        try check(variants, differences: Self.differencesWithLinksAsImages, name: "examples with links as images")
    }

    /// Images next to links, which may share a definition with them (example 535).
    @Test func everyExampleWithOneLinkTurnedIntoAnImageAtATime() throws {
        let variants = Self.examples.flatMap { example in
            ExampleSource.eachLinkAsAnImage(Array(example.markdown.utf8)).map { (example.example, ExampleSource.remoteDestinations($0)) }
        }
        #expect(variants.count == 98)
        try check(variants, differences: Self.differencesWithLinksAsImages, name: "examples with one link as an image")
    }

    private func check(_ documents: [(number: Int, markdown: [UInt8])], differences: [Int: String], name: String) throws {
        var failures: [String] = []
        var withImages = 0
        var passed = 0
        for (number, markdown) in documents {
            let problem = try Self.problem(with: markdown, number: number)
            if MarkdownParser.parse(markdown).contains(where: { $0.type == "image" }) { withImages += 1 }
            switch (problem, differences[number]) {
            case (nil, nil): passed += 1
            case (nil, .some): failures.append("example \(number): listed as a deliberate difference but passes")
            case (.some(let problem), nil): failures.append("example \(number): \(problem)")
            case (.some, .some): break
            }
        }
        print("CommonMark conformance, \(name): \(passed) of \(documents.count) pass (\(withImages) with images), \(differences.count) deliberate differences")
        #expect(failures.isEmpty, Comment(rawValue: failures.joined(separator: "\n")))
    }

    /// What is wrong with rewriting `markdown`, nil when nothing is.
    static func problem(with markdown: [UInt8], number: Int) throws -> String? {
        let offline = OfflineRewrite()
        let (scan, rewrite, expected, actual) = try offline.markdown(markdown, path: "example-\(number).md")
        let warnings = (scan.diagnostics + rewrite.diagnostics).map(\.message)
        guard actual == expected else {
            return "renders differently" + (warnings.isEmpty ? "" : " (\(warnings.joined(separator: "; ")))")
                + "\n--- source\n\(String(decoding: markdown, as: UTF8.self))--- expected\n\(expected)--- rewritten to\n\(actual)"
        }
        if let bytes = rewrite.bytes, bytes != (try offline.splicedByHand(scan)) {
            return "bytes outside the rewritten destinations changed"
        }
        return nil
    }
}

/// Turns a spec example into a document whose destinations are remote, keeping what it tests: each
/// change is kept only when cmark-gfm parses the result into the same nodes, with the same text,
/// titles and structure, and only the intended URLs changed.
enum ExampleSource {
    private static func nodes(_ bytes: [UInt8]) -> [MarkdownNode] { MarkdownParser.parse(bytes) }

    /// Inserts `http://img.example.test/<n>/` at the start of each link or image destination, after `<`
    /// when the destination has one, so escapes, entities, parentheses and titles stay as written.
    static func remoteDestinations(_ markdown: [UInt8]) -> [UInt8] {
        var current = markdown
        var currentNodes = nodes(current)
        var count = 0
        var i = 0
        while i + 1 < current.count {
            defer { i += 1 }
            guard current[i] == UInt8(ascii: "]"), current[i + 1] == UInt8(ascii: "(") || current[i + 1] == UInt8(ascii: ":")
            else { continue }
            var j = skip(current, from: i + 2, " \t")
            if j < current.count, current[j] == UInt8(ascii: "\r") { j += 1 }
            if j < current.count, current[j] == UInt8(ascii: "\n") { j = skip(current, from: j + 1, " \t>") }
            if j < current.count, current[j] == UInt8(ascii: "<") { j += 1 }
            let startsWithSlash = j < current.count && current[j] == UInt8(ascii: "/")
            let prefix = "http://img.example.test/\(count + 1)" + (startsWithSlash ? "" : "/")
            var candidate = current
            candidate.insert(contentsOf: Array(prefix.utf8), at: j)
            let candidateNodes = nodes(candidate)
            if onlyURLsPrefixed(from: currentNodes, to: candidateNodes, with: prefix) {
                current = candidate
                currentNodes = candidateNodes
                count += 1
            }
        }
        return current
    }

    /// Inserts `!` before each `[` that opens a link: first where that changes nothing but the link
    /// into an image, then, for links that cannot change alone (a link inside a link's text is text,
    /// an image may contain links), wherever it makes one more image.
    static func linksAsImages(_ markdown: [UInt8]) -> [UInt8] {
        let strict = insertingBang(into: markdown, accepting: oneLinkBecameAnImage)
        return insertingBang(into: strict) { old, new in
            new.filter { $0.type == "image" }.count == old.filter { $0.type == "image" }.count + 1
        }
    }

    /// One document per link that can become an image alone, with only that link changed.
    static func eachLinkAsAnImage(_ markdown: [UInt8]) -> [[UInt8]] {
        let original = nodes(markdown)
        return markdown.indices.compactMap { i in
            guard markdown[i] == UInt8(ascii: "["), i == 0 || markdown[i - 1] != UInt8(ascii: "!") else { return nil }
            var candidate = markdown
            candidate.insert(UInt8(ascii: "!"), at: i)
            return oneLinkBecameAnImage(from: original, to: nodes(candidate)) ? candidate : nil
        }
    }

    private static func insertingBang(into markdown: [UInt8], accepting: ([MarkdownNode], [MarkdownNode]) -> Bool) -> [UInt8] {
        var current = markdown
        var currentNodes = nodes(current)
        var i = 0
        while i < current.count {
            defer { i += 1 }
            guard current[i] == UInt8(ascii: "["), i == 0 || current[i - 1] != UInt8(ascii: "!"),
                  currentNodes.contains(where: { $0.type == "link" }) else { continue }
            var candidate = current
            candidate.insert(UInt8(ascii: "!"), at: i)
            let candidateNodes = nodes(candidate)
            if accepting(currentNodes, candidateNodes) {
                current = candidate
                currentNodes = candidateNodes
                i += 1
            }
        }
        return current
    }

    private static func skip(_ bytes: [UInt8], from start: Int, _ characters: String) -> Int {
        var j = start
        while j < bytes.count, characters.utf8.contains(bytes[j]) { j += 1 }
        return j
    }

    private static func sameExceptURL(_ a: MarkdownNode, _ b: MarkdownNode) -> Bool {
        a.literal == b.literal && a.title == b.title && a.parent == b.parent
    }

    private static func onlyURLsPrefixed(from old: [MarkdownNode], to new: [MarkdownNode], with prefix: String) -> Bool {
        guard old.count == new.count else { return false }
        var changed = 0
        for (a, b) in zip(old, new) {
            guard a.type == b.type, sameExceptURL(a, b) else { return false }
            if a.url != b.url {
                guard let url = a.url, b.url == prefix + url else { return false }
                changed += 1
            }
        }
        return changed > 0
    }

    private static func oneLinkBecameAnImage(from old: [MarkdownNode], to new: [MarkdownNode]) -> Bool {
        guard old.count == new.count else { return false }
        var changed = 0
        for (a, b) in zip(old, new) {
            guard sameExceptURL(a, b), a.url == b.url else { return false }
            if a.type != b.type {
                guard a.type == "link", b.type == "image" else { return false }
                changed += 1
            }
        }
        return changed == 1
    }
}
