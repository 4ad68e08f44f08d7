import CShims.SQLite
import CSQLite

/// An error from SQLite, with its result code and message.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    /// The errno of the system call that failed under an SQLITE_IOERR or SQLITE_CANTOPEN (a quota
    /// exceeded, a file that cannot be created), else 0: what tells the user why a write failed.
    public var systemErrno: Int32 = 0
    public var description: String { "SQLite error \(code): \(message)" }
    /// The database was locked by another connection for longer than the busy timeout.
    public var isBusy: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }

    public init(code: Int32, message: String, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.systemErrno = systemErrno
    }

    /// The last error of connection `db`: its message and the errno under it.
    init(code: Int32, connection db: OpaquePointer) {
        self.init(code: code, message: String(cString: sqlite3_errmsg(db)), systemErrno: sqlite3_system_errno(db))
    }

    /// The result code without its extended part (SQLITE_IOERR for SQLITE_IOERR_WRITE).
    public var primaryCode: Int32 { code & 0xff }
    public static let full = SQLITE_FULL, readOnly = SQLITE_READONLY, cannotOpen = SQLITE_CANTOPEN, ioError = SQLITE_IOERR
}

/// A value bound to or read from a statement.
public enum SQLValue: Sendable, Equatable {
    case integer(Int)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case null
}

/// Owner of one SQLite connection. Not `Sendable`: a connection is used from one thread at a time;
/// callers serialise access (the cache index wraps it in a mutex).
public final class Database {
    private let handle: OpaquePointer
    private var statements: [String: Statement] = [:]

    /// Opens (creating if needed) the database at `path`, waiting up to `busyTimeoutMilliseconds` when
    /// another process holds the write lock.
    ///
    /// `immutable`: open a file that cannot change while it is open (on a read-only file system or
    /// folder) for reading only, without the locks and the WAL index SQLite would otherwise create
    /// beside it.
    public init(path: String, busyTimeoutMilliseconds: Int32 = 30_000, immutable: Bool = false) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = immutable ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
                              : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let name = immutable ? "file:" + Self.uriPath(path) + "?immutable=1" : path
        let status = sqlite3_open_v2(name, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let error = db.map { SQLiteError(code: status, connection: $0) } ?? SQLiteError(code: status, message: "cannot open \(path)")
            if let db { sqlite3_close_v2(db) }
            throw error
        }
        handle = db
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(db, 1)
    }

    /// The version of the SQLite library this process runs with, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// A path as the path part of a `file:` URI.
    static func uriPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7f...:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            default:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &error)
        guard status == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(error)
            throw SQLiteError(code: status, message: message, systemErrno: sqlite3_system_errno(handle))
        }
    }

    /// Runs `sql` with `values` bound and returns every row.
    @discardableResult
    public func query(_ sql: String, _ values: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [[SQLValue]] = []
        while try statement.step() { rows.append(statement.row) }
        return rows
    }

    /// Runs `body` in a transaction. `immediate` takes the write lock at the start, so two writers
    /// wait for each other at BEGIN instead of failing at COMMIT.
    public func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    private var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    private func prepared(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = statements[sql] { return statement }
        var pointer: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard status == SQLITE_OK, let pointer else { throw SQLiteError(code: status, connection: handle) }
        let statement = Statement(pointer, database: handle)
        statements[sql] = statement
        return statement
    }
}

/// Owner of one prepared statement; finalized in `deinit`.
final class Statement {
    private let pointer: OpaquePointer
    private let database: OpaquePointer

    init(_ pointer: OpaquePointer, database: OpaquePointer) {
        self.pointer = pointer
        self.database = database
    }

    deinit { sqlite3_finalize(pointer) }

    func bind(_ values: [SQLValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32 = switch value {
            case .integer(let v): sqlite3_bind_int64(pointer, index, sqlite3_int64(v))
            case .real(let v): sqlite3_bind_double(pointer, index, v)
            case .text(let v):
                v.utf8CString.withUnsafeBufferPointer { imgbake_sqlite3_bind_text(pointer, index, $0.baseAddress, Int32($0.count - 1)) }
            case .blob(let v): v.withUnsafeBytes { imgbake_sqlite3_bind_blob(pointer, index, $0.baseAddress, Int32($0.count)) }
            case .null: sqlite3_bind_null(pointer, index)
            }
            guard status == SQLITE_OK else { throw SQLiteError(code: status, connection: database) }
        }
    }

    /// Advances; true when a row is available.
    func step() throws(SQLiteError) -> Bool {
        let status = sqlite3_step(pointer)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(code: status, connection: database)
        }
    }

    func reset() {
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
    }

    var row: [SQLValue] {
        (0..<sqlite3_column_count(pointer)).map { column in
            switch sqlite3_column_type(pointer, column) {
            case SQLITE_INTEGER: .integer(Int(sqlite3_column_int64(pointer, column)))
            case SQLITE_FLOAT: .real(sqlite3_column_double(pointer, column))
            case SQLITE_TEXT: .text(String(cString: sqlite3_column_text(pointer, column)))
            case SQLITE_BLOB:
                .blob(Array(UnsafeRawBufferPointer(start: sqlite3_column_blob(pointer, column),
                                                   count: Int(sqlite3_column_bytes(pointer, column)))))
            default: .null
            }
        }
    }
}

extension SQLValue {
    public var int: Int? { if case .integer(let v) = self { v } else { nil } }
    public var string: String? { if case .text(let v) = self { v } else { nil } }
    public var double: Double? {
        switch self {
        case .real(let v): v
        case .integer(let v): Double(v)
        default: nil
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
