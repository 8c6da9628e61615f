import CSQLite
import Foundation

/// The floor's diagnostics and store maintenance: not part of any measured operation.
extension FloorSide {
    /// Diagnostic: the SELECT the store runs for getAllKeys (all 18 attribute columns, so a table lookup per
    /// index entry), each column read as SQLite gives it, no Swift objects. Nanoseconds and rows.
    func selectAllAttributes() throws -> (nanoseconds: UInt64, rows: Int) {
        var total = 0
        var rows = 0
        let s = allAttributes
        let start = Clock.nanoseconds()
        while try step(s) {
            rows += 1
            for column: Int32 in 0..<18 {
                switch sqlite3_column_type(s, column) {
                case SQLITE_TEXT:
                    total &+= Int(bitPattern: sqlite3_column_text(s, column)) &+ Int(sqlite3_column_bytes(s, column))
                case SQLITE_BLOB:
                    total &+= Int(bitPattern: sqlite3_column_blob(s, column)) &+ Int(sqlite3_column_bytes(s, column))
                default: total &+= Int(sqlite3_column_int64(s, column))
                }
            }
        }
        sqlite3_reset(s)
        let elapsed = Clock.nanoseconds() - start
        sink &+= total
        return (elapsed, rows)
    }

    /// `PRAGMA synchronous` (FULL or NORMAL), for the fsync diagnostic.
    func setSynchronous(_ mode: String) throws { try Self.exec(db, "PRAGMA synchronous = \(mode)") }

    /// Checkpoints and truncates the WAL of another SQLite file (the API store) from a connection of its own,
    /// waiting at most `timeout` ms for its readers; false when a reader kept the WAL from being truncated.
    static func checkpoint(fileAt path: String, timeout: Int32 = 250) throws -> Bool {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let handle
        else {
            sqlite3_close_v2(handle)
            throw BenchError("can't open \(path) to checkpoint it")
        }
        defer { sqlite3_close_v2(handle) }
        sqlite3_busy_timeout(handle, timeout)
        let statement = try prepare(handle, "PRAGMA wal_checkpoint(TRUNCATE)")
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else {
            throw BenchError("checkpoint of \(path) failed: \(String(cString: sqlite3_errmsg(handle)))")
        }
        return sqlite3_column_int64(statement, 0) == 0
    }

    /// The size of a file in bytes (0 when it is missing), e.g. a store's `-wal`.
    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
