import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The HTML standard's "parse a srcset attribute", on the inputs of the web-platform-tests file
/// html/semantics/embedded-content/the-img-element/srcset/parse-a-srcset-attribute.html
/// (web-platform-tests/wpt at 704d739c5a54, 3-Clause BSD licence), with `data:` URLs made remote.
///
/// Each entry is the attribute value as written in an `<img srcset='...'>`, with `⟨` `⟩` around the
/// URL of every candidate the standard's algorithm yields (WPT checks only the one a browser then
/// picks; the others follow from the same steps). imgbake must rewrite exactly the remote ones among
/// them, and keep every other byte: white space and character references, descriptors, parentheses,
/// candidates the algorithm drops.
@Suite struct SrcsetConformanceTests {
    static let splittingLoop: [String] = [
        "", ",", ",,,",
        "  ⟨data:,a⟩  1x  ",
        "&#x9;&#x9;⟨data:,a⟩&#x9;&#x9;1x&#x9;&#x9;",
        "&#xA;&#xA;⟨data:,a⟩&#xA;&#xA;1x&#xA;&#xA;",
        // U+000B is not ASCII white space: one URL, which the URL parser trims.
        "⟨&#xB;&#xB;data:,a&#xB;&#xB;1x&#xB;&#xB;⟩",
        "&#xC;&#xC;⟨data:,a⟩&#xC;&#xC;1x&#xC;&#xC;",
        "&#xD;&#xD;⟨data:,a⟩&#xD;&#xD;1x&#xD;&#xD;",
        "⟨&#xE;&#xE;data:,a&#xE;&#xE;1x&#xE;&#xE;⟩",
        "⟨&#xF;&#xF;data:,a&#xF;&#xF;1x&#xF;&#xF;⟩",
        "⟨&#x10;&#x10;data:,a&#x10;&#x10;1x&#x10;&#x10;⟩",
        "⟨data:,a⟩", "⟨data:,a⟩ ", "⟨data:,a⟩ ,", "⟨data:,a⟩,", "⟨data:,a⟩, ", "⟨data:,a⟩,,,", "⟨data:,a⟩,, , ",
        " ⟨data:,a⟩", ",,,⟨data:,a⟩", " , ,,⟨data:,a⟩",
        // U+00A0 is not white space either; in front, it makes the URL relative (not remote).
        "⟨&nbsp;data:,a⟩", "⟨data:,a&nbsp;⟩",
    ]

    static let descriptorTokenizer: [String] = [
        "⟨data:,a⟩ 1x", "⟨data:,a⟩ 1x ", "⟨data:,a⟩ 1x,",
        "data:,a ( , data:,b 1x, ), ⟨data:,c⟩",
        "data:,a ((( , data:,b 1x, ), ⟨data:,c⟩",
        "data:,a [ , ⟨data:,b⟩ 1x, ⟨]⟩, ⟨data:,c⟩",
        "data:,a { , ⟨data:,b⟩ 1x, ⟨}⟩, ⟨data:,c⟩",
        #"data:,a " , ⟨data:,b⟩ 1x, ⟨"⟩, ⟨data:,c⟩"#,
        #"data:,a \,⟨data:;\,b⟩, ⟨data:,c⟩"#,
        "⟨data:,a⟩, data:,b (", "⟨data:,a⟩, data:,b (  ", "⟨data:,a⟩, data:,b (,", "⟨data:,a⟩, data:,b (x", "⟨data:,a⟩, data:,b ()",
        "data:,a (, data:,b",
        "data:,a /*, ⟨data:,b⟩, data:,c */",
        "data:,a //, ⟨data:,b⟩",
    ]

    /// Characters that are not ASCII white space, in front of or behind a descriptor's number.
    static let notWhiteSpace: [String] = ["&#x1;", "&nbsp;", "&#x1680;"] + (0x2000...0x200A).map { "&#x\(String($0, radix: 16, uppercase: true));" }
        + ["&#x200C;", "&#x200D;", "&#x202F;", "&#x205F;", "&#x3000;", "&#xFEFF;"]

    static let widthDescriptors: [String] = [
        "data:,a foo", "data:,a foo foo", "data:,a foo 1x", "data:,a foo 1x foo", "data:,a foo 1w", "data:,a foo 1w foo",
        "data:,a 1x 1x", "data:,a 1w 1w", "data:,a 1w 1x", "data:,a 1x 1w",
        "⟨data:,a⟩ 1w 1h", "⟨data:,a⟩ 1h 1w",
        "data:,a 1h 1h", "data:,a 1h 1x", "data:,a 1h 1w 1x", "data:,a 1x 1w 1h", "data:,a 1h", "data:,a 1h foo", "data:,a foo 1h",
        "data:,a 0w", "data:,a -1w", "data:,a 1w -1w", "data:,a 1.0w", "data:,a 1w 1.0w", "data:,a 1e0w", "data:,a 1w 1e0w",
        "data:,a 1www", "data:,a 1w 1www", "data:,a +1w", "data:,a 1w +1w", "data:,a 1W", "data:,a 1w 1W",
        "data:,a Infinityw", "data:,a 1w Infinityw", "data:,a NaNw", "data:,a 1w NaNw", "data:,a 0x1w", "data:,a 0X1w",
    ] + notWhiteSpace.flatMap { ["data:,a 1\($0)w", "data:,a \($0)1w"] }

