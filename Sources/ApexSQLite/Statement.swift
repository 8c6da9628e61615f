import Foundation

// Apple's SDKs have SQLite as a module of their own; elsewhere it comes through pkg-config (CSQLite).
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

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

    init(_ raw: OpaquePointer, sql: String, connection: Connection, keepsConnection: Bool) {
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

    /// A BLOB of `count` bytes that `fill` writes in place, straight into the bytes that are bound (no copy of
    /// them is made first).
    package func bindBlob(
        _ index: Int32, count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(SQLiteError) {
        let bytes = bound.pointee.reserve(count)
        fill(bytes)
        try check(sqlite3_bind_blob64(raw, index, bytes.baseAddress, UInt64(count), nil))
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

    /// ``firstRow(_:)`` for a `read` that throws errors of its own: the error thrown says whether the step
    /// failed (SQLite's error) or `read` did.
    package func readFirstRow<T, Failure: Error>(
        _ read: (Statement) throws(Failure) -> T
    ) throws(RowError<Failure>) -> T? {
        defer { sqlite3_reset(raw) }
        do {
            guard try step() else { return nil }
        } catch {
            throw .sqlite(error)
        }
        do {
            return try read(self)
        } catch {
            throw .read(error)
        }
    }

    /// Reads every row with `read`, then resets the statement.
    package func allRows<T>(_ read: (Statement) throws(SQLiteError) -> T) throws(SQLiteError) -> [T] {
        defer { sqlite3_reset(raw) }
        var rows: [T] = []
        while try step() { rows.append(try read(self)) }
        return rows
    }

    /// ``allRows(_:)`` for a `read` that throws errors of its own: the error thrown says whether a step failed
    /// (SQLite's error) or `read` did.
    package func readAllRows<T, Failure: Error>(
        _ read: (Statement) throws(Failure) -> T
    ) throws(RowError<Failure>) -> [T] {
        defer { sqlite3_reset(raw) }
        var rows: [T] = []
        while true {
            do {
                guard try step() else { return rows }
            } catch {
                throw .sqlite(error)
            }
            do {
                rows.append(try read(self))
            } catch {
                throw .read(error)
            }
        }
    }

    // MARK: Columns (numbered from 0)

    package var columnCount: Int32 { sqlite3_column_count(raw) }

    /// The column's storage class (`sqlite3_column_type`).
    package func storageClass(_ column: Int32) -> StorageClass {
        // SQLite has no other storage class; NULL stands for any it might add.
        StorageClass(rawValue: sqlite3_column_type(raw, column)) ?? .null
    }

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

/// A failed ``Statement/readAllRows(_:)`` or ``Statement/readFirstRow(_:)``: a step failed (SQLite's error), or
/// `read` did.
package enum RowError<Failure: Error>: Error {
    case sqlite(SQLiteError)
    case read(Failure)
}
