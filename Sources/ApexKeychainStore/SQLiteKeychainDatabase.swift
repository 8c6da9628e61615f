import ApexKeychain
import ApexSQLite
import ApexSodium
import Foundation

/// The embedded `KeychainDatabase`: one SQLite file, values sealed with XChaCha20-Poly1305.
///
/// ### Structure
/// - Attributes that are not secret (class, service, account, access group, creator, label, generic metadata,
///   protection, dates) are columns, readable without a prompt, as on a device.
/// - Each value is sealed with a key derived from the store's master key for its accessible class, and every
///   other column of its row is bound as associated data: the item's identity (class, primary key), protection
///   (accessible, access control, creator), label, generic attribute and dates. A value moved to another row,
///   or a row whose protection, label (a credentials item's username) or dates were edited in the file, does
///   not open, and the read fails with `damaged` instead of yielding data. Rows written before schema version 2
///   bind the identity and protection only, until their next write (each row's `seal` column says which).
/// - A store that this process can't write (a read-only file or folder) is opened read-only: it can be read,
///   and every write fails with `io`, naming the cause, before anything is written.
/// - The master key is random, and stored wrapped by a key from the key file or from a passphrase (Argon2id).
/// - WAL journal, `synchronous=FULL`; every write is a transaction begun `IMMEDIATE` (one writer at a time, a
///   busy timeout for the others), so a process killed mid-write leaves the old item or the new one. Writes
///   inside ``atomically(_:)`` share one transaction and one commit.
///
/// Thread-safe: one connection, used under a lock.
public final class SQLiteKeychainDatabase: KeychainDatabase, @unchecked Sendable {
    /// The store file.
    public let url: URL
    /// The device the store models.
    public let deviceProfile: DeviceProfile
    /// The app's bundle identifier recorded when the store was created: the default service of its device.
    /// Nil for a store created without one (its device's default service: `apex-keychain` on `linux`,
    /// `com.example.app` on the phone profiles).
    public let bundleIdentifier: String?
    /// The largest value a store holds: 16 MiB. Keychain values are small (a token, a password, a key: tens of
    /// kilobytes at most), and no keychain promises more; the limit keeps a runaway write (a value read from an
    /// endless stream) out of the file and out of memory. A larger value is refused with `io`.
    public static let maximumValueSize = 16 << 20

    /// Whether the master key is wrapped by a passphrase (which is then the modelled device's passcode).
    public let usesPassphrase: Bool
    /// Whether the store was opened read-only, because this process can't write the file or its folder. Reads
    /// work; writes fail with `io` and change nothing.
    public let isReadOnly: Bool

    let connection: Connection
    let lock = NSRecursiveLock()
    /// How many ``transaction(_:)`` scopes are open on the connection (used under `lock`).
    var transactionDepth = 0
    let keys: [ProtectionDomain: SecretKey]
    /// What a SELECT reads for a row's ``SealBinding`` (the schema version of a read-only store may be older).
    let sealColumn: String
    /// The SELECTs of a row by primary key, with that column (``rowSQL(sealColumn:withID:)``).
    let rowSQL: SQL, rowWithIDSQL: SQL

    init(
        url: URL, connection: Connection, schemaVersion: Int, isReadOnly: Bool, deviceProfile: DeviceProfile,
        bundleIdentifier: String?, usesPassphrase: Bool, master: SecretKey
    ) {
        self.url = url
        self.connection = connection
        self.sealColumn = StoreSchema.sealColumn(version: schemaVersion)
        rowSQL = Self.rowSQL(sealColumn: sealColumn, withID: false)
        rowWithIDSQL = Self.rowSQL(sealColumn: sealColumn, withID: true)
        self.isReadOnly = isReadOnly
        self.deviceProfile = deviceProfile
        self.bundleIdentifier = bundleIdentifier
        self.usesPassphrase = usesPassphrase
        var keys: [ProtectionDomain: SecretKey] = [:]
        for (index, domain) in ProtectionDomain.allCases.enumerated() {
            keys[domain] = Sodium.deriveKey(from: master, id: UInt64(index + 1))
        }
        self.keys = keys
    }

