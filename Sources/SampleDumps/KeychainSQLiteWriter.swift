import ApexDumps
import CSQLite
import Foundation

/// Writes a decrypted keychain export: a SQLite database with `genp` and `inet` tables whose columns carry the
/// keychain's attribute names and hold cleartext (dates as seconds since 2001, the value in `v_Data`).
enum KeychainSQLiteWriter {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static let schema = """
        CREATE TABLE genp(rowid INTEGER PRIMARY KEY AUTOINCREMENT, cdat REAL, mdat REAL, labl TEXT, crtr INTEGER,
          acct BLOB NOT NULL DEFAULT '', svce BLOB NOT NULL DEFAULT '', gena BLOB, agrp TEXT NOT NULL, pdmn TEXT,
          sync INTEGER NOT NULL DEFAULT 0, accc BLOB, v_Data BLOB);
        CREATE TABLE inet(rowid INTEGER PRIMARY KEY AUTOINCREMENT, cdat REAL, mdat REAL, labl TEXT, crtr INTEGER,
          acct BLOB NOT NULL DEFAULT '', sdmn BLOB NOT NULL DEFAULT '', srvr BLOB NOT NULL DEFAULT '',
          ptcl INTEGER NOT NULL DEFAULT 0, atyp BLOB NOT NULL DEFAULT '', port INTEGER NOT NULL DEFAULT 0,
          path BLOB NOT NULL DEFAULT '', agrp TEXT NOT NULL, pdmn TEXT, sync INTEGER NOT NULL DEFAULT 0, accc BLOB,
          v_Data BLOB);
        """

    /// The database's bytes. It is built in a private temporary file with a rollback journal (one file, no
    /// `-wal`), so that the same items always give the same bytes.
    static func write(_ items: [SampleItem]) throws -> Data {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dump-samples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("keychain.sqlite").path

        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK,
            let database = handle
        else {
            sqlite3_close(handle)
            throw Failure(description: "cannot create \(path)")
        }
        let filled = Result { try fill(database, items: items) }
        sqlite3_close(database)
        try filled.get()
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    private static func fill(_ database: OpaquePointer, items: [SampleItem]) throws {
        func run(_ sql: String) throws {
            guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else {
                throw Failure(description: String(cString: sqlite3_errmsg(database)))
            }
        }
        try run("PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096;")
        try run(schema)
        try run("BEGIN")
        let genp = try prepare(
            database,
            "INSERT INTO genp(cdat, mdat, labl, crtr, acct, svce, gena, agrp, pdmn, sync, accc, v_Data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        )
        defer { sqlite3_finalize(genp) }
        let inet = try prepare(
            database,
            "INSERT INTO inet(cdat, mdat, labl, crtr, acct, srvr, agrp, pdmn, sync, accc, v_Data) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
        )
        defer { sqlite3_finalize(inet) }

        for item in items {
            let statement = item.itemClass == "inet" ? inet : genp
            var column: Int32 = 0
            func next() -> Int32 {
                column += 1
                return column
            }
            sqlite3_bind_double(statement, next(), item.created.timeIntervalSinceReferenceDate)
            sqlite3_bind_double(statement, next(), item.modified.timeIntervalSinceReferenceDate)
            bind(item.label.map { .string($0) }, statement, next())
            if let creator = item.creator {
                sqlite3_bind_int64(statement, next(), Int64(creator))
            } else {
                sqlite3_bind_null(statement, next())
            }
            bind(item.account, statement, next())
            if item.itemClass == "inet" {
                bind(item.server.map { .string($0) }, statement, next())
            } else {
                bind(item.service, statement, next())
                bind(item.generic, statement, next())
            }
            bind(.string(item.accessGroup), statement, next())
            bind(.string(item.protection), statement, next())
            sqlite3_bind_int64(statement, next(), item.synchronizable ? 1 : 0)
            bind(item.accessControlData().map { .data($0) }, statement, next())
            bind(.data(item.value), statement, next())
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw Failure(description: String(cString: sqlite3_errmsg(database)))
            }
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try run("COMMIT")
    }

    private static func prepare(_ database: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: String(cString: sqlite3_errmsg(database)))
        }
        return statement
    }

    /// Text as TEXT, bytes as BLOB: the storage class says which the dump tool found.
    private static func bind(_ value: DumpBytes?, _ statement: OpaquePointer, _ index: Int32) {
        switch value {
        case .none: sqlite3_bind_null(statement, index)
        case .string(let text): sqlite3_bind_text(statement, index, text, -1, transient)
        case .data(let data) where data.isEmpty: sqlite3_bind_zeroblob(statement, index, 0)
        case .data(let data):
            _ = data.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }
}
