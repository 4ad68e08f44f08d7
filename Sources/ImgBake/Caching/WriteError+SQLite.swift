import SQLite
#if canImport(Glibc)
import Glibc
#endif

/// The cache index's writes fail as SQLite errors; said as the write errors they are, they name the
/// index file and the system's reason like every other writer.
extension WriteError {
    /// What an SQLite failure to write its database file means, in the system's words: SQLITE_FULL is a
    /// full disk (ENOSPC); SQLITE_READONLY a file or folder that cannot be written (which of them, and
    /// why, asked of the system); SQLITE_CANTOPEN and SQLITE_IOERR carry the errno of the call that
    /// failed (a quota, EDQUOT, is an I/O error to SQLite). Nil for any other SQLite error.
    init?(_ error: SQLiteError, path: String) {
        let code = error.systemErrno
        switch error.primaryCode {
        case SQLiteError.full:
            // SQLite's own word for ENOSPC (it keeps no errno for it).
            self.init(path: path, errno: ENOSPC)
        case SQLiteError.readOnly:
            // SQLite opened the file read-only without saying so; the system tells why it could not write.
            if access(path, W_OK) != 0 && errno != ENOENT {
                self.init(path: path, errno: errno)
            } else if access(AtomicFile.folder(of: path), W_OK) != 0 {
                self.init(path: path, errno: errno)
            } else {
                self.init(path: path, reason: "the database is read-only (\(error.message))")
            }
        case SQLiteError.cannotOpen, SQLiteError.ioError:
            guard code != 0 else { return nil }
            self.init(path: path, errno: code)
        default:
            return nil
        }
    }
}
