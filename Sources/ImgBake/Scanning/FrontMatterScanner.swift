import Yams

/// Finds images in Markdown front matter: YAML between `---` lines (read with Yams) or TOML between
/// `+++` lines (read with imgbake's TOML parser), at the very start of the file. The values of the
/// configured top-level keys (`images.front_matter_keys`), or the strings of an array under one, are
/// replaced where they are written; nothing else of the front matter changes (no re-serialising).
///
/// Yams gives where a scalar starts, not where it ends, so the end is found here and the bytes are
/// checked to decode to the value Yams read; a value that does not (a multi-line or block scalar, an
/// escape this does not decode) is a warning and stays.
public enum FrontMatterScanner {
    public struct Block: Sendable, Equatable {
        public enum Language: Sendable { case yaml, toml }
        public var language: Language
        /// The whole front matter, delimiter lines included.
        public var whole: Range<Int>
        /// Between the delimiter lines.
        public var contents: Range<Int>
    }

    /// The front matter at the start of `bytes`, if any: an opening `---` (YAML) or `+++` (TOML) line,
    /// up to a line that repeats it (YAML may also end with `...`).
    public static func block(in bytes: [UInt8]) -> Block? {
        let start = ByteOrderMark.length(bytes)
        var lines = Lines(bytes: bytes, position: start)
        guard let first = lines.next() else { return nil }
        let language: Block.Language
        switch first.text {
        case "---": language = .yaml
        case "+++": language = .toml
        default: return nil
        }
        while let line = lines.next() {
            if line.text == first.text || (language == .yaml && line.text == "...") {
                return Block(language: language, whole: start..<line.end, contents: first.end..<line.start)
            }
        }
        return nil
    }

    /// `bytes` with the front matter blanked (line endings kept), for a Markdown parser that would take
    /// it for a thematic break and a heading.
    public static func masked(_ bytes: [UInt8]) -> [UInt8] {
        block(in: bytes).map { masked(bytes, block: $0) } ?? bytes
    }

    static func masked(_ bytes: [UInt8], block: Block) -> [UInt8] {
        var masked = bytes
        for i in block.whole where masked[i] != 0x0A && masked[i] != 0x0D { masked[i] = 0x20 }
        return masked
    }

    /// The images the front matter's configured keys name, and warnings about the values left.
    static func scan(_ file: SourceFile, block: Block, settings: ScanSettings)
        -> (references: [ImageReference], diagnostics: [Diagnostic], outputs: [OutputUse]) {
        var found = FrontMatterValues(file: file, block: block, settings: settings)
        switch block.language {
        case .yaml: found.yaml()
        case .toml: found.toml()
        }
        return (found.references, found.diagnostics, found.outputs)
    }
}

/// The lines of a byte array, without their line endings, with where each starts and where the next does.
private struct Lines {
    let bytes: [UInt8]
    var position: Int

    mutating func next() -> (text: String, start: Int, end: Int)? {
        guard position < bytes.count else { return nil }
        let start = position
        let newline = bytes[start...].firstIndex(of: 0x0A)
        position = newline.map { $0 + 1 } ?? bytes.count
        var textEnd = newline ?? bytes.count
        while textEnd > start, bytes[textEnd - 1] == 0x0D || bytes[textEnd - 1] == 0x20 || bytes[textEnd - 1] == 0x09 { textEnd -= 1 }
        return (String(decoding: bytes[start..<textEnd], as: UTF8.self), start, position)
    }
}
