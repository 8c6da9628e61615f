import CSQLite
import Foundation

/// `SQLITE_TRANSIENT`: the macro doesn't import, and SQLite must copy bound buffers that Swift may free.
/// The one definition in the package (the benchmark's raw floors take it from here too).
package let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The 16 bytes every SQLite database file starts with.
package let sqliteMagic = Data("SQLite format 3\0".utf8)

/// A failed SQLite call: the result code, SQLite's message and the SQL that failed. A bound value never appears
/// in it: SQLite's messages name columns and constraints, not values, and the SQL holds `?` for every parameter.
package struct SQLiteError: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    /// The result code, extended when the connection asked for extended codes.
    package let code: Int32
    /// `sqlite3_errmsg` (or `sqlite3_errstr` when there is no connection to ask).
    package let message: String
    /// The SQL of the statement that failed, or "" for a call that has none (opening, loading an image).
    package let sql: String
    /// The `errno` of the failed system call behind the error, or 0.
    package var systemError: Int32 = 0

    package init(code: Int32, message: String, sql: String = "", systemError: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemError = systemError
    }

    package var description: String { "SQLite error \(code): \(message)" }
    package var debugDescription: String { sql.isEmpty ? description : "\(description) (in: \(sql))" }
    /// The primary result code (`SQLITE_READONLY` for `SQLITE_READONLY_DIRECTORY`).
    package var primary: Int32 { code & 0xFF }
    package var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }
    /// SQLite's English text for the result code (`sqlite3_errstr`), which never quotes the database.
    package var codeText: String { String(cString: sqlite3_errstr(code)) }
}

/// The text of a statement that a connection prepares once and keeps: made once (a `static let`, or a property of
/// whoever owns the connection) and found again in the connection's cache by identity, never by comparing text.
package final class SQL: Sendable {
    /// The statement's text.
    package let text: String

    package init(_ text: String) { self.text = text }
}

/// How `BEGIN` takes its locks.
package enum TransactionKind: String, Sendable {
    case deferred = "DEFERRED"
    case immediate = "IMMEDIATE"
    case exclusive = "EXCLUSIVE"

    fileprivate static let beginSQL = [
        TransactionKind.deferred: SQL("BEGIN DEFERRED"), .immediate: SQL("BEGIN IMMEDIATE"),
        .exclusive: SQL("BEGIN EXCLUSIVE"),
    ]
    /// `BEGIN` of this kind.
    fileprivate var begin: SQL { Self.beginSQL[self]! }
}

