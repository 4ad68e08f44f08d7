import Yams

/// The image values of one front matter, each located to its bytes and checked against the parser's value.
struct FrontMatterValues {
    let file: SourceFile
    let block: FrontMatterScanner.Block
    let settings: ScanSettings
    let resolver: ReferenceResolver
    var references: [ImageReference] = []
    var diagnostics: [Diagnostic] = []
    var outputs: [OutputUse] = []

    init(file: SourceFile, block: FrontMatterScanner.Block, settings: ScanSettings) {
        self.file = file
        self.block = block
        self.settings = settings
        resolver = ReferenceResolver(settings: settings, pagePath: file.path)
    }

    // MARK: YAML

    mutating func yaml() {
        let text = String(decoding: file.bytes[block.contents], as: UTF8.self)
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch {
            // Yams' description ends with the offending line and a caret: not for a one-line warning.
            let reason = "\(error)".split(separator: "\n").prefix(2).joined(separator: " ").prefix(200)
            return warn("front matter is not valid YAML (\(reason)); its images are left as they are", at: block.contents.lowerBound)
        }
        guard case .mapping(let mapping)? = root else { return }
        for (key, value) in mapping {
            guard let name = key.string, settings.frontMatterKeys.contains(name) else { continue }
            switch value {
            case .scalar(let scalar): yamlScalar(scalar, key: name)
            case .sequence(let sequence):
                for case .scalar(let scalar) in sequence { yamlScalar(scalar, key: name) }
            default: continue
            }
        }
    }

    private mutating func yamlScalar(_ scalar: Node.Scalar, key: String) {
        guard let mark = scalar.mark, let start = offset(line: mark.line, scalarColumn: mark.column) else { return }
        let located: (Range<Int>, UInt8?)?
        switch scalar.style {
        case .singleQuoted: located = quoted(from: start, quote: UInt8(ascii: "'")).map { ($0, UInt8(ascii: "'")) }
        case .doubleQuoted: located = quoted(from: start, quote: UInt8(ascii: "\"")).map { ($0, UInt8(ascii: "\"")) }
        case .plain: located = (plain(from: start), nil)
        default: located = nil
        }
        guard let (range, quote) = located, Self.decode(file.bytes[range], quote: quote) == scalar.string else {
            return warn("front matter \(key): the value's bytes could not be located exactly (write it on one line); left as it is", at: start)
        }
        add(scalar.string, range: range, syntax: .yaml(quote: quote))
    }

    /// The byte offset of a Yams mark (1-based line of the contents, 1-based column in Unicode scalars).
    private func offset(line: Int, scalarColumn: Int) -> Int? {
        let contentsLine = file.lineIndex(ofByte: block.contents.lowerBound) + 1
        let lineRange = file.lineRange(contentsLine + line - 1)
        var offset = lineRange.lowerBound
        var scalars = 1
        while scalars < scalarColumn, offset < lineRange.upperBound {
            offset += 1
            if offset == lineRange.upperBound || file.bytes[offset] & 0xC0 != 0x80 { scalars += 1 }
        }
        return scalars == scalarColumn ? offset : nil
    }

    /// Inside the quotes starting at `start`: up to the closing quote (`''` is a quote in single quotes,
    /// a backslash escapes in double quotes). Only on one line.
    private func quoted(from start: Int, quote: UInt8) -> Range<Int>? {
        guard start < file.bytes.count, file.bytes[start] == quote else { return nil }
        var i = start + 1
        while i < block.contents.upperBound, file.bytes[i] != 0x0A {
            if file.bytes[i] == UInt8(ascii: "\\"), quote == UInt8(ascii: "\"") { i += 2; continue }
            if file.bytes[i] == quote {
                if quote == UInt8(ascii: "'"), i + 1 < file.bytes.count, file.bytes[i + 1] == quote { i += 2; continue }
                return start + 1..<i
            }
            i += 1
        }
        return nil
    }

