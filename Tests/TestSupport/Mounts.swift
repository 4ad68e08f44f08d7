import Foundation

/// A file system mounted for a test (a read-only view of a folder, a tiny tmpfs that fills up),
/// unmounted when the value goes away. Needs root with the right to mount, as CI runs the tests.
package final class TestMount: @unchecked Sendable {
    package let path: String

    /// True where this process may mount (root, CAP_SYS_ADMIN): the disk tests need it.
    package static let available: Bool = {
        let probe = TemporaryFolder()
        guard let mount = try? TestMount(tmpfsOfBytes: 65536, at: probe.path + "/probe") else { return false }
        _ = mount
        return true
    }()

    /// A read-only view of `folder` at `path` (a bind mount, remounted read-only).
    package init(readOnlyViewOf folder: String, at path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.mount(["--bind", folder, path])
        do { try Self.mount(["-o", "remount,ro,bind", path]) } catch {
            Self.unmount(path)
            throw error
        }
    }

    /// An empty tmpfs of `bytes` at `path`: a disk that fills up.
    package init(tmpfsOfBytes bytes: Int, at path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.mount(["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path])
    }

    deinit { Self.unmount(path) }

    package struct MountError: Error, CustomStringConvertible {
        package let description: String
    }

    private static func mount(_ arguments: [String]) throws {
        let status = runAndWait("/bin/mount", arguments)
        guard status == 0 else { throw MountError(description: "mount \(arguments.joined(separator: " ")) exited \(status)") }
    }

    private static func unmount(_ path: String) { _ = runAndWait("/bin/umount", ["-l", path]) }

    /// Short-lived and rare: waiting here holds a thread for a few milliseconds.
    private static func runAndWait(_ executable: String, _ arguments: [String]) -> Int32 {
        guard let process = try? ChildProcess(executable, arguments, stdout: .null, stderr: .null) else { return -1 }
        return process.wait().status
    }
}
