import ApexDumps
import ApexSQLite
import Foundation

/// Writes a decrypted keychain export: a SQLite database with `genp` and `inet` tables whose columns carry the
/// keychain's attribute names and hold cleartext (dates as seconds since 2001, the value in `v_Data`).
enum KeychainSQLiteWriter {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

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

        do {
            let database: Connection
            do {
                database = try Connection(
                    path: path, mode: [.readWrite, .create], extendedResultCodes: false)
            } catch {
                throw Failure(description: "cannot create \(path)")
            }
            try fill(database, items: items)
        } catch let error as SQLiteError {
            throw Failure(description: error.message)
        }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    private static func fill(_ database: Connection, items: [SampleItem]) throws(SQLiteError) {
        try database.execute("PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096;")
        try database.execute(schema)
        try database.transaction { () throws(SQLiteError) in
            let genp = try database.prepare(
                "INSERT INTO genp(cdat, mdat, labl, crtr, acct, svce, gena, agrp, pdmn, sync, accc, v_Data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
            )
            let inet = try database.prepare(
                "INSERT INTO inet(cdat, mdat, labl, crtr, acct, srvr, agrp, pdmn, sync, accc, v_Data) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
            )
            for item in items {
                let statement = item.itemClass == "inet" ? inet : genp
                statement.reset()
                var column: Int32 = 0
                func next() -> Int32 {
                    column += 1
                    return column
                }
                try statement.bind(next(), item.created.timeIntervalSinceReferenceDate)
                try statement.bind(next(), item.modified.timeIntervalSinceReferenceDate)
                try bind(item.label.map { .string($0) }, statement, next())
                try statement.bind(next(), item.creator.map { Int64($0) })
                try bind(item.account, statement, next())
                if item.itemClass == "inet" {
                    try bind(item.server.map { .string($0) }, statement, next())
                } else {
                    try bind(item.service, statement, next())
                    try bind(item.generic, statement, next())
                }
                try bind(.string(item.accessGroup), statement, next())
                try bind(.string(item.protection), statement, next())
                try statement.bind(next(), Int64(item.synchronizable ? 1 : 0))
                try bind(item.accessControlData().map { .data($0) }, statement, next())
                try bind(.data(item.value), statement, next())
                try statement.run()
            }
        }
    }

    /// Text as TEXT, bytes as BLOB: the storage class says which the dump tool found.
    private static func bind(_ value: DumpBytes?, _ statement: Statement, _ index: Int32) throws(SQLiteError) {
        switch value {
        case .none: try statement.bindNull(index)
        case .string(let text): try statement.bind(index, text)
        case .data(let data): try statement.bind(index, data)
        }
    }
}
