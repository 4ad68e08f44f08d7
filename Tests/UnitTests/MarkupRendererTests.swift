import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The built-in templates are rendered natively (`BuiltInTemplates`): for every context `ImageMarkup`
/// gives them, the same bytes as Mustache gives from Templates/*.mustache, escaping included.
@Suite struct MarkupRendererTests {
    static let pieces = ["/_img/a-0123456789-480.webp 480w", "(max-width: 960px) 100vw, 960px", "é", "<", ">", "&", "\"", "'",
                         "a&amp;b", "\"\u{301}", "e\u{301}", "", " ", "lazy", "high", "async", "background-color:#fff", "LEHV6nWB2y"]

    static func text(_ random: inout SplitMix) -> String {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    @Test func builtInTemplatesRenderAsMustacheDoes() throws {
        let renderer = try MarkupRenderer()
        var random = SplitMix(state: 11)
        for _ in 0..<2_000 {
            var attributes: [String: Any] = [:]
            for key in ["srcset", "sizes", "width", "height", "loading", "fetchpriority", "decoding", "style", "blurhash"]
            where Bool.random(using: &random) {
                attributes[key] = Self.text(&random)
            }
            #expect(renderer.render("img-attributes", attributes) == renderer.renderWithMustache("img-attributes", attributes))

            let sources: [[String: Any]] = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                var source: [String: Any] = [:]
                for key in ["type", "srcset", "sizes"] where Int.random(in: 0..<4, using: &random) > 0 { source[key] = Self.text(&random) }
                return source
            }
            var context: [String: Any] = ["sources": sources, "img": "<img src=\"" + Self.text(&random) + "\">"]
            if Bool.random(using: &random) { context["sizes"] = Self.text(&random) }
            if Bool.random(using: &random) { context["type"] = Self.text(&random) }
            for name in ["picture", "img"] {
                #expect(renderer.render(name, context) == renderer.renderWithMustache(name, context), "\(name): \(context)")
            }
        }
    }

    /// A template replaced from `templates_dir` is rendered by Mustache.
    @Test func aReplacedTemplateIsMustaches() throws {
        let folder = TemporaryFolder()
        folder.write("img.mustache", "<span>{{{img}}}</span>\n")
        let renderer = try MarkupRenderer(templatesDirectory: folder.path)
        #expect(renderer.render("img", ["img": "<img>"]) == "<span><img></span>")
        #expect(renderer.render("picture", ["img": "<img>", "sources": [[String: Any]]()]) == "<picture><img></picture>")
    }
}
