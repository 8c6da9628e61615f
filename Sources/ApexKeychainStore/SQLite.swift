import CSQLite
import Foundation

/// `SQLITE_TRANSIENT`: the macro doesn't import, and SQLite must copy bound buffers that Swift may free.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A failed SQLite call: the result code and SQLite's message. Bound values never appear in it.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    /// The `errno` of the failed system call behind the error, or 0.
    var systemError: Int32 = 0
    var description: String { "SQLite error \(code): \(message)" }
    /// The primary result code (`SQLITE_READONLY` for `SQLITE_READONLY_DIRECTORY`).
    var primary: Int32 { code & 0xFF }
    var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }
}

/// One SQLite connection. Not thread-safe: its owner serialises every use.
final class Connection {
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]

    /// Opens `path`, a file path, or a `file:` URI when `flags` has `SQLITE_OPEN_URI`.
    init(path: String, flags: Int32) throws(SQLiteError) {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            let systemError = db.map { sqlite3_system_errno($0) } ?? 0
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message, systemError: systemError)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    /// The `file:` URI that opens the file at `path` read-only as immutable: SQLite takes no lock and reads
    /// neither a WAL nor a shared-memory file, so it needs no write access to the folder.
    static func immutableURI(path: String) -> String {
        var encoded = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": encoded += "%25"
            case "?": encoded += "%3F"
            case "#": encoded += "%23"
            default: encoded.unicodeScalars.append(character)
            }
        }
        // "file://" and an empty authority before an absolute path, so that a path starting with "//" stays a path.
        return (path.hasPrefix("/") ? "file://" : "file:") + encoded + "?immutable=1"
    }

    /// Whether the connection can only read (SQLite opened the file read-only).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// A prepared statement for `sql`, prepared once and reused.
    func statement(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw error(rc) }
        let statement = Statement(raw, connection: self)
        statements[sql] = statement
        return statement
    }

    var changes: Int { Int(sqlite3_changes(handle)) }

    func error(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), systemError: sqlite3_system_errno(handle))
    }
}

@available(*, unavailable)
extension Connection: Sendable {}

/// A prepared statement: bind, step, read columns. Owned by its connection.
final class Statement {
    private let raw: OpaquePointer
    private unowned let connection: Connection

    init(_ raw: OpaquePointer, connection: Connection) {
        self.raw = raw
        self.connection = connection
    }

    deinit { sqlite3_finalize(raw) }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    func bind(_ index: Int32, _ value: String?) {
        guard let value else { sqlite3_bind_null(raw, index); return }
        var copy = value
        copy.withUTF8 { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                _ = sqlite3_bind_text(raw, index, "", 0, sqliteTransient)
                return
            }
            base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                _ = sqlite3_bind_text(raw, index, chars, Int32(buffer.count), sqliteTransient)
            }
        }
    }

    func bind(_ index: Int32, _ value: Int64?) {
        guard let value else { sqlite3_bind_null(raw, index); return }
        sqlite3_bind_int64(raw, index, value)
    }

    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(raw, index, value) }

    func bind(_ index: Int32, _ value: Data?) {
        guard let value else { sqlite3_bind_null(raw, index); return }
        value.withUnsafeBytes { buffer in
            _ = sqlite3_bind_blob(raw, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), sqliteTransient)
        }
    }

    /// Steps once: true when a row is ready, false when done.
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(raw)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc)
        }
    }

    /// Runs a statement that returns no rows, and resets it.
    func run() throws(SQLiteError) {
        defer { sqlite3_reset(raw) }
        while try step() {}
    }

    /// Steps to the first row, reads it with `read`, and resets the statement, so that no read transaction
    /// stays open on the connection (an open one pins an old snapshot and blocks a later write with BUSY).
    func firstRow<T>(_ read: (Statement) throws(SQLiteError) -> T) throws(SQLiteError) -> T? {
        defer { sqlite3_reset(raw) }
        guard try step() else { return nil }
        return try read(self)
    }

    /// Reads every row with `read`, then resets the statement.
    func allRows<T>(_ read: (Statement) throws -> T) throws -> [T] {
        defer { sqlite3_reset(raw) }
        var rows: [T] = []
        while try step() { rows.append(try read(self)) }
        return rows
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(raw, column) else { return nil }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    func double(_ column: Int32) -> Double { sqlite3_column_double(raw, column) }

    func data(_ column: Int32) -> Data? {
        guard sqlite3_column_type(raw, column) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let bytes = sqlite3_column_blob(raw, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

@available(*, unavailable)
extension Statement: Sendable {}
