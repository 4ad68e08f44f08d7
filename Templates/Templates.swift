/// The default markup templates (the `.mustache` files in this folder), compiled into the binary.
public enum DefaultTemplates {
    /// Template name (file name without `.mustache`) → template text, one trailing newline removed.
    public static let all: [String: String] = [
        "picture": text(PackageResources.picture_mustache),
        "img": text(PackageResources.img_mustache),
        "img-attributes": text(PackageResources.img_attributes_mustache),
    ]

    /// The `--report FILE.html` page (not replaceable: it is imgbake's, not the site's).
    public static let report = text(PackageResources.report_mustache)

    private static func text(_ bytes: [UInt8]) -> String {
        var s = String(decoding: bytes, as: UTF8.self)
        if s.hasSuffix("\n") { s.removeLast() }
        return s
    }
}
