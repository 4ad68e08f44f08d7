/// The UTF-8 byte order mark, which some editors write at the start of a text file. Every reader that
/// skips it (TOML, front matter, XML and JSON feeds, the SVG sniffer) asks here, so that a file with
/// one is read alike by each; gumbo and cmark-gfm skip it themselves, and the CSS scanner need not
/// (`url(` cannot start at a BOM). Rewriting keeps it: edits touch only the references' bytes.
enum ByteOrderMark {
    static let utf8: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// How many bytes a UTF-8 byte order mark takes at the start of `bytes`: 3 or 0.
    static func length(_ bytes: some Collection<UInt8>) -> Int { bytes.starts(with: utf8) ? utf8.count : 0 }
}
