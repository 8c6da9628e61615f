import Foundation

// Apple's SDKs have SQLite as a module of their own; elsewhere it comes through pkg-config (CSQLite).
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// `SQLITE_TRANSIENT`: the macro doesn't import, and SQLite must copy bound buffers that Swift may free.
/// The one definition in the package (the benchmark's raw floors take it from here too).
package let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The 16 bytes every SQLite database file starts with.
package let sqliteMagic = Data("SQLite format 3\0".utf8)

/// A failed SQLite call: the result code, SQLite's message and the SQL that failed. A bound value never appears
/// in it: SQLite's messages name columns and constraints, not values, and the SQL holds `?` for every parameter.
package struct SQLiteError: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    /// The result code, extended when the connection asked for extended codes.
    package let code: ResultCode
    /// `sqlite3_errmsg` (or `sqlite3_errstr` when there is no connection to ask).
    package let message: String
    /// The SQL of the statement that failed, or "" for a call that has none (opening, loading an image).
    package let sql: String
    /// The `errno` of the failed system call behind the error, or 0.
    package var systemError: Int32 = 0
    /// The rollback that followed this failure inside a transaction or savepoint, when it failed too.
    private var rollback: Rollback?

    /// A failed rollback, kept by the error it followed (a class: a struct can't hold its own type).
    private final class Rollback: Sendable {
        let error: SQLiteError
        init(_ error: SQLiteError) { self.error = error }
    }

    package init(code: ResultCode, message: String, sql: String = "", systemError: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemError = systemError
    }

    /// The error of the rollback that SQLite ran after this one failed, when that rollback failed too (the
    /// transaction may then still be open).
    package var rollbackError: SQLiteError? { rollback?.error }

    /// This error, with `rollbackError` the error of the rollback after it (nil: the rollback succeeded).
    package func followed(byRollbackError rollbackError: SQLiteError?) -> SQLiteError {
        guard let rollbackError, rollback == nil else { return self }
        var error = self
        error.rollback = Rollback(rollbackError)
        return error
    }

    package var description: String {
        "SQLite error \(code): \(message)" + (rollbackError.map { "; the rollback failed too: \($0)" } ?? "")
    }
    package var debugDescription: String {
        let own = "SQLite error \(code): \(message)" + (sql.isEmpty ? "" : " (in: \(sql))")
        return own + (rollbackError.map { "; the rollback failed too: \(String(reflecting: $0))" } ?? "")
    }
    /// The primary result code (`readOnly` for `readOnlyDirectory`).
    package var primary: ResultCode { code.primary }
    package var isBusy: Bool { primary == .busy || primary == .locked }
    /// SQLite's English text for the result code (`sqlite3_errstr`), which never quotes the database.
    package var codeText: String { String(cString: sqlite3_errstr(code.rawValue)) }
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

    /// Opens `path`, a file path, or a `file:` URI when `mode` has ``OpenMode/uri``. The connection is used by one
    /// thread at a time (`SQLITE_OPEN_NOMUTEX`). With `extendedResultCodes`, errors carry extended result codes.
    package convenience init(path: String, mode: OpenMode, extendedResultCodes: Bool = true) throws(SQLiteError) {
        try self.init(path: path, flags: mode.rawValue, extendedResultCodes: extendedResultCodes)
    }

    /// Opens `path` with SQLite's `SQLITE_OPEN_*` `flags` (``init(path:mode:extendedResultCodes:)`` names them);
    /// `SQLITE_OPEN_NOMUTEX` is always added.
    package init(path: String, flags: Int32, extendedResultCodes: Bool = true) throws(SQLiteError) {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            let systemError = db.map { sqlite3_system_errno($0) } ?? 0
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: ResultCode(rawValue: rc), message: message, systemError: systemError)
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
            path: ":memory:", mode: .readWrite, extendedResultCodes: extendedResultCodes)
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
            code: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(handle)), sql: sql,
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
    /// Makes the statements running on the connection stop at their next step with `SQLITE_INTERRUPT` (how a
    /// caller cancels a long query); a statement begun after they have all stopped runs as usual.
    package func interrupt() { sqlite3_interrupt(handle) }

    package func rollbackIfOpen() throws(SQLiteError) {
        guard isInTransaction else { return }
        try statement(Self.rollbackSQL).run()
    }

    /// Runs `body` in a transaction and commits, or rolls back and throws `body`'s error. Inside a transaction
    /// already open, `body` runs in a ``savepoint(_:)`` instead: its failure undoes only its own writes. When the rollback fails too, the error thrown is the first failure with the
    /// rollback's as its ``SQLiteError/rollbackError``.
    package func transaction<T>(
        _ kind: TransactionKind = .deferred, busyRetries: Int = 0, _ body: () throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        do {
            return try inTransaction(kind, busyRetries: busyRetries, body)
        } catch {
            throw error.sqliteError
        }
    }

    /// The transaction above, for a body that throws errors of its own: the error thrown says whether SQLite failed (`BEGIN`, `COMMIT`) or the body did, with the rollback's
    /// failure, if any.
    package func transaction<T, Failure: Error>(
        _ kind: TransactionKind = .deferred, busyRetries: Int = 0, _ body: () throws(Failure) -> T
    ) throws(TransactionError<Failure>) -> T {
        try inTransaction(kind, busyRetries: busyRetries, body)
    }

    private func inTransaction<T, Failure: Error>(
        _ kind: TransactionKind, busyRetries: Int, _ body: () throws(Failure) -> T
    ) throws(TransactionError<Failure>) -> T {
        if isInTransaction { return try inSavepoint(body) }
        do {
            try begin(kind, busyRetries: busyRetries)
        } catch {
            throw .sqlite(error)
        }
        let result: T
        do {
            result = try body()
        } catch {
            throw .body(error, rollbackError: rollbackError { () throws(SQLiteError) in try rollbackIfOpen() })
        }
        do {
            try commit()
        } catch {
            let rollback = rollbackError { () throws(SQLiteError) in try rollbackIfOpen() }
            throw .sqlite(error.followed(byRollbackError: rollback))
        }
        return result
    }

    /// Runs `body` between `SAVEPOINT` and `RELEASE`; when it throws, rolls back to the savepoint (if the
    /// transaction is still open) and throws its error, with the rollback's failure when that failed too (for a
    /// body that throws SQLite's errors only, ``TransactionError/sqliteError`` is the one error). Outside a
    /// transaction, the savepoint begins one (deferred).
    package func savepoint<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(TransactionError<Failure>) -> T {
        try inSavepoint(body)
    }

    private func inSavepoint<T, Failure: Error>(
        _ body: () throws(Failure) -> T
    ) throws(TransactionError<Failure>) -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let sql = savepointSQL(savepointDepth)
        do {
            try statement(sql.begin).run()
        } catch {
            throw .sqlite(error)
        }
        let undo = { () throws(SQLiteError) in
            guard self.isInTransaction else { return }
            try self.statement(sql.rollback).run()
            try self.statement(sql.release).run()
        }
        let result: T
        do {
            result = try body()
        } catch {
            throw .body(error, rollbackError: rollbackError(undo))
        }
        do {
            try statement(sql.release).run()
        } catch {
            throw .sqlite(error.followed(byRollbackError: rollbackError(undo)))
        }
        return result
    }

    /// The error of `rollback`, or nil when it succeeds.
    private func rollbackError(_ rollback: () throws(SQLiteError) -> Void) -> SQLiteError? {
        do {
            try rollback()
            return nil
        } catch {
            return error
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

/// A failed ``Connection/transaction(_:busyRetries:_:)`` or ``Connection/savepoint(_:)`` whose body throws errors
/// of its own: SQLite's failure or the body's, each kept with the rollback's failure after it.
package enum TransactionError<Failure: Error>: Error, CustomStringConvertible {
    /// `BEGIN`, `SAVEPOINT`, `COMMIT` or `RELEASE` failed; a rollback that failed after it is the error's
    /// ``SQLiteError/rollbackError``.
    case sqlite(SQLiteError)
    /// The body threw; `rollbackError` is the rollback's error after it, when the rollback failed too.
    case body(Failure, rollbackError: SQLiteError?)

    package var description: String {
        switch self {
        case .sqlite(let error): "\(error)"
        case .body(let error, let rollback):
            "\(error)" + (rollback.map { "; the rollback failed too: \($0)" } ?? "")
        }
    }

    /// The rollback's error, wherever it is kept.
    package var rollbackError: SQLiteError? {
        switch self {
        case .sqlite(let error): error.rollbackError
        case .body(_, let rollback): rollback
        }
    }
}

extension TransactionError where Failure == SQLiteError {
    /// The one SQLite error: SQLite's own, or the body's with the rollback's failure kept in it.
    package var sqliteError: SQLiteError {
        switch self {
        case .sqlite(let error): error
        case .body(let error, let rollback): error.followed(byRollbackError: rollback)
        }
    }
}
