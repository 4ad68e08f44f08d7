import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The site's own image files, as originals: found by their site path, never through a link that
/// leaves the site, and recognised unchanged by size and modification time.
struct LocalFiles: Sendable {
    let site: String
    /// The site's real path: a file whose real path is not under it is outside the site.
    let realSite: String

    init(site: String) {
        self.site = site
        realSite = Self.realPath(site) ?? site
    }

    enum Lookup {
        case file(path: String, stamp: FileStamp)
        case problem(String)
    }

    /// The file at `path` (relative to the site), if it is a regular file inside the site.
    func locate(_ path: String) -> Lookup {
        let full = site + "/" + path
        var info = stat()
        guard stat(full, &info) == 0 else { return .problem("no such file in the site") }
        guard info.st_mode & S_IFMT == S_IFREG else { return .problem("not a regular file") }
        guard let real = Self.realPath(full), real.hasPrefix(realSite + "/") else {
            return .problem("a symbolic link to outside the site; not followed")
        }
        return .file(path: full, stamp: FileStamp(info))
    }

    /// How an original's record remembers the file it was read from.
    static func validator(_ stamp: FileStamp) -> String { "file:\(stamp.size):\(stamp.modified)" }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension ImageManager {
    /// A file of the site as an original. Unchanged since it was last read (same size and modification
    /// time): a `stat`. Touched but the same bytes: a read and a hash, no transform. Changed: a new
    /// original (its content hash names its blob, so its variants and file names are new too). No failure
    /// memory: a fixed file is looked at again by the next build.
    nonisolated func loadLocal(_ path: String, key: OriginalKey, force: Bool) async -> OriginalOutcome {
        guard let site else {
            return .failed(ImageFailure(reason: "local images are not read here", kind: .fetch(.final)))
        }
        let full: String, stamp: FileStamp
        switch site.locate(path) {
        case .file(let path, let found): (full, stamp) = (path, found)
        case .problem(let why): return .failed(ImageFailure(reason: why, kind: .fetch(.permanent)))
        }
        let validator = LocalFiles.validator(stamp)
        let known = force ? nil : try? await cache.original(key)
        if let known, known.validators.etag == validator, await cache.hasBlob(known.blob) {
            return .available(known, origin: .cached, credits: await cache.credits(of: known.blob) ?? Credits(), notes: [])
        }
        let bytes: [UInt8]
        do { bytes = try await transformer.readFile(full) } catch {
            return .failed(ImageFailure(reason: "cannot read the file (\(error.reason))", kind: .fetch(.permanent)))
        }
        var validators = Validators()
        validators.etag = validator
        let blob = BlobID(of: bytes)
        if let known, known.blob == blob, await cache.hasBlob(known.blob) {
            var touched = known
            touched.validators = validators
            await cache.revalidated(touched, now: now())
            return .available(touched, origin: .cached, credits: await cache.credits(of: known.blob) ?? Credits(), notes: [])
        }
        return await store(bytes, validators: validators, url: .local(path), key: key, notes: [], origin: .read, blob: blob)
    }
}
