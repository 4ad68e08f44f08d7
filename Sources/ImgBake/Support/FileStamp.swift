import Foundation

/// A file's size and modification time: with both unchanged, a file is taken to be unchanged without
/// reading it (what make and rsync do).
struct FileStamp: Sendable, Codable, Equatable {
    var size: Int
    var modified: Int64

    /// Not known (a page never read, or one whose file the build left in doubt): equal to no file's.
    static let unknown = FileStamp(size: -1, modified: -1)

    /// The file's size and modification time, or nil when it does not exist.
    static func of(_ path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileStamp(info)
    }

}

extension FileStamp {
    /// From what `stat`/`fstat` said of a file.
    init(_ info: stat) {
        self.init(size: Int(info.st_size), modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }
}