    static let densityDescriptors: [String] = [
        "⟨data:,a⟩ 0x", "⟨data:,a⟩ -0x", "data:,a 1x -0x", "data:,a -1x", "data:,a 1x -1x",
        "⟨data:,a⟩ 1e0x", "⟨data:,a⟩ 1E0x", "⟨data:,a⟩ 1e-1x", "⟨data:,a⟩ 1.5e1x",
        "data:,a -x", "data:,a .x", "data:,a -.x", "data:,a 1.x", "⟨data:,a⟩ .5x", "⟨data:,a⟩ .5e1x",
        "data:,a 1x 1.5e1x", "data:,a 1x 1e1.5x", "⟨data:,a⟩ 1.0x", "data:,a 1x 1.0x",
        "data:,a +1x", "data:,a 1X", "data:,a Infinityx", "data:,a NaNx", "data:,a 0x1x", "data:,a 0X1x",
    ] + notWhiteSpace.flatMap { ["data:,a 1\($0)x", "data:,a \($0)1x"] }

    static let heightDescriptors: [String] = [
        "data:,a 1w 0h", "data:,a 1w -1h", "data:,a 1w 1.0h", "data:,a 1w 1e0h", "data:,a 1w 1hhh", "data:,a 1w +1h",
        "data:,a 1w 1H", "data:,a 1w Infinityh", "data:,a 1w NaNh", "data:,a 0x1h", "data:,a 0X1h",
    ] + notWhiteSpace.flatMap { ["data:,a 1w 1\($0)h", "data:,a 1w \($0)1h"] }

    static var cases: [String] { splittingLoop + descriptorTokenizer + widthDescriptors + densityDescriptors + heightDescriptors }

    /// Imgbake deliberately differs on these, with the reason.
    static let differences: [String: String] = [:]

    @Test func theTableHasEveryWPTCase() {
        #expect(Self.cases.count == 235)
    }

    @Test func exactlyTheCandidatesTheAlgorithmYieldsAreRewritten() throws {
        var failures: [String] = []
        for entry in Self.cases {
            let problem = try Self.problem(with: entry)
            switch (problem, Self.differences[entry]) {
            case (nil, .some): failures.append("\(entry): listed as a deliberate difference but passes")
            case (.some(let problem), nil): failures.append("\(entry): \(problem)")
            default: break
            }
        }
        let passed = Self.cases.count - failures.count - Self.differences.count
        print("srcset conformance: \(passed) of \(Self.cases.count) cases pass, \(Self.differences.count) deliberate differences")
        #expect(failures.isEmpty, Comment(rawValue: failures.joined(separator: "\n")))
    }

    /// What goes wrong with the case, nil when nothing does.
    static func problem(with entry: String) throws -> String? {
        let remote = entry.replacingOccurrences(of: "data:", with: "http://img.example.test/")
        let offline = OfflineRewrite()
        var input = ""
        var expected = ""
        var wanted: [RemoteURL] = []
        var rest = Substring(remote)
        while let open = rest.firstIndex(of: "⟨"), let close = rest.firstIndex(of: "⟩") {
            let candidate = rest[rest.index(after: open)..<close]
            input += rest[..<open] + candidate
            expected += rest[..<open]
            if let url = RemoteURL.resolve(HTMLEntities.decodeAttribute(Array(candidate.utf8)).string) {
                wanted.append(url)
                expected += offline.localPath(.remote(url))
            } else {
                expected += candidate
            }
            rest = rest[rest.index(after: close)...]
        }
        input += rest
        expected += rest

        let page = "<img srcset='\(input)'>"
        let scan = HTMLScanner.scan(SourceFile(path: "srcset.html", kind: .html, bytes: Array(page.utf8)), settings: .remoteOnly)
        guard scan.references.map(\.url) == wanted else {
            return "found \(scan.references.map(\.url.string)), the algorithm yields \(wanted.map(\.string))"
        }
        let rewritten = try offline.rewrite(scan).bytes.map { String(decoding: $0, as: UTF8.self) } ?? page
        guard rewritten == "<img srcset='\(expected)'>" else { return "rewritten to \(rewritten)" }
        return nil
    }
}