    // MARK: KeychainDatabase

    /// Adds an item; `duplicateItem` when its primary key is taken, `io` for a value larger than
    /// ``maximumValueSize``.
    public func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        try checkSize(item.value)
        try write {
            try insert(item)
        }
    }

    /// Replaces the attributes and value of the item under `key`; `io` for a value larger than
    /// ``maximumValueSize``.
    public func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        try checkSize(item.value)
        try write {
            guard let id = try rowID(key) else { throw KeychainDatabaseError(.itemNotFound, "no such item") }
            let a = item.attributes
            let update = try connection.statement(Self.updateSQL)
            try bindRow(update, a, value: item.value)
            try update.bind(ItemColumn.nextParameter, id)
            try runInsertOrUpdate(update)
        }
    }

    /// Moves the item under `key` to another account. The whole row is written again, its value sealed anew.
    public func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        try write {
            let select = try connection.statement(rowWithIDSQL)
            try bindPrimaryKey(select, key, from: 1)
            let found = try select.readFirstRow { row throws(KeychainDatabaseError) in
                (row.int64(0), try openRow(row, from: 1, key: key))
            }
            guard let (id, opened) = found else { throw KeychainDatabaseError(.itemNotFound, "no such item") }
            var (moved, value) = opened
            defer { Sodium.wipe(&value) }
            moved.account = account
            let update = try connection.statement(Self.updateSQL)
            try bindRow(update, moved, value: value)
            try update.bind(ItemColumn.nextParameter, id)
            try runInsertOrUpdate(update)
        }
    }

    /// The attributes of every matching item; never reads a value.
    public func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        try attributeRows(Self.selectSQL[Self.shape(query)], query, orAccount: nil)
    }

    /// The attributes of the items that match `query` or match it with `account`: one statement.
    public func attributes(
        matching query: ItemQuery, orAccount account: String
    ) throws(KeychainDatabaseError)
        -> [ItemAttributes]
    {
        guard let first = query.account, !ExactText.equal(first, account) else {
            return try attributes(matching: query)
        }
        // A key and its staging account: the one is the other followed by U+0000 and more, and one range of the
        // index holds both and hardly anything else (only accounts that hold U+0000 sort between them).
        let (lower, upper) = first.utf8.count < account.utf8.count ? (first, account) : (account, first)
        guard upper.utf8.starts(with: lower.utf8), upper.utf8.dropFirst(lower.utf8.count).first == 0 else {
            return try attributeRows(Self.selectEitherAccountSQL[Self.shape(query)], query, orAccount: account)
        }
        var range = query
        range.account = lower
        return try attributeRows(Self.selectAccountRangeSQL[Self.shape(query)], range, upTo: upper) { row in
            row.withBytes(ItemColumn.account.offset(from: 0)) { found in
                found.elementsEqual(lower.utf8) || found.elementsEqual(upper.utf8)
            }
        }
    }

    /// The rows of a SELECT of ``StoreSchema/attributeColumns`` bound with `query` (and `account`, or the
    /// account's upper bound `upper`) for which `keep` holds, as attributes.
    private func attributeRows(
        _ select: SQL, _ query: ItemQuery, orAccount account: String? = nil, upTo upper: String? = nil,
        keep: (Statement) -> Bool = { _ in true }
    ) throws(KeychainDatabaseError) -> [ItemAttributes] {
        try read {
            let statement = try connection.statement(select)
            try bind(statement, query, orAccount: account, upTo: upper)
            return try statement.readAllRows { row throws(KeychainDatabaseError) in
                keep(row) ? try attributes(of: row, from: 0) : nil
            }
            .compactMap { $0 }
        }
    }

    /// The accounts of the matching items, answered from the primary-key index without reading the rows.
    public func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String] {
        try read {
            let statement = try connection.statement(Self.accountsSQL[Self.shape(query)])
            try bind(statement, query)
            return try statement.allRows { row in row.string(0) ?? "" }
        }
    }

    /// The value of the item under `key`.
    public func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        try read {
            let select = try connection.statement(rowSQL)
            try bindPrimaryKey(select, key, from: 1)
            let found = try select.readFirstRow { row throws(KeychainDatabaseError) in
                try openValue(row, from: 0, key: key)
            }
            guard let found else { throw KeychainDatabaseError(.itemNotFound, "no such item") }
            return found
        }
    }

    /// The item under `key` with its value: one SELECT of the row.
    public func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        try read {
            let select = try connection.statement(rowSQL)
            try bindPrimaryKey(select, key, from: 1)
            return try select.readFirstRow { row throws(KeychainDatabaseError) in
                let (attributes, value) = try openRow(row, from: 0, key: key)
                return KeychainItem(attributes: attributes, value: value)
            }
        }
    }

    /// Deletes every matching item and returns how many there were.
    public func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int {
        try write {
            let statement = try connection.statement(Self.deleteSQL[Self.shape(query)])
            try bind(statement, query)
            try statement.run()
            return connection.changes
        }
    }

    /// Deletes the item under `key`; returns whether there was one.
    public func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        try write {
            let statement = try connection.statement(Self.deleteKeySQL)
            try bindPrimaryKey(statement, key, from: 1)
            try statement.run()
            return connection.changes > 0
        }
    }

    /// Runs `body` with no other writer, in this process or another, in between: in one transaction of its own,
    /// so that on this store the sequence is atomic too. Inside a transaction already open (``atomically(_:)``),
    /// `body` runs as it is: the transaction keeps the other writers out already, and, as the protocol says, a
    /// sequence is not undone when `body` throws (each call inside still is atomic on its own). A savepoint per
    /// scope would journal every page the scope changes. Errors thrown by `body` pass through unchanged.
    public func exclusively<T>(_ body: () throws -> T) throws -> T {
        try transaction(savepoint: false, body)
    }

    /// Runs `body` in one transaction, as ``exclusively(_:)`` does: one `BEGIN IMMEDIATE`, one durable commit
    /// (one fsync of the WAL) for all its writes, or none of them when it throws or the process dies first.
    /// Inside another transaction it is a savepoint. Each write inside is one statement, which SQLite undoes by
    /// itself when it fails, so a write that fails undoes only itself.
    public func atomically<T>(_ body: () throws -> T) throws -> T {
        try transaction(body)
    }

    private func checkSize(_ value: Data) throws(KeychainDatabaseError) {
        guard value.count > Self.maximumValueSize else { return }
        throw KeychainDatabaseError(
            .io,
            "\(url.path): the value is \(value.count) bytes; a store holds values of up to \(Self.maximumValueSize) bytes (16 MiB)"
        )
    }

    // MARK: Meta

    /// Whether the app install marker of the modelled device is recorded in the store.
    /// - Throws: when the store can't be read (never "no marker" for "don't know").
    public func hasInstallMarker() throws(KeychainDatabaseError) -> Bool {
        try read { try metaValue("install_marker") != nil }
    }

    /// Records the install marker.
    public func setInstallMarker() throws(KeychainDatabaseError) {
        try write { try setMeta("install_marker", Data("1".utf8)) }
    }

    static let metaValueSQL = SQL("SELECT value FROM meta WHERE name = ?")
    static let setMetaSQL = SQL("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)")

    /// The `meta` row `name`'s value (inside a ``read(_:)``).
    func metaValue(_ name: String) throws(SQLiteError) -> Data? {
        let statement = try connection.statement(Self.metaValueSQL)
        try statement.bind(1, name)
        return try statement.firstRow { $0.data(0) } ?? nil
    }

    func setMeta(_ name: String, _ value: Data) throws {
        let statement = try connection.statement(Self.setMetaSQL)
        try statement.bind(1, name)
        try statement.bind(2, value)
        try statement.run()
    }
}
