/// `--depfile FILE`: a Make rule naming FILE as the target and everything the build read as its
/// prerequisites — pages, other site files (copied by `--out`), folders (a file added or removed
/// changes one), the configuration file and templates. FILE is written last, so it is newer than all
/// of them; with `-include FILE` in a Makefile, `make` runs imgbake again only when one changed:
///
///     public/.imgbake.d:
///     	imgbake build site --out public --depfile public/.imgbake.d
///     -include public/.imgbake.d
///
/// Remote images are not files make can see: `--refresh` (or the TTL) keeps them current.
enum Depfile {
    /// Writes the rule (atomically), creating the folder it goes in.
    static func write(to target: String, prerequisites: [String]) throws(BuildError) {
        do {
            try AtomicFile.makeDirectory(AtomicFile.folder(of: target))
            try AtomicFile.write(Array(contents(target: target, prerequisites: prerequisites).utf8), to: target, durable: false)
        } catch {
            throw BuildError(error)
        }
    }

    static func contents(target: String, prerequisites: [String]) -> String {
        var text = escape(target) + ":"
        for path in prerequisites { text += " \\\n  " + escape(path) }
        text += "\n"
        // An empty rule per prerequisite, so a deleted file does not stop make (like gcc -MP).
        for path in prerequisites { text += "\n" + escape(path) + ":\n" }
        return text
    }

    /// Make's escaping: spaces and `#` with a backslash, `$` doubled.
    static func escape(_ path: String) -> String {
        var out = ""
        for c in path {
            switch c {
            case " ": out += "\\ "
            case "#": out += "\\#"
            case "$": out += "$$"
            default: out.append(c)
            }
        }
        return out
    }

    /// `site/a.html` for a site given as `site`, without `./` noise.
    static func join(_ folder: String, _ relative: String) -> String {
        let base = folder == "." ? "" : (folder.hasSuffix("/") ? String(folder.dropLast()) : folder)
        if relative.isEmpty { return base.isEmpty ? "." : base }
        return base.isEmpty ? relative : base + "/" + relative
    }
}