    /// A plain scalar: to the end of the line, a ` #` comment, or (in a flow sequence) `,` or `]`.
    private func plain(from start: Int) -> Range<Int> {
        let before = file.bytes[block.contents.lowerBound..<start].last { !$0.isHTMLSpace }
        let inFlow = before == UInt8(ascii: "[") || before == UInt8(ascii: ",")
        var end = start
        while end < block.contents.upperBound, file.bytes[end] != 0x0A, file.bytes[end] != 0x0D {
            if file.bytes[end] == UInt8(ascii: "#"), end > start, file.bytes[end - 1].isHTMLSpace { break }
            if inFlow, file.bytes[end] == UInt8(ascii: ",") || file.bytes[end] == UInt8(ascii: "]") { break }
            end += 1
        }
        while end > start, file.bytes[end - 1].isHTMLSpace { end -= 1 }
        return start..<end
    }

    /// The value of a one-line scalar's bytes: `''` in single quotes, the simple backslash escapes in
    /// double quotes (others give a value that will not match, so the reference is left alone).
    static func decode(_ raw: ArraySlice<UInt8>, quote: UInt8?) -> String {
        let text = String(decoding: raw, as: UTF8.self)
        switch quote {
        case UInt8(ascii: "'"): return text.split(separator: "''", omittingEmptySubsequences: false).joined(separator: "'")
        case UInt8(ascii: "\""):
            var out = ""
            var escaped = false
            for c in text {
                if escaped {
                    guard c == "\\" || c == "\"" || c == "/" else { return "\u{FFFD}" }
                    out.append(c)
                    escaped = false
                } else if c == "\\" { escaped = true } else { out.append(c) }
            }
            return out
        default: return text
        }
    }

    // MARK: TOML

    mutating func toml() {
        let document: [String: TOMLNode]
        do { document = try TOMLParser.parse(Array(file.bytes[block.contents])) } catch {
            let line = file.lineIndex(ofByte: block.contents.lowerBound) + error.line
            return warn("front matter is not valid TOML (\(error.message), line \(line)); its images are left as they are",
                        at: file.lineRange(line).lowerBound)
        }
        for key in settings.frontMatterKeys.sorted() {
            guard let node = document[key] else { continue }
            switch node.value {
            case .string: tomlString(node, key: key)
            case .array(let items): for item in items { tomlString(item, key: key) }
            default: continue
            }
        }
    }

    private mutating func tomlString(_ node: TOMLNode, key: String) {
        guard case .string(let value) = node.value, let span = node.span, span.count >= 2 else { return }
        let written = span.lowerBound + block.contents.lowerBound..<span.upperBound + block.contents.lowerBound
        let quote = file.bytes[written.lowerBound]
        let range = written.lowerBound + 1..<written.upperBound - 1
        // A multi-line string or an escape this does not decode: left alone.
        let multiline = written.count >= 6 && file.bytes[written.lowerBound + 1] == quote && file.bytes[written.lowerBound + 2] == quote
        guard !multiline, Self.decode(file.bytes[range], quote: quote == UInt8(ascii: "\"") ? quote : nil) == value else {
            return warn("front matter \(key): the value's bytes could not be located exactly; left as it is", at: written.lowerBound)
        }
        add(value, range: range, syntax: .toml(quote: quote))
    }

    // MARK: Both

    private mutating func add(_ written: String, range: Range<Int>, syntax: ImageReference.Syntax) {
        let location = file.location(ofByte: range.lowerBound)
        guard let source = resolver.image(written, at: location, diagnostics: &diagnostics, outputs: &outputs) else { return }
        references.append(ImageReference(kind: .frontMatter, source: source, location: location, range: range, syntax: syntax))
    }

    private mutating func warn(_ message: String, at offset: Int) {
        diagnostics.append(Diagnostic(.warning, message, at: file.location(ofByte: offset)))
    }
}
