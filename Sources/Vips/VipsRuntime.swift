import CShims.Vips
import CVips
import Locking

/// Process-wide libvips state. `vips_init` may run once and `vips_shutdown` is final, so the runtime is
/// started on first use and never stopped.
public enum VipsRuntime {
    private static let started = Locked<Result<Void, VipsError>?>(nil)

    /// Starts libvips with `threadsPerImage` worker threads per pipeline (callers run several images in
    /// parallel, so a small number is best), no operation cache, and only the loaders imgbake trusts.
    /// Later calls return the first call's result; every image constructor calls it, so libvips is
    /// never used uninitialised.
    public static func start(threadsPerImage: Int = 1) throws(VipsError) {
        let result = started.withLock { state -> Result<Void, VipsError> in
            if let state { return state }
            let result: Result<Void, VipsError> = imgbake_vips_start("imgbake", Int32(threadsPerImage)) == 0
                ? .success(()) : .failure(VipsError.drain("starting libvips"))
            state = result
            return result
        }
        try result.get()
    }

    /// The libvips version, e.g. "8.14.1"; part of every variant key so an upgrade re-encodes.
    public static var version: String {
        "\(vips_version(0)).\(vips_version(1)).\(vips_version(2))"
    }

    /// Whether this libvips can write `format` here. A 16 × 16 image is encoded, since a saver can be
    /// there while the library under it cannot encode (libheif without an AV1 encoder cannot make AVIF).
    public static func canEncode(_ format: EncodeFormat) -> Bool {
        guard (try? start()) != nil else { return false }
        var out: OpaquePointer?
        guard imgbake_vips_black(16, 16, 3, &out) == 0, let out else {
            vips_error_clear()
            return false
        }
        return (try? VipsImage(taking: out, source: nil).encoded(as: format)) != nil
    }
}

/// An error reported by libvips, with the text libvips left in its error buffer.
public struct VipsError: Error, CustomStringConvertible, Sendable {
    public let message: String
    /// What libvips said, without the context (nil when it said nothing that could be kept).
    public let detail: String?
    public var description: String { message }

    public init(message: String, detail: String? = nil) {
        self.message = message
        self.detail = detail
    }

    /// Takes (and clears) libvips' error buffer. The buffer is process-wide: under parallel work a
    /// message may be missing (`context` still says what failed), and lines from other images may be
    /// in it. With the `source` being decoded, lines that name another format's decoder are left out
    /// (a truncated WebP must not be reported with an AVIF's error), and so are libvips' own seek
    /// notes from trying loaders.
    static func drain(_ context: String, source: ImageBuffer? = nil) -> VipsError {
        let copy = vips_error_buffer_copy()
        let text = copy.map { String(cString: $0) } ?? ""
        g_free(copy)
        let own = source.flatMap(DecoderFamily.of(buffer:))
        let kept = text.split(separator: "\n").map { $0.trimmingCharacters(in: " \t") }.filter { line in
            guard !line.isEmpty, !line.hasPrefix("source: ") else { return false }
            guard let own, let family = DecoderFamily.of(line: line) else { return true }
            return family == own
        }
        let detail = kept.isEmpty ? nil : kept.joined(separator: "; ")
        return VipsError(message: detail.map { "\(context): \($0)" } ?? context, detail: detail)
    }
}

/// Which decoder a buffer goes to (by its first bytes, as libvips chooses) and which decoder an error
/// line comes from (by the prefix libvips' loaders and their libraries write).
enum DecoderFamily: String {
    case jpeg, png, gif, webp, heif

    static func of(buffer: ImageBuffer) -> DecoderFamily? {
        buffer.withUnsafeBytes { b in
            func starts(_ magic: String, at offset: Int = 0) -> Bool {
                b.count >= offset + magic.utf8.count && b[offset..<offset + magic.utf8.count].elementsEqual(magic.utf8)
            }
            if b.count >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF { return .jpeg }
            if b.count >= 4 && b[0] == 0x89 && starts("PNG", at: 1) { return .png }
            if starts("GIF8") { return .gif }
            if starts("RIFF") && starts("WEBP", at: 8) { return .webp }
            if starts("ftyp", at: 4) { return .heif }
            return nil
        }
    }

    static func of(line: String) -> DecoderFamily? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let prefix = line[..<colon].lowercased()
        let families: [(DecoderFamily, [String])] = [(.jpeg, ["vipsjpeg", "jpeg"]), (.png, ["vipspng", "png", "spng"]),
                                                      (.gif, ["gif", "nsgif"]), (.webp, ["webp"]), (.heif, ["heif"])]
        return families.first { $0.1.contains { prefix.hasPrefix($0) } }?.0
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
