import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a site folder holds: its pages (`*.html`, `*.htm`, `*.md`, `*.markdown`) and every other file
/// (copied to `--out` as they are), outside hidden folders, the images folder and the output folder
/// when that lies inside the site. `imgbake.toml` is the build's, not the site's.
///
/// Symbolic links are followed while they stay inside the site, and a folder is walked once however
/// many links lead to it; a link out of the site, a link loop, a dangling link, a socket, a FIFO, a
/// device or an unreadable folder is a warning naming the path, and the walk goes on.
struct SiteInventory: Sendable {
    /// Paths relative to the site, sorted, with `/` separators.
    var pages: [String]
    var otherFiles: [String]
    /// Every folder walked (relative; "" is the site itself): a file added or removed changes one.
    var folders: [String]
    /// Pages reached through a symbolic link: read, but never rewritten in place (that would replace
    /// the link with a file; the page it points at is in the site and is rewritten on its own).
    var linkedPages: Set<String> = []
    var diagnostics: [Diagnostic] = []
    /// Aligned with `pages + otherFiles`: each file's stamp, and its copy's in the output (`--out`).
    var stamps: [FileStamps] = []

    /// A file's stamp in the site, and its copy's in the output; nil where there is none.
    struct FileStamps: Sendable, Equatable {
        var site: FileStamp?
        var output: FileStamp?
    }

    /// Every file's stamps, on `pool`'s threads: a `stat` or two per file is most of what a build of a
    /// large unchanged site does.
    private mutating func takeStamps(site: String, output: String?, on pool: WorkerPool) async {
        let site = site + "/", output = output.map { $0 + "/" }
        stamps = await (pages + otherFiles).map(slicesOf: 512, on: pool) { slice in
            slice.map { path in FileStamps(site: FileStamp.of(site + path), output: output.flatMap { FileStamp.of($0 + path) }) }
        }
    }

    /// What a walk leaves out, and where the copies of the site's files are.
    struct Options: Sendable {
        /// Folders not walked (the images folder, the output).
        var skipped: [String] = []
        /// Pages that match are listed as other files: copied, never read or rewritten.
        var excluded: [Glob] = []
        /// Where copies of the site's files are (`--out`), to take their stamps too.
        var output: String?
    }

    /// The folders are listed on one of `pool`'s threads, the files' stamps taken on all of them.
    static func walk(_ site: String, _ options: Options = Options(), on pool: WorkerPool) async -> SiteInventory {
        var inventory = await pool.run {
            var walker = Walker(root: URL(fileURLWithPath: site).standardizedFileURL.path,
                                skipped: options.skipped.map { URL(fileURLWithPath: $0).standardizedFileURL.path }, excluded: options.excluded)
            walker.walk()
            return walker.inventory
        }
        inventory.pages.sort()
        inventory.otherFiles.sort()
        inventory.folders.sort()
        await inventory.takeStamps(site: site, output: options.output, on: pool)
        return inventory
    }
}

private struct Walker {
    let root: String
    /// The site's real path, to tell whether a link's target is inside it.
    let realRoot: String
    let skipped: [String]
    let excluded: [Glob]
    var inventory = SiteInventory(pages: [], otherFiles: [], folders: [])
    /// Folders walked, by device and inode: a folder reached again (a link loop) is not walked twice.
    var visited: Set<[UInt64]> = []
    /// Links to folders, walked after every real folder, so a folder is listed under its own path
    /// rather than under a link to it.
    var deferred: [(relative: String, target: String)] = []

    init(root: String, skipped: [String], excluded: [Glob]) {
        self.root = root
        self.skipped = skipped
        self.excluded = excluded
        realRoot = Self.realPath(root) ?? root
    }

    mutating func walk() {
        var info = stat()
        guard stat(root, &info) == 0 else { return }
        visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)])
        inventory.folders.append("")
        walk(folder: "")
        while !deferred.isEmpty {
            let (relative, target) = deferred.removeFirst()
            followLinkedFolder(relative, target)
        }
    }

    private mutating func followLinkedFolder(_ relative: String, _ target: String) {
        var info = stat()
        guard stat(root + "/" + relative, &info) == 0 else { return }
        // The folder the link is in, for real: a link to it or to one of its ancestors is a loop.
        if let parent = Self.realPath(PathName.parent(root + "/" + relative)),
           parent == target || parent.hasPrefix(target + "/") {
            return warn(relative, "symbolic link loop (points back up to \(display(target))); not followed")
        }
        guard visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else {
            return note(relative, "symbolic link to \(display(target)), which is walked already; not followed again")
        }
        inventory.folders.append(relative)
        walk(folder: relative)
    }

    /// A real path inside the site, as the site names it.
    private func display(_ real: String) -> String {
        real == realRoot ? "the site folder" : String(real.dropFirst(realRoot.count + 1))
    }

    private mutating func walk(folder relative: String) {
        let path = relative.isEmpty ? root : root + "/" + relative
        guard let directory = opendir(path) else {
            warn(relative, "cannot read the folder (\(String(cString: strerror(errno)))); skipped")
            return
        }
        var entries: [(name: String, type: UInt8)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { entries.append((name, entry.pointee.d_type)) }
        }
        closedir(directory)
        for (name, type) in entries.sorted(by: { $0.name < $1.name }) where !name.hasPrefix(".") {
            let child = relative.isEmpty ? name : relative + "/" + name
            let full = root + "/" + child
            if skipped.contains(where: { full == $0 || full.hasPrefix($0 + "/") }) { continue }
            visit(child, full, regular: type == UInt8(DT_REG))
        }
    }

    /// `regular`: the folder listing says so, and it needs no `lstat` (a site of 10,000 pages spent a
    /// tenth of a no-op build on them).
    private mutating func visit(_ relative: String, _ full: String, regular: Bool) {
        if regular { return place(relative, isLink: false) }
        var link = stat()
        guard lstat(full, &link) == 0 else { return warn(relative, "cannot read (\(String(cString: strerror(errno)))); skipped") }
        let isLink = link.st_mode & S_IFMT == S_IFLNK
        var info = link
        if isLink {
            guard stat(full, &info) == 0 else {
                return warn(relative, errno == ELOOP ? "symbolic link loop; skipped" : "dangling symbolic link; skipped")
            }
            guard let target = Self.realPath(full), target == realRoot || target.hasPrefix(realRoot + "/") else {
                return warn(relative, "symbolic link to outside the site; not followed")
            }
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR where isLink:
            deferred.append((relative, Self.realPath(full) ?? full))
        case S_IFDIR:
            guard visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else { return }
            inventory.folders.append(relative)
            walk(folder: relative)
        case S_IFREG:
            place(relative, isLink: isLink)
        default:
            warn(relative, "not a regular file or folder (a socket, FIFO or device); skipped")
        }
    }

    private mutating func place(_ relative: String, isLink: Bool) {
        if SourceFile.kind(forPath: relative) != nil && !excluded.contains(where: { $0.matches(relative) }) {
            inventory.pages.append(relative)
            if isLink { inventory.linkedPages.insert(relative) }
        } else if relative != ConfigurationFile.defaultName {
            inventory.otherFiles.append(relative)
        }
    }

    private mutating func warn(_ relative: String, _ message: String) {
        inventory.diagnostics.append(Diagnostic(.warning, "\(relative): \(message)"))
    }

    private mutating func note(_ relative: String, _ message: String) {
        inventory.diagnostics.append(Diagnostic(.note, "\(relative): \(message)"))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
