import Foundation
import ImgBakeTemplates
import Mustache

/// Renders the markup templates: the built-in ones (Templates/ in the repository), each replaceable by
/// a file of the same name in `templates_dir`.
public struct MarkupRenderer: Sendable {
    private let library: MustacheLibrary
    /// The templates replaced from `templates_dir`: the others render natively (`BuiltInTemplates`),
    /// byte for byte as Mustache renders them, which was most of a warm build's rewriting.
    private let replaced: Set<String>
    /// SHA-256 of the templates in use, for the build fingerprint: a changed template rewrites pages.
    public let digest: String

    /// A template that does not parse.
    public struct TemplateError: Error, CustomStringConvertible {
        public let file: String
        public let line: Int
        public let column: Int
        public let message: String
        public var description: String { "\(file):\(line):\(column): error: template: \(message)" }
    }

    public init(templatesDirectory: String? = nil) throws(TemplateError) {
        var library = MustacheLibrary()
        var texts = DefaultTemplates.all
        var replaced: Set<String> = []
        for (name, text) in DefaultTemplates.all {
            try Self.register(text, named: name, file: "Templates/\(name).mustache", in: &library)
        }
        if let directory = templatesDirectory {
            for name in DefaultTemplates.all.keys.sorted() {
                let path = "\(directory)/\(name).mustache"
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                var text = String(decoding: data, as: UTF8.self)
                if text.hasSuffix("\n") { text.removeLast() }
                try Self.register(text, named: name, file: path, in: &library)
                texts[name] = text
                replaced.insert(name)
            }
        }
        self.library = library
        self.replaced = replaced
        digest = BlobID(of: Array(texts.sorted { $0.key < $1.key }.map { "\($0.key)\u{0}\($0.value)" }.joined(separator: "\u{0}").utf8)).hex
    }

    private static func register(_ text: String, named name: String, file: String, in library: inout MustacheLibrary) throws(TemplateError) {
        do {
            library.register(try MustacheTemplate(string: text), named: name)
        } catch let error as MustacheTemplate.ParserError {
            throw TemplateError(file: file, line: error.context.lineNumber, column: error.context.columnNumber,
                                message: "\(error.error)")
        } catch {
            throw TemplateError(file: file, line: 1, column: 1, message: "\(error)")
        }
    }

    func render(_ name: String, _ context: [String: Any]) -> String {
        if !replaced.contains(name), let text = BuiltInTemplates.render(name, context) { return text }
        return renderWithMustache(name, context)
    }

    /// Through the template library, built-in template or not (what the built-in fast path is checked against).
    func renderWithMustache(_ name: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: name) ?? ""
    }
}
