import ApexKeychain
import ApexSQLite
import Foundation

/// Transactions, rows and sealing for ``SQLiteKeychainDatabase``.
extension SQLiteKeychainDatabase {
    // MARK: Transactions

    /// Runs `body` in a transaction begun `IMMEDIATE` (retried while another process holds the write lock beyond
    /// the busy timeout), commits, or rolls back and rethrows. Inside the transaction already open on this
    /// thread, `body` runs in a savepoint: when it throws, only its own writes are undone. SQLite errors become
    /// ``KeychainDatabaseError``s; other errors pass through unchanged, unless the rollback after them fails too (then
    /// the error names both).
    ///
    /// When SQLite has ended the outer transaction itself (it rolls the whole transaction back after some I/O
    /// errors, `SQLITE_FULL` or `SQLITE_NOMEM`), a write inside it fails with `io` instead of committing on its
    /// own: the rest of a batch never outlives the part that was undone.
    ///
    /// With `savepoint` false, `body` runs as it is inside a transaction already open: for a body that makes one
    /// write statement, which SQLite undoes by itself when it fails (and the two statements of a savepoint would
    /// cost more than the write).
    func transaction<T>(savepoint: Bool = true, _ body: () throws -> T) throws -> T {
        if isReadOnly {
            throw KeychainDatabaseError(
                .io,
                "\(url.path): the store is open read-only (this process can't write the store file or its folder); "
                    + "nothing was written")
        }
        lock.lock()
        defer { lock.unlock() }
        try endAbandonedTransaction()
        if transactionDepth > 0, !connection.isInTransaction {
            throw KeychainDatabaseError(
                .io,
                "\(url.path): SQLite rolled back the transaction this write belongs to after an error; nothing more is written in it"
            )
        }
        if !savepoint, transactionDepth > 0 { return try body() }
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            return try connection.transaction(.immediate, busyRetries: 20, body)
        } catch {
            switch error {
            case .sqlite(let error):
                throw databaseError(error)
            case .body(let error as SQLiteError, let rollbackError):
                throw databaseError(error.followed(byRollbackError: rollbackError))
            case .body(let error, nil):
                throw error
            case .body(let error, let rollbackError?):
                // The transaction may still be open: the caller must hear that the rollback failed.
                let failure = storeError(error)
                throw KeychainDatabaseError(
                    failure.status, "\(failure.message); undoing it failed too: \(rollbackError)")
            }
        }
    }

    /// A write: a transaction (``transaction(savepoint:_:)``), or, inside a transaction already open, the body
    /// alone (for a body of one write statement, which SQLite undoes by itself when it fails). With ``read(_:)``,
    /// the one place where the errors of the connection become ``KeychainDatabaseError``s (``databaseError(_:)``).
    func write<T>(_ body: () throws -> T) throws(KeychainDatabaseError) -> T {
        do {
            return try transaction(savepoint: false, body)
        } catch {
            throw storeError(error)
        }
    }

    /// A read under the connection lock; its errors become ``KeychainDatabaseError``s as a ``write(_:)``'s do.
    func read<T>(_ body: () throws -> T) throws(KeychainDatabaseError) -> T {
        lock.lock()
        defer { lock.unlock() }
        try endAbandonedTransaction()
        do {
            return try body()
        } catch {
            throw storeError(error)
        }
    }

    /// Ends a transaction that a failed rollback left open (no call of this store is inside one, yet the connection
    /// is), so that nothing more is read from or written into writes that were undone: without it, the next write
    /// would run as a savepoint inside it and report success without reaching the file. Called under the lock.
    /// - Throws: `io` when the rollback fails again; nothing is read or written then.
    private func endAbandonedTransaction() throws(KeychainDatabaseError) {
        guard transactionDepth == 0, connection.isInTransaction else { return }
        do {
            try connection.rollbackIfOpen()
        } catch {
            throw KeychainDatabaseError(
                .io,
                "\(url.path): a transaction whose rollback failed is still open and can't be ended (\(error)); "
                    + "nothing was read or written")
        }
    }

    /// What a read or write throws for `error`: a ``KeychainDatabaseError`` as it is, a SQLite error by
    /// ``databaseError(_:)``, anything else as `io`.
    private func storeError(_ error: any Error) -> KeychainDatabaseError {
        switch error {
        case let error as KeychainDatabaseError: error
        case let error as SQLiteError: databaseError(error)
        case let error as RowError<KeychainDatabaseError>:
            switch error {
            case .sqlite(let error): databaseError(error)
            case .read(let error): error
            }
        default: KeychainDatabaseError(.io, "\(url.path): \(error)")
        }
    }

    /// The store's error for a SQLite error: busy, damaged, or else `io`.
    func databaseError(_ error: SQLiteError) -> KeychainDatabaseError {
        if error.isBusy {
            return KeychainDatabaseError(
                .io, "\(url.path): the store stayed busy (another process is writing); try again")
        }
        if error.primary == .corrupt || error.primary == .notADB {
            return KeychainDatabaseError(.damaged, "\(url.path): the store is damaged or truncated: \(error)")
        }
        return KeychainDatabaseError(.io, "\(url.path): \(error)")
    }

    /// Runs a statement that writes a row: a constraint failure is a `duplicateItem` (the primary key is the
    /// table's one constraint); other SQLite errors are the caller's to map.
    func runInsertOrUpdate(_ statement: Statement) throws {
        do {
            try statement.run()
        } catch  where error.primary == .constraint {
            throw KeychainDatabaseError(.duplicateItem, "the item already exists")
        }
    }

    // MARK: Rows

    /// The columns every write sets, in the order ``bindRow(_:_:value:)`` binds them.
    static let rowColumns = ItemColumn.allCases.map(\.name).joined(separator: ", ")
    /// `?` for each of ``rowColumns``.
    static let rowParameters = Array(repeating: "?", count: ItemColumn.allCases.count).joined(separator: ", ")

    // The statements of every call, built once (the connection keeps each one prepared).
    static let insertSQL = SQL("INSERT INTO items(\(rowColumns)) VALUES (\(rowParameters))")
    static let updateSQL = SQL("UPDATE items SET (\(rowColumns)) = (\(rowParameters)) WHERE id = ?")
    static let rowIDSQL = SQL("SELECT id FROM items WHERE \(StoreSchema.primaryKeyClause)")
    static let deleteKeySQL = SQL("DELETE FROM items WHERE \(StoreSchema.primaryKeyClause)")

    /// The SELECT of a row by primary key: its attributes, value and binding; `id` first with `withID`. The key's
    /// own eleven columns are read as NULLs, which keeps every column at its ``ItemColumn`` offset: the reader
    /// takes them from the key it looked up, which the row holds byte for byte (the WHERE compares each exactly),
    /// and reading them again was a copy of eleven texts, most of them allocations, in every read of an item.
    static func rowSQL(sealColumn: String, withID: Bool) -> SQL {
        let columns = ItemColumn.allCases.prefix { $0 != .data }.map { $0.isKey ? "NULL" : $0.name }
        return SQL(
            "SELECT \(withID ? "id, " : "")\(columns.joined(separator: ", ")), data, \(sealColumn) FROM items WHERE "
                + StoreSchema.primaryKeyClause)
    }

    func insert(_ item: KeychainItem) throws {
        let a = item.attributes
        let statement = try connection.statement(Self.insertSQL)
        try bindRow(statement, a, value: item.value)
        try runInsertOrUpdate(statement)
    }

    /// Binds a parameter for each of ``rowColumns`` (``ItemColumn/parameter``): the attributes, `value` sealed
    /// under them, and its binding (always the current one: every write seals anew).
    func bindRow(_ statement: Statement, _ a: ItemAttributes, value: Data) throws(SQLiteError) {
        try bindPrimaryKey(statement, a.primaryKey, from: ItemColumn.itemClass.parameter)
        try statement.bind(ItemColumn.creator.parameter, a.creator.map(Int64.init))
        try statement.bind(ItemColumn.label.parameter, a.label)
        try statement.bind(ItemColumn.generic.parameter, a.generic)
        try statement.bind(ItemColumn.protectionDomain.parameter, a.protectionDomain.rawValue)
        try statement.bind(ItemColumn.accessControl.parameter, Int64(a.accessControl.rawValue))
        try statement.bind(ItemColumn.created.parameter, a.createdAt.timeIntervalSince1970)
        try statement.bind(ItemColumn.modified.parameter, a.modifiedAt.timeIntervalSince1970)
        try bindSealed(statement, ItemColumn.data.parameter, value, a)
        try statement.bind(ItemColumn.seal.parameter, SealBinding.wholeRow.rawValue)
    }

    /// Which fields of a query are set, as a bit mask: the index of its statements in the tables below.
    static func shape(_ query: ItemQuery) -> Int {
        (query.itemClass != nil ? 1 : 0) | (query.service != nil ? 2 : 0) | (query.account != nil ? 4 : 0)
            | (query.accessGroup != nil ? 8 : 0) | (query.creator != nil ? 16 : 0)
            | (query.synchronizable != nil ? 32 : 0)
    }

    /// ` WHERE …` for a query shape, in the order ``bind(_:_:orAccount:)`` binds the fields; with `accountRange`,
    /// the account between two bounds.
    static func whereClause(shape: Int, accountRange: Bool = false) -> String {
        let columns = ["class", "svce", "acct", "agrp", "crtr", "sync"]
        let clauses = columns.indices.filter { shape & (1 << $0) != 0 }.map {
            accountRange && columns[$0] == "acct" ? "acct >= ? AND acct <= ?" : "\(columns[$0]) = ?"
        }
        return clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
    }

    /// The statements of every query shape, built once.
    static let selectSQL = (0..<64).map {
        SQL("SELECT \(StoreSchema.attributeColumns) FROM items" + whereClause(shape: $0))
    }
    /// Each SELECT of ``selectSQL`` twice, `UNION ALL`: the second for another account (used for shapes with an
    /// account). Two seeks of the primary-key index in one statement; `acct IN (?, ?)` would build a temporary
    /// table of the two accounts each time.
    static let selectEitherAccountSQL = (0..<64).map {
        let select = "SELECT \(StoreSchema.attributeColumns) FROM items" + whereClause(shape: $0)
        return SQL(select + " UNION ALL " + select)
    }
    /// Each SELECT of ``selectSQL`` for the accounts from one to the same followed by U+0000 and more (a key and
    /// its staging account): one range of the primary-key index, where the `UNION ALL` seeks twice and opens four
    /// cursors. Every account in such a range is the first followed by U+0000 (bytes compare), which no key holds,
    /// so the range holds few others, if any; the caller keeps only the two.
    static let selectAccountRangeSQL = (0..<64).map {
        SQL("SELECT \(StoreSchema.attributeColumns) FROM items" + whereClause(shape: $0, accountRange: true))
    }
    static let accountsSQL = (0..<64).map { SQL("SELECT acct FROM items" + whereClause(shape: $0)) }
    static let deleteSQL = (0..<64).map { SQL("DELETE FROM items" + whereClause(shape: $0)) }

    func rowID(_ key: ItemAttributes.PrimaryKey) throws -> Int64? {
        let statement = try connection.statement(Self.rowIDSQL)
        try bindPrimaryKey(statement, key, from: 1)
        return try statement.firstRow { $0.int64(0) }
    }

    func bindPrimaryKey(_ statement: Statement, _ key: ItemAttributes.PrimaryKey, from first: Int32) throws(SQLiteError)
    {
        try statement.bind(first, key.itemClass.rawValue)
        try statement.bind(first + 1, key.service)
        try statement.bind(first + 2, key.account)
        try statement.bind(first + 3, key.accessGroup)
        try statement.bind(first + 4, Int64(key.synchronizable ? 1 : 0))
        try statement.bind(first + 5, key.server)
        try statement.bind(first + 6, key.securityDomain)
        try statement.bind(first + 7, key.protocolCode)
        try statement.bind(first + 8, key.authenticationType)
        try statement.bind(first + 9, Int64(key.port))
        try statement.bind(first + 10, key.path)
    }

    /// Binds the set fields of `query` in the order the WHERE clauses were built; with `other`, all of them again
    /// with `other` as the account (``selectEitherAccountSQL``); with `upper`, the account's upper bound after it
    /// (``selectAccountRangeSQL``).
    func bind(
        _ statement: Statement, _ query: ItemQuery, orAccount other: String? = nil, upTo upper: String? = nil
    ) throws(SQLiteError) {
        var index: Int32 = 1
        func next() -> Int32 {
            defer { index += 1 }
            return index
        }
        func fields(account: String?) throws(SQLiteError) {
            if let itemClass = query.itemClass { try statement.bind(next(), itemClass.rawValue) }
            if let service = query.service { try statement.bind(next(), service) }
            if let account { try statement.bind(next(), account) }
            if let upper { try statement.bind(next(), upper) }
            if let accessGroup = query.accessGroup { try statement.bind(next(), accessGroup) }
            if let creator = query.creator { try statement.bind(next(), Int64(creator)) }
            if let synchronizable = query.synchronizable { try statement.bind(next(), Int64(synchronizable ? 1 : 0)) }
        }
        try fields(account: query.account)
        if let other { try fields(account: other) }
    }

    /// The protection domain of a row read from column `c`, by its bytes.
    /// - Throws: `damaged` when it is none the package knows.
    func protectionDomain(of row: Statement, from c: Int32) throws(KeychainDatabaseError) -> ProtectionDomain {
        guard
            let domain = row.withBytes(
                ItemColumn.protectionDomain.offset(from: c), { ExactText.named($0, as: ProtectionDomain.self) })
        else {
            throw KeychainDatabaseError(.damaged, "\(url.path): a row has an unknown class or protection")
        }
        return domain
    }

    /// The attributes of a row read as `StoreSchema.attributeColumns` from column `c`; with `key`, a row read by
    /// ``rowSQL(sealColumn:withID:)``, whose primary key columns are `key`'s.
    func attributes(
        of row: Statement, from c: Int32, key: ItemAttributes.PrimaryKey? = nil
    ) throws(KeychainDatabaseError) -> ItemAttributes {
        func at(_ column: ItemColumn) -> Int32 { column.offset(from: c) }
        let domain = try protectionDomain(of: row, from: c)
        var a: ItemAttributes
        if let key {
            func optional(_ text: String) -> String? { text.isEmpty ? nil : text }
            a = ItemAttributes(
                itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup,
                synchronizable: key.synchronizable, server: optional(key.server),
                securityDomain: optional(key.securityDomain), protocolCode: optional(key.protocolCode),
                authenticationType: optional(key.authenticationType), port: key.port, path: optional(key.path))
        } else {
            guard let itemClass = row.withBytes(at(.itemClass), { ExactText.named($0, as: ItemClass.self) }),
                let service = row.string(at(.service)), let account = row.string(at(.account)),
                let group = row.string(at(.accessGroup))
            else {
                throw KeychainDatabaseError(.damaged, "\(url.path): a row has an unknown class or protection")
            }
            func optional(_ column: ItemColumn) -> String? {
                guard row.byteCount(at(column)) > 0 else { return nil }
                return row.string(at(column))
            }
            a = ItemAttributes(
                itemClass: itemClass, service: service, account: account, accessGroup: group,
                synchronizable: row.int64(at(.synchronizable)) != 0, server: optional(.server),
                securityDomain: optional(.securityDomain), protocolCode: optional(.protocolCode),
                authenticationType: optional(.authenticationType), port: Int(row.int64(at(.port))),
                path: optional(.path))
        }
        a.creator = row.isNull(at(.creator)) ? nil : UInt32(truncatingIfNeeded: row.int64(at(.creator)))
        a.label = row.isNull(at(.label)) ? nil : row.string(at(.label)) ?? ""
        a.generic = row.data(at(.generic))
        a.protectionDomain = domain
        a.accessControl = AccessControlFlags(rawValue: UInt32(truncatingIfNeeded: row.int64(at(.accessControl))))
        a.createdAt = Date(timeIntervalSince1970: row.double(at(.created)))
        a.modifiedAt = Date(timeIntervalSince1970: row.double(at(.modified)))
        return a
    }
}
