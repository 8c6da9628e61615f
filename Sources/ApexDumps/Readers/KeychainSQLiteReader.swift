import ApexSQLite
import Foundation

/// Reads a decrypted keychain export: a SQLite database with `genp` (generic password) and `inet` (internet
/// password) tables whose columns carry the keychain's attribute names and hold cleartext values.
///
/// Columns are found with `PRAGMA table_info`. The value is the `v_Data` column, or `data` when there is no
/// `v_Data`. Every value is read by its storage class (`sqlite3_column_type`), as securityd does, not by the
/// declared column type: `svce`, `acct` and `gena` come back as `DumpBytes/string(_:)` for TEXT and
/// `DumpBytes/data(_:)` for BLOB; `cdat`/`mdat` may be REAL or INTEGER seconds since 2001-01-01 UTC
/// (CFAbsoluteTime) or TEXT dates; `crtr` may be INTEGER or TEXT (a number or a four-character code); `accc`
/// (DER, or the text form) is decoded, and kept undecoded in `extra["accc"]` (`hex:…` for a BLOB) when it can't be;
/// such an `accc`, and a `sync` that is neither a number nor a boolean word, are in `KeychainRecord/unreadable`
/// (the item's protection is unknown). Every other column goes to `KeychainRecord/extra`
/// as text (`hex:…` for BLOBs). Only the `genp` and `inet` tables are read.
///
/// A device `keychain-2.db` has the same tables, but its attribute columns hold SHA-1 hashes and its `data`
/// column holds encrypted, versioned blobs; it is recognised and refused as `DumpError/Kind/unsupported`.
///
/// The file given is evidence and is never modified, and no copy of it is ever written: it is read into memory
/// with its `-wal` file when there is one, the WAL's committed transactions are applied to the image as SQLite's
/// own recovery would (frames whose salts and running checksums hold, up to the last commit frame), and the image
/// is opened in memory, read-only (`sqlite3_deserialize`). The `-shm` index is not needed and not read. Nothing
/// is written to the temporary folder, so no decrypted copy can outlive a run that is interrupted or killed.
/// Rows are streamed.
public enum KeychainSQLiteReader {
    /// Whether `prefix` (the first bytes of a file) is a SQLite 3 database. Whether it is a keychain export is
    /// only known once it is read.
    public static func looksLike(_ prefix: Data) -> Bool {
        prefix.starts(with: sqliteMagic)
    }

    /// Reads the items of a keychain export.
    ///
    /// - Parameter path: The database file. Its `-wal` companion, if any, is read too.
    /// - Returns: The records of `genp`, then `inet`, each in row order; `location` is `genp row <rowid>`.
    /// - Throws: `DumpError`: `DumpError/Kind/unreadable` when the file or its `-wal` file can't be opened or
    ///   read; `DumpError/Kind/malformed` when it is empty, too large (with its `-wal` file), not SQLite,
    ///   damaged; `DumpError/Kind/notADump` for a SQLite database without `genp`/`inet` tables (an app's own
    ///   database); `DumpError/Kind/unsupported` for an encrypted device keychain.
    public static func read(path: String) throws(DumpError) -> [KeychainRecord] {
        try readImage(try loadImage(path), path: path)
    }

