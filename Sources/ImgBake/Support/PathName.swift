/// The parts of a `/`-separated path, as `NSString`'s path methods give them. Written here because
/// Foundation on Linux (Swift 6.3) traps in `deletingLastPathComponent` for a one-character path or
/// one ending in a slash: `imgbake build s --out o` crashed.
enum PathName {
    /// The folder `path` is in: `""` for a bare name, `"/"` for a name at the root; trailing slashes
    /// do not count.
    static func parent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(Substring(path))
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let parent = withoutTrailingSlashes(trimmed[..<slash])
        return parent.isEmpty ? "/" : String(parent)
    }

    /// The last component of `path`, trailing slashes not counted.
    static func name(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(Substring(path))
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return trimmed == "/" ? "/" : String(trimmed[trimmed.index(after: slash)...])
    }

    private static func withoutTrailingSlashes(_ path: Substring) -> Substring {
        var path = path
        while path.count > 1, path.last == "/" { path = path.dropLast() }
        return path
    }
}
