import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file or folder that could not be written, and why: the path once and the system's reason once,
/// the same from every writer (pages, image files, mirrored files, cache blobs and index, reports,
/// depfiles), so a full disk, a read-only mount, a folder without permission or a quota reads alike
/// wherever it is met:
///
///     cannot write public/_img/hubble-e410a64f5b-1000.webp: No space left on device
///     cannot create folder public/_img: Read-only file system
///
/// Callers pass it on as it is (`BuildError(_:)`, a warning's text): wrapped in another "cannot
/// write", the message would name the path twice.
struct WriteError: Error, CustomStringConvertible, Sendable, Equatable {
    enum Operation: Sendable, Equatable { case write, createFolder }

    let path: String
    /// The system's words (`strerror`): "No space left on device", "Read-only file system",
    /// "Permission denied", "Disk quota exceeded"; or a short phrase where no system call failed.
    let reason: String
    var operation = Operation.write

    init(path: String, reason: String, operation: Operation = .write) {
        self.path = path
        self.reason = reason
        self.operation = operation
    }

    /// From the `errno` a failed system call left (read it before anything else can change it).
    init(path: String, errno code: Int32, operation: Operation = .write) {
        self.init(path: path, reason: String(cString: strerror(code)), operation: operation)
    }

    var description: String {
        switch operation {
        case .write: "cannot write \(path): \(reason)"
        case .createFolder: "cannot create folder \(path): \(reason)"
        }
    }
}