/// One SQLite connection. Not thread-safe: its owner serialises every use.
package final class Connection {
    package let handle: OpaquePointer
    /// The statements prepared once, by their ``SQL``'s identity; each entry keeps its ``SQL``, so that the
    /// identity is not reused while the statement is cached.
    private var statements: [ObjectIdentifier: (sql: SQL, statement: Statement)] = [:]
    /// What the connection reads and must outlive it (an in-memory image); released after the close in `deinit`.
    private var retained: AnyObject?
    /// How many ``savepoint(_:)``s are open, for their names.
    private var savepointDepth = 0
    /// The statements of the savepoint at each depth opened so far (``savepointSQL(_:)``).
    private var savepointStatements: [(begin: SQL, release: SQL, rollback: SQL)] = []

    /// Opens `path`, a file path, or a `file:` URI when `flags` has `SQLITE_OPEN_URI`. `SQLITE_OPEN_NOMUTEX` is
    /// always added. With `extendedResultCodes`, errors carry extended result codes.
    package init(path: String, flags: Int32, extendedResultCodes: Bool = true) throws(SQLiteError) {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            let systemError = db.map { sqlite3_system_errno($0) } ?? 0
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message, systemError: systemError)
        }
        handle = db
        if extendedResultCodes { sqlite3_extended_result_codes(db, 1) }
    }

    /// A connection on a database image in memory (SQLite's memdb, `sqlite3_deserialize`), read-only: SQLite
    /// neither writes, grows nor frees the `count` bytes at `bytes`, which must not move while the connection
    /// lives. `owner` (the image's owner) is kept until the connection is closed.
    package static func readOnlyImage(
        _ bytes: UnsafeMutableRawPointer, count: Int, owner: AnyObject?, extendedResultCodes: Bool = false
    ) throws(SQLiteError) -> Connection {
        let connection = try Connection(
            path: ":memory:", flags: SQLITE_OPEN_READWRITE, extendedResultCodes: extendedResultCodes)
        let size = Int64(count)
        let rc = sqlite3_deserialize(
            connection.handle, "main", bytes.assumingMemoryBound(to: UInt8.self), size, size,
            UInt32(SQLITE_DESERIALIZE_READONLY))
        guard rc == SQLITE_OK else { throw connection.error(rc) }
        connection.retained = owner
        return connection
    }

    /// The `file:` URI that opens the file at `path` read-only as immutable: SQLite takes no lock and reads
    /// neither a WAL nor a shared-memory file, so it needs no write access to the folder.
    package static func immutableURI(path: String) -> String {
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
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// How long a statement waits for another connection's lock before it fails with `SQLITE_BUSY`.
    package func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// A prepared statement for `sql`, prepared once and reused (reset and unbound each time it is handed out).
    package func statement(_ sql: SQL) throws(SQLiteError) -> Statement {
        let id = ObjectIdentifier(sql)
        if let cached = statements[id] {
            cached.statement.reset()
            return cached.statement
        }
        let statement = try prepare(sql.text, flags: UInt32(SQLITE_PREPARE_PERSISTENT), keepsConnection: false)
        statements[id] = (sql, statement)
        return statement
    }

    /// A statement for `sql` that is not cached: it is finalised when released, and keeps the connection open
    /// until then.
    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try prepare(sql, flags: 0, keepsConnection: true)
    }

    private func prepare(_ sql: String, flags: UInt32, keepsConnection: Bool) throws(SQLiteError) -> Statement {
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, flags, &raw, nil)
        guard rc == SQLITE_OK, let raw else {
            if let raw { sqlite3_finalize(raw) }
            // No statement without an error: the SQL was empty or only a comment.
            throw error(rc == SQLITE_OK ? SQLITE_ERROR : rc, sql: sql)
        }
        return Statement(raw, sql: sql, connection: self, keepsConnection: keepsConnection)
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// The error for `rc`, with the connection's message and `errno`.
    package func error(_ rc: Int32, sql: String = "") -> SQLiteError {
        SQLiteError(
            code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql,
            systemError: sqlite3_system_errno(handle))
    }

    // MARK: Transactions

    /// Whether a transaction is open (`sqlite3_get_autocommit` says the connection is not in autocommit mode).
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// `BEGIN`, retried up to `busyRetries` times (after 1 ms, 2 ms, …) while another connection holds a lock
    /// beyond the busy timeout.
    package func begin(_ kind: TransactionKind = .deferred, busyRetries: Int = 0) throws(SQLiteError) {
        var attempt = 0
        while true {
            do {
                try statement(kind.begin).run()
                return
            } catch  where error.isBusy && attempt < busyRetries {
                attempt += 1
                usleep(useconds_t(1000 * attempt))
            }
        }
    }

    private static let commitSQL = SQL("COMMIT")
    private static let rollbackSQL = SQL("ROLLBACK")

    package func commit() throws(SQLiteError) {
        try statement(Self.commitSQL).run()
    }

    /// `ROLLBACK`, when a transaction is open: SQLite may have rolled it back already (after `SQLITE_FULL`, an
    /// I/O error, `SQLITE_NOMEM`…), and then there is nothing to undo.
    package func rollbackIfOpen() {
        guard isInTransaction else { return }
        try? statement(Self.rollbackSQL).run()
    }

    /// Runs `body` in a transaction and commits, or rolls back and rethrows `body`'s error. Inside a transaction
    /// already open, `body` runs in a ``savepoint(_:)`` instead: its failure undoes only its own writes.
    package func transaction<T>(
        _ kind: TransactionKind = .deferred, busyRetries: Int = 0, _ body: () throws -> T
    ) throws -> T {
        if isInTransaction { return try savepoint(body) }
        try begin(kind, busyRetries: busyRetries)
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollbackIfOpen()
            throw error
        }
    }

    /// Runs `body` between `SAVEPOINT` and `RELEASE`; when it throws, rolls back to the savepoint (if the
    /// transaction is still open) and rethrows. Outside a transaction, the savepoint begins one (deferred).
    package func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let sql = savepointSQL(savepointDepth)
        try statement(sql.begin).run()
        do {
            let result = try body()
            try statement(sql.release).run()
            return result
        } catch {
            if isInTransaction {
                try? statement(sql.rollback).run()
                try? statement(sql.release).run()
            }
            throw error
        }
    }

    /// The statements of the savepoint at `depth` (`apex_savepoint_<depth>`), made once per depth and kept: a
    /// batch of writes opens one per write.
    private func savepointSQL(_ depth: Int) -> (begin: SQL, release: SQL, rollback: SQL) {
        while savepointStatements.count <= depth {
            let name = "apex_savepoint_\(savepointStatements.count)"
            savepointStatements.append((SQL("SAVEPOINT \(name)"), SQL("RELEASE \(name)"), SQL("ROLLBACK TO \(name)")))
        }
        return savepointStatements[depth]
    }
}

