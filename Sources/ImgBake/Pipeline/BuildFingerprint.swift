/// Everything that changes what a page or an image becomes, hashed: when it differs from a page's
/// last build, the page is built again. Fetch settings (timeouts, retries) are left out; the key
/// rules are in, since they decide which images pages get.
enum BuildFingerprint {
    static func of(_ config: Configuration, templates: MarkupRenderer) -> String {
        let o = config.output, i = config.images, f = config.fetch
        let parts: [String] = [
            "imgbake \(SystemInfo.version)", VariantSpec.salt, templates.digest,
            "images_dir=\(o.imagesDirectory)", "public_path=\(o.publicPath)", "markup=\(o.markup.rawValue)",
            "markdown=\(o.markdown.rawValue)", "sizes=\(o.sizes)", "eager=\(o.eager)",
            "widths=\(i.widths)", "formats=\(i.formats.map(\.rawValue))", "fallback=\(i.fallback.rawValue),\(i.fallbackWidth)",
            "quality=\(i.quality.webp),\(i.quality.avif),\(i.quality.jpeg),\(i.quality.jxl)", "keep=\(i.keepMetadata.sorted())",
            "max_pixels=\(i.maxPixels)", "max_frames=\(i.maxFrames)", "placeholder=\(i.placeholder.rawValue)", "svg=\(i.svg.rawValue)",
            "local=\(i.local)", "front_matter=\(i.frontMatterKeys)", "base_url=\(o.baseURL?.string ?? "")", "site_root=\(o.siteRoot)",
            "image_links=\(o.imageLinks.rawValue)", "originals=\(o.originals.rawValue)",
            "fold=\(o.foldBytes)", "lcp=\(o.lcp.rawValue)", "inline=\(o.inlineBytes)", "relative=\(o.relativeURLs)", "exclude=\(config.exclude.map { $0.pattern })",
            "strip_query=\(f.stripQuery)",
            "key_rules=\(f.hostRules.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" })",
        ]
        return BlobID(of: Array(parts.joined(separator: "\n").utf8)).hex
    }
}
