import CShims.Vips
import CVips
import Synchronization

/// Process-wide libvips state. `vips_init` may run once and `vips_shutdown` is final, so the runtime is
/// started on first use and never stopped.
public enum VipsRuntime {
    private static let started = Mutex<Result<Void, VipsError>?>(nil)

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
}

/// An error reported by libvips, with the text libvips left in its error buffer.
public struct VipsError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }

    public init(message: String) { self.message = message }

    /// Takes (and clears) libvips' error buffer. The buffer is process-wide, so under parallel work a
    /// message may be missing; `context` still says what failed.
    static func drain(_ context: String) -> VipsError {
        let text = String(cString: vips_error_buffer())
        vips_error_clear()
        let detail = text.split(separator: "\n").map { $0.trimmingCharacters(in: " \t") }.filter { !$0.isEmpty }
        return VipsError(message: detail.isEmpty ? context : "\(context): \(detail.joined(separator: "; "))")
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