    /// Reads the items of a keychain export given as bytes (read from a pipe): the database alone, without a
    /// `-wal` file. A WAL-mode database (header bytes 18 and 19 are 2) is read as it is: what its last
    /// connection checkpointed on closing is in it, transactions still in a `-wal` file are not.
    ///
    /// - Parameters:
    ///   - data: the database file's bytes, at most `DumpLimits/maxFileBytes`.
    ///   - path: what errors call the input.
    /// - Throws: as ``read(path:)``, but never `DumpError/Kind/unreadable`.
    public static func read(_ data: Data, path: String) throws(DumpError) -> [KeychainRecord] {
        guard data.count <= DumpLimits.maxFileBytes else {
            throw DumpError(
                .malformed, path: path, "larger than the \(DumpLimits.maxFileBytes >> 20) MiB limit for a dump")
        }
        guard looksLike(data) else {
            throw DumpError(.malformed, path: path, "not a SQLite database (no SQLite header)")
        }
        let image = DatabaseImage(count: data.count)
        data.withUnsafeBytes { image.bytes.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return try readImage(image, path: path)
    }

    // MARK: - The database image

    /// The database as SQLite would see it: the file with its WAL's committed frames applied, in memory.
    private static func loadImage(_ path: String) throws(DumpError) -> DatabaseImage {
        guard let main = try openSource(path, path: path, required: true) else {
            throw DumpError(.unreadable, path: path, "the file does not exist")
        }
        let mainFile = DumpFile(descriptor: main.descriptor, path: path, size: main.size)
        guard main.size > 0 else { throw DumpError(.malformed, path: path, "empty file, not a SQLite database") }
        var magic = [UInt8](repeating: 0, count: sqliteMagic.count)
        let got = pread(main.descriptor, &magic, magic.count, 0)
        guard got == magic.count, Data(magic) == sqliteMagic else {
            throw DumpError(.malformed, path: path, "not a SQLite database (no SQLite header)")
        }
        let walFile = try openSource(path + "-wal", path: path, required: false).map {
            DumpFile(descriptor: $0.descriptor, path: path, size: $0.size, what: "its -wal file")
        }
        let total = main.size + (walFile?.size ?? 0)
        guard total <= DumpLimits.maxFileBytes else {
            throw DumpError(
                .malformed, path: path,
                "\(total) bytes\(walFile == nil ? "" : " (with its -wal file)") is larger than the \(DumpLimits.maxFileBytes >> 20) MiB limit for a dump"
            )
        }
        // The files as they were when opened: a file that grows meanwhile is read to its size then.
        let image = DatabaseImage(count: main.size)
        image.count = try mainFile.read(into: image.bytes)
        guard let walFile else { return image }
        var wal = Data()
        try walFile.read(upTo: walFile.size, appendingTo: &wal)
        try ByteReader.reading(wal) { bytes throws(DumpError) in try WriteAheadLog.apply(bytes, to: image, path: path) }
        return image
    }

    /// Opens `file` for reading without blocking (a FIFO must not hang the reader) and checks it is a regular
    /// file. A missing optional file is nil.
    private static func openSource(
        _ file: String, path: String, required: Bool
    ) throws(DumpError)
        -> (descriptor: Int32, size: Int)?
    {
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if !required && code == ENOENT { return nil }
            let what = file == path ? "the file" : "its -wal file"
            throw DumpError(
                .unreadable, path: path,
                code == ENOENT ? "\(what) does not exist" : "cannot open \(what): \(String(cString: strerror(code)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw DumpError(.unreadable, path: path, "\(file == path ? "the path" : file) is not a regular file")
        }
        return (descriptor, Int(info.st_size))
    }

    // MARK: - Reading the image

    private static func readImage(_ image: DatabaseImage, path: String) throws(DumpError) -> [KeychainRecord] {
        markRollbackJournal(image)
        do {
            let database = try Connection.readOnlyImage(image.bytes.baseAddress!, count: image.count, owner: image)
            // Sorts and the like in memory, never in a temporary file.
            try database.execute("PRAGMA temp_store = MEMORY")
            // Untrusted schema: functions in it (generated columns, defaults) may only be side-effect free.
            try database.execute("PRAGMA trusted_schema = OFF")
            try database.execute("PRAGMA cell_size_check = ON")

            let schema = try readSchema(database, path: path)
            guard !schema.itemTables.isEmpty else {
                throw DumpError(
                    .notADump, path: path, "not a keychain dump: a SQLite database without genp or inet table")
            }
            var records: [KeychainRecord] = []
            for table in schema.itemTables {
                try readTable(
                    table, database: database, hasVersionTable: schema.hasVersionTable, path: path, into: &records)
            }
            if records.isEmpty && schema.hasVersionTable
                && schema.itemTables.allSatisfy({
                    !$0.columns.contains { $0.caseInsensitiveCompare("v_Data") == .orderedSame }
                })
            {
                throw deviceKeychainError(path)
            }
            return records
        } catch let failure as SQLiteError {
            throw dumpError(failure, path: path)
        } catch let error as DumpError {
            throw error
        } catch {
            throw DumpError(.malformed, path: path, "cannot read the database")
        }
    }

    /// A WAL database says so in its header: the file format write and read versions (bytes 18 and 19) are 2,
    /// where a rollback-journal database's are 1. SQLite's in-memory VFS has no WAL, so it refuses to open an
    /// image that says 2 (`SQLITE_CANTOPEN`), even when there is no WAL to read: the way SQLite leaves a WAL
    /// database once the last connection closed and checkpointed it, and the only way a database read from a
    /// pipe comes. The image, whose WAL's committed frames are already applied (``WriteAheadLog``), is opened
    /// read-only, so it is read as a rollback-journal database: its copy of the header says 1. The file is not
    /// touched.
    private static func markRollbackJournal(_ image: DatabaseImage) {
        for offset in [18, 19] where (try? image.reader?.u8(at: offset)) == 2 {
            image.set(1, at: offset)
        }
    }

    private static func deviceKeychainError(_ path: String) -> DumpError {
        DumpError(
            .unsupported, path: path,
            "an encrypted device keychain (keychain-2.db): securityd stores its attributes as SHA-1 hashes and its values encrypted with keys that never leave the device, so it can't be read offline; a decrypted export of the items is needed instead"
        )
    }

    private struct ItemTable {
        var name: String
        var columns: [String]
    }

    private struct Schema {
        var itemTables: [ItemTable]
        var hasVersionTable: Bool
    }

    private static func readSchema(_ database: Connection, path: String) throws -> Schema {
        var found: [String: (type: String, sql: String)] = [:]
        let statement = try database.prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view')")
        while try statement.step() {
            guard let name = statement.string(1)?.lowercased(), ["genp", "inet", "tversion"].contains(name) else {
                continue
            }
            found[name] = (statement.string(0) ?? "", statement.string(2) ?? "")
        }
        var tables: [ItemTable] = []
        for name in ["genp", "inet"] {
            guard let entry = found[name] else { continue }
            let isVirtual = entry.sql.uppercased().filter { !$0.isWhitespace }.hasPrefix("CREATEVIRTUAL")
            guard entry.type == "table", !isVirtual else {
                throw DumpError(
                    .malformed, path: path, "not a keychain database: \(name) is a view or a virtual table, not a table"
                )
            }
            let info = try database.prepare("PRAGMA table_info(\(name))")
            var columns: [String] = []
            while try info.step() {
                if let column = info.string(1) { columns.append(column) }
            }
            tables.append(ItemTable(name: name, columns: columns))
        }
        return Schema(itemTables: tables, hasVersionTable: found["tversion"]?.type == "table")
    }

    /// What a column holds for the record.
    enum Role {
        case service, account, generic, value, protection, accessGroup, label, creator, synchronizable
        case createdAt, modifiedAt, server, protocolCode, port, path, authenticationType, securityDomain
        case accessControl, extra
    }

    private static func roles(for columns: [String]) -> (roles: [Role], valueIndex: Int?) {
        let valueColumn =
            columns.firstIndex { $0.caseInsensitiveCompare("v_Data") == .orderedSame }
            ?? columns.firstIndex { $0.caseInsensitiveCompare("data") == .orderedSame }
        let roles = columns.enumerated().map { index, column -> Role in
            if index == valueColumn { return .value }
            switch column.lowercased() {
            case "svce": return .service
            case "acct": return .account
            case "gena": return .generic
            case "pdmn": return .protection
            case "agrp": return .accessGroup
            case "labl": return .label
            case "crtr": return .creator
            case "sync": return .synchronizable
            case "cdat": return .createdAt
            case "mdat": return .modifiedAt
            case "srvr": return .server
            case "ptcl": return .protocolCode
            case "port": return .port
            case "path": return .path
            case "atyp": return .authenticationType
            case "sdmn": return .securityDomain
            case "accc": return .accessControl
            default: return .extra
            }
        }
        return (roles, valueColumn)
    }

    private static func readTable(
        _ table: ItemTable, database: Connection, hasVersionTable: Bool, path: String,
        into records: inout [KeychainRecord]
    ) throws {
        guard !table.columns.isEmpty else { return }
        let (roles, valueIndex) = roles(for: table.columns)
        // A device keychain's value column is `data`; an export with `v_Data` is never one.
        let valueIsDeviceColumn =
            valueIndex.map { table.columns[$0].caseInsensitiveCompare("data") == .orderedSame } ?? false
        let accountIndex = table.columns.firstIndex { $0.lowercased() == "acct" }

        let list = table.columns.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(
            separator: ", ")
        let (statement, offset) = try selectRows(list, from: table.name, database: database)
        var ordinal = 0
        while try statement.step() {
            ordinal += 1
            let rowNumber = offset == 1 ? statement.int64(0) : Int64(ordinal)
            if valueIsDeviceColumn, let valueIndex,
                looksEncrypted(
                    statement, value: Int32(valueIndex) + offset, account: accountIndex.map { Int32($0) + offset },
                    hasVersionTable: hasVersionTable)
            {
                throw deviceKeychainError(path)
            }
            var record = KeychainRecord(location: "\(table.name) row \(rowNumber)", itemClass: table.name)
            for (index, role) in roles.enumerated() {
                apply(SQLValue(statement, Int32(index) + offset), as: role, column: table.columns[index], to: &record)
            }
            records.append(record)
        }
    }

    /// A statement over every row, and the index of its first attribute column: `rowid` comes first when the
    /// table has one; a WITHOUT ROWID table is read in key order and its rows are numbered.
    private static func selectRows(
        _ list: String, from table: String, database: Connection
    ) throws(SQLiteError)
        -> (Statement, Int32)
    {
        if let statement = try? database.prepare("SELECT rowid, \(list) FROM \(table) ORDER BY rowid") {
            return (statement, 1)
        }
        return (try database.prepare("SELECT \(list) FROM \(table)"), 0)
    }

    /// A device keychain row: `data` is a BLOB that starts with a little-endian version word (0–8, bit 31 for
    /// "fixed IV"), and either `acct` holds a 20-byte SHA-1 or the database has securityd's `tversion` table.
    private static func looksEncrypted(
        _ statement: Statement, value: Int32, account: Int32?, hasVersionTable: Bool
    ) -> Bool {
        guard case .blob(let data) = SQLValue(statement, value), data.count >= 48 else { return false }
        let version = data.prefix(4).enumerated().reduce(UInt32(0)) {
            $0 | UInt32($1.element) << (8 * UInt32($1.offset))
        }
        guard version & 0x7FFF_FFFF <= 8 else { return false }
        if hasVersionTable { return true }
        if let account, case .blob(let hash) = SQLValue(statement, account), hash.count == 20 { return true }
        return false
    }
}

extension KeychainSQLiteReader {
    /// The dump error for a failed SQLite call: by result code only (SQLite's messages can quote schema text).
    fileprivate static func dumpError(_ error: SQLiteError, path: String) -> DumpError {
        switch error.primary {
        case .notADB:
            DumpError(.malformed, path: path, "not a SQLite database, or its header is damaged")
        case .corrupt:
            DumpError(.malformed, path: path, "the SQLite database is damaged (truncated or corrupt)")
        case .cantOpen, .ioErr, .perm, .nomem:
            DumpError(.unreadable, path: path, "cannot read the database: \(error.codeText)")
        default:
            DumpError(
                .malformed, path: path, "cannot read the database: \(error.codeText) (SQLite error \(error.code))")
        }
    }
}
