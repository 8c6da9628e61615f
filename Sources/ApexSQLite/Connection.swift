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