@available(*, unavailable)
extension Connection: Sendable {}

/// A prepared statement: bind, step, read columns. A cached one is owned by its connection; one from
/// ``Connection/prepare(_:)`` keeps its connection open.
package final class Statement {
    private let raw: OpaquePointer
    /// The SQL, for errors (`?` for every parameter: never a bound value).
    package let sql: String
    private unowned let connection: Connection
    /// The connection, held strongly by a statement that is not cached.
    private let keptConnection: Connection?
    /// The bytes of the bound texts and blobs (bound `SQLITE_STATIC`), until ``reset()``.
    private let bound: UnsafeMutablePointer<BoundBytes>

    fileprivate init(_ raw: OpaquePointer, sql: String, connection: Connection, keepsConnection: Bool) {
        self.raw = raw
        self.sql = sql
        self.connection = connection
        keptConnection = keepsConnection ? connection : nil
        bound = .allocate(capacity: 1)
        bound.initialize(to: BoundBytes())
    }

    deinit {
        sqlite3_finalize(raw)
        bound.pointee.release()
        bound.deinitialize(count: 1)
        bound.deallocate()
    }

    /// Resets the statement and clears its bindings; the bytes that were bound are wiped.
    package func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
        bound.pointee.clear()
    }

    // MARK: Binding (parameters are numbered from 1)

    private func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    package func bindNull(_ index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(raw, index))
    }

    package func bind(_ index: Int32, _ value: String?) throws(SQLiteError) {
        guard let value else { return try bindNull(index) }
        var copy = value
        let rc = copy.withUTF8 { buffer in
            let bytes = bound.pointee.keep(UnsafeRawBufferPointer(buffer))
            return sqlite3_bind_text64(
                raw, index, bytes.assumingMemoryBound(to: CChar.self), UInt64(buffer.count), nil, UInt8(SQLITE_UTF8))
        }
        try check(rc)
    }

    package func bind(_ index: Int32, _ value: Int64?) throws(SQLiteError) {
        guard let value else { return try bindNull(index) }
        try check(sqlite3_bind_int64(raw, index, value))
    }

    package func bind(_ index: Int32, _ value: Double) throws(SQLiteError) {
        try check(sqlite3_bind_double(raw, index, value))
    }

    /// Bytes as a BLOB; empty bytes as an empty BLOB (not NULL).
    package func bind(_ index: Int32, _ value: Data?) throws(SQLiteError) {
        guard let value else { return try bindNull(index) }
        let rc = value.withUnsafeBytes { buffer in
            sqlite3_bind_blob64(raw, index, bound.pointee.keep(buffer), UInt64(buffer.count), nil)
        }
        try check(rc)
    }

    // MARK: Stepping

    /// Steps once: true when a row is ready, false when done.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(raw)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc, sql: sql)
        }
    }

    /// Runs a statement that returns no rows, and resets it.
    package func run() throws(SQLiteError) {
        defer { sqlite3_reset(raw) }
        while try step() {}
    }

    /// Steps to the first row, reads it with `read`, and resets the statement, so that no read transaction
    /// stays open on the connection (an open one pins an old snapshot and blocks a later write with BUSY).
    package func firstRow<T>(_ read: (Statement) throws(SQLiteError) -> T) throws(SQLiteError) -> T? {
        defer { sqlite3_reset(raw) }
        guard try step() else { return nil }
        return try read(self)
    }

    /// Reads every row with `read`, then resets the statement.
    package func allRows<T>(_ read: (Statement) throws -> T) throws -> [T] {
        defer { sqlite3_reset(raw) }
        var rows: [T] = []
        while try step() { rows.append(try read(self)) }
        return rows
    }

    // MARK: Columns (numbered from 0)

    package var columnCount: Int32 { sqlite3_column_count(raw) }

    /// The column's storage class: `SQLITE_INTEGER`, `SQLITE_FLOAT`, `SQLITE_TEXT`, `SQLITE_BLOB` or `SQLITE_NULL`.
    package func type(_ column: Int32) -> Int32 { sqlite3_column_type(raw, column) }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    package func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(raw, column) else { return nil }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as text, its bytes as SQLite holds them (not checked to be UTF-8); nil for NULL.
    package func textBytes(_ column: Int32) -> Data? {
        guard let text = sqlite3_column_text(raw, column) else { return isNull(column) ? nil : Data() }
        return Data(bytes: text, count: Int(sqlite3_column_bytes(raw, column)))
    }

    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    /// How many bytes the column's text or blob has (0 for NULL).
    package func byteCount(_ column: Int32) -> Int { Int(sqlite3_column_bytes(raw, column)) }

    package func double(_ column: Int32) -> Double { sqlite3_column_double(raw, column) }

    /// The column's bytes as SQLite holds them (a text's UTF-8, a blob's bytes; none for NULL), lent to `body`
    /// without a copy: valid only inside it.
    package func withBytes<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let base = sqlite3_column_blob(raw, column)
        let count = Int(sqlite3_column_bytes(raw, column))
        return try body(UnsafeRawBufferPointer(start: count > 0 ? base : nil, count: base == nil ? 0 : count))
    }

    package func data(_ column: Int32) -> Data? {
        guard sqlite3_column_type(raw, column) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let bytes = sqlite3_column_blob(raw, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// The bytes of a statement's bound parameters, copied here and bound `SQLITE_STATIC`: SQLite's own copy
/// (`SQLITE_TRANSIENT`) would cost an allocation per parameter each time a statement runs. A chunk never moves
/// while something is bound from it: when it is full, the next one is taken, and the full one is kept until
/// ``clear()``, which wipes every byte that was bound and keeps the current chunk for the next use (unless it grew
/// large for a large value). Reached through a pointer the statement owns, so that binding a parameter is a copy
/// and no more.
private struct BoundBytes {
    /// The chunk bound from now, and how much of it is taken.
    private var current = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var used = 0
    /// Full chunks, still bound from until ``clear()``.
    private var full: [UnsafeMutableRawBufferPointer] = []
    private static let smallestChunk = 1024
    /// The largest chunk kept after ``clear()``.
    private static let keptChunk = 64 << 10

    /// A copy of `bytes`, followed by a 0 byte (a text's terminator), valid until ``clear()`` or ``release()``.
    mutating func keep(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        let needed = bytes.count + 1
        if current.count - used < needed { takeChunk(needed) }
        let target = current.baseAddress! + used
        if let base = bytes.baseAddress, bytes.count > 0 { target.copyMemory(from: base, byteCount: bytes.count) }
        target.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        used += needed
        return UnsafeRawPointer(target)
    }

    private mutating func takeChunk(_ needed: Int) {
        if current.baseAddress != nil { full.append(current) }
        current = .allocate(byteCount: max(Self.smallestChunk, 2 * current.count, needed), alignment: 16)
        used = 0
    }

    /// Wipes what was bound; keeps the current chunk unless it is large. Nothing may be bound from it any more.
    mutating func clear() {
        for chunk in full { Self.free(chunk, wiping: chunk.count) }
        full.removeAll()
        if current.count > Self.keptChunk {
            Self.free(current, wiping: used)
            current = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        } else if used > 0 {
            current.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: used)
        }
        used = 0
    }

    /// Wipes and frees every chunk (the statement is finalised).
    mutating func release() {
        clear()
        if current.baseAddress != nil { current.deallocate() }
        current = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    private static func free(_ chunk: UnsafeMutableRawBufferPointer, wiping count: Int) {
        chunk.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        chunk.deallocate()
    }
}
