import ApexSQLite
import CSQLite
import CSodium
import Foundation

/// `SQLITE_TRANSIENT`, from ApexSQLite (the floors call the C API themselves).
private let transient = sqliteTransient

/// The floor: what the four operations cost in SQLite and libsodium alone, on a second store file.
///
/// The same SQL statements the store issues for each operation, through the raw sqlite3 C API, each prepared
/// once and reused (constant parameters bound once), with the store's PRAGMAs (WAL, synchronous=FULL), plus
/// exactly one XChaCha20-Poly1305 seal (set) or open (get) per item, of the same value size and with associated
/// data of the same shape. No Swift model objects, no string building, no device state.
final class FloorSide {
    /// A copy of `StoreSchema.migrations` (Sources/ApexKeychainStore/StoreSchema.swift), duplicated on
    /// purpose: the floor must not call the code it measures (and `StoreSchema` is internal to the store). If the
    /// store's schema changes, change this copy with it, or the floor no longer runs the same SQL.
    static let schema = """
        CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE items(
          id INTEGER PRIMARY KEY,
          class TEXT NOT NULL CHECK (class IN ('genp', 'inet')),
          svce TEXT NOT NULL, acct TEXT NOT NULL, agrp TEXT NOT NULL, sync INTEGER NOT NULL,
          srvr TEXT NOT NULL DEFAULT '', sdmn TEXT NOT NULL DEFAULT '', ptcl TEXT NOT NULL DEFAULT '',
          atyp TEXT NOT NULL DEFAULT '', port INTEGER NOT NULL DEFAULT 0, path TEXT NOT NULL DEFAULT '',
          crtr INTEGER, labl TEXT, gena BLOB, pdmn TEXT NOT NULL, accc INTEGER NOT NULL,
          cdat REAL NOT NULL, mdat REAL NOT NULL, data BLOB NOT NULL,
          UNIQUE (class, svce, acct, agrp, sync, srvr, sdmn, ptcl, atyp, port, path));
        ALTER TABLE items ADD COLUMN seal INTEGER NOT NULL DEFAULT 1;
        """
    /// A copy of `StoreSchema.primaryKeyClause`, for the same reason.
    static let primaryKeyClause =
        "class = ? AND svce = ? AND acct = ? AND agrp = ? AND sync = ? AND srvr = ? AND sdmn = ? AND ptcl = ? AND atyp = ? AND port = ? AND path = ?"
    /// A copy of `StoreSchema.attributeColumns`, for the same reason (the getAllKeys diagnostic selects them).
    static let attributeColumns =
        "class, svce, acct, agrp, sync, srvr, sdmn, ptcl, atyp, port, path, crtr, labl, gena, pdmn, accc, cdat, mdat"
    /// The package's creator mark `'ApxK'` (a literal here, not `apexCreator`, for the same reason).
    static let creator: Int64 = 0x4170_784B
    /// What `setItem` of a string with default options keeps in `gena` (same size, same bytes).
    static let metadata = Array("apx=1;enc=s;ac=none;av=0;lbl=0;os=0".utf8)

    let path: String
    let db: OpaquePointer
    private let begin: OpaquePointer, commit: OpaquePointer
    private let findItem: OpaquePointer, findStaged: OpaquePointer, update: OpaquePointer, insert: OpaquePointer
    private let attributesByAccount: OpaquePointer, valueByKey: OpaquePointer, accounts: OpaquePointer
    let allAttributes: OpaquePointer
    private let key: [UInt8]
    private let adPrefix: [UInt8], adSuffix: [UInt8]
    private var associated: [UInt8] = []
    private var staged: [UInt8] = []
    private var sealed: [UInt8]
    private var opened: [UInt8]
    private(set) var count = 0
    /// The keys of the last ``listAll()`` (for the sort diagnostic).
    private(set) var lastListed: [String] = []
    var sink = 0

    init(directory: URL, valueSize: Int) throws {
        path = directory.appendingPathComponent("floor.sqlite").path
        db = try Self.createStore(path)

        begin = try Self.prepare(db, "BEGIN IMMEDIATE")
        commit = try Self.prepare(db, "COMMIT")
        // setItem: the item under the key (any creator: a foreign item is an error), then the staged account.
        findItem = try Self.prepare(
            db, "SELECT id, crtr, cdat FROM items WHERE class = ? AND svce = ? AND acct = ? AND agrp = ?")
        findStaged = try Self.prepare(
            db, "SELECT id FROM items WHERE class = ? AND svce = ? AND acct = ? AND agrp = ? AND crtr = ?")
        update = try Self.prepare(
            db, "UPDATE items SET labl = ?, gena = ?, pdmn = ?, accc = ?, mdat = ?, data = ? WHERE id = ?")
        insert = try Self.prepare(
            db,
            "INSERT INTO items(class, svce, acct, agrp, sync, crtr, labl, gena, pdmn, accc, cdat, mdat, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        // getItem / getItemInfo: the package's item by account; getItem then reads the value by primary key.
        attributesByAccount = try Self.prepare(
            db,
            "SELECT id, labl, gena, pdmn, accc, sync, cdat, mdat FROM items WHERE class = ? AND svce = ? AND acct = ? AND agrp = ? AND crtr = ?"
        )
        valueByKey = try Self.prepare(db, "SELECT data FROM items WHERE \(Self.primaryKeyClause)")
        // getAllKeys: the accounts of the service's own items.
        accounts = try Self.prepare(db, "SELECT acct FROM items WHERE class = ? AND svce = ? AND agrp = ? AND crtr = ?")
        // Diagnostic only: the store's own getAllKeys SELECT (every attribute column of every item).
        allAttributes = try Self.prepare(
            db, "SELECT \(Self.attributeColumns) FROM items WHERE class = ? AND svce = ? AND agrp = ? AND crtr = ?")

        guard sodium_init() >= 0 else { throw BenchError("libsodium failed to initialise") }
        var keyBytes = [UInt8](repeating: 0, count: Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES))
        randombytes_buf(&keyBytes, keyBytes.count)
        key = keyBytes
        sealed = [UInt8](repeating: 0, count: Self.nonceLength + valueSize + Self.tagLength)
        opened = [UInt8](repeating: 0, count: valueSize)
        // Associated data of the store's shape (binding 2): identity and protection, each field length-prefixed,
        // then no label, the metadata and two dates.
        func field(_ text: String, into out: inout [UInt8]) {
            let bytes = Array(text.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: bytes)
        }
        var prefix = Array("apxk-item-v2".utf8)
        for text in ["genp", Names.service] { field(text, into: &prefix) }
        var suffix: [UInt8] = []
        for text in [Names.accessGroup, "0", "", "", "", "", "0", "", "ak", "0", String(Self.creator)] {
            field(text, into: &suffix)
        }
        suffix.append(0)
        suffix.append(1)
        withUnsafeBytes(of: UInt32(Self.metadata.count).bigEndian) { suffix.append(contentsOf: $0) }
        suffix.append(contentsOf: Self.metadata)
        suffix.append(contentsOf: [UInt8](repeating: 0, count: 16))
        adPrefix = prefix
        adSuffix = suffix

        // Constant parameters, bound once (a reset keeps bindings).
        for statement in [findItem, findStaged, attributesByAccount, valueByKey, accounts, allAttributes] {
            bindText(statement, 1, Array("genp".utf8))
            bindText(statement, 2, Array(Names.service.utf8))
        }
        for statement in [findItem, findStaged, attributesByAccount, valueByKey] {
            bindText(statement, 4, Array(Names.accessGroup.utf8))
        }
        bindText(accounts, 3, Array(Names.accessGroup.utf8))
        bindText(allAttributes, 3, Array(Names.accessGroup.utf8))
        sqlite3_bind_int64(allAttributes, 4, Self.creator)
        sqlite3_bind_int64(findStaged, 5, Self.creator)
        sqlite3_bind_int64(attributesByAccount, 5, Self.creator)
        sqlite3_bind_int64(accounts, 4, Self.creator)
        sqlite3_bind_int64(valueByKey, 5, 0)
        for index: Int32 in [6, 7, 8, 9, 11] { bindText(valueByKey, index, []) }
        sqlite3_bind_int64(valueByKey, 10, 0)
        sqlite3_bind_null(update, 1)
        bindBlob(update, 2, Self.metadata)
        bindText(update, 3, Array("ak".utf8))
        sqlite3_bind_int64(update, 4, 0)
        for (index, text) in [(1, "genp"), (2, Names.service), (4, Names.accessGroup), (9, "ak")] {
            bindText(insert, Int32(index), Array(text.utf8))
        }
        sqlite3_bind_int64(insert, 5, 0)
        sqlite3_bind_int64(insert, 6, Self.creator)
        sqlite3_bind_null(insert, 7)
        bindBlob(insert, 8, Self.metadata)
        sqlite3_bind_int64(insert, 10, 0)
    }

    deinit {
        for statement in [
            begin, commit, findItem, findStaged, update, insert, attributesByAccount, valueByKey, accounts,
            allAttributes,
        ] {
            sqlite3_finalize(statement)
        }
        sqlite3_close_v2(db)
    }

    static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    // MARK: Population

    /// Grows the floor store to `target` items, in transactions of `batch` inserts.
    func populate(to target: Int, values: [[UInt8]], batch: Int = 5_000) throws {
        var next = count
        while next < target {
            let end = min(target, next + batch)
            try run(begin)
            for index in next..<end {
                let account = Array(Names.key(index).utf8)
                let now = Date().timeIntervalSince1970
                seal(values[index % values.count], account: account)
                bindText(insert, 3, account)
                sqlite3_bind_double(insert, 11, now)
                sqlite3_bind_double(insert, 12, now)
                bindBlob(insert, 13, sealed)
                try run(insert)
            }
            try run(commit)
            next = end
        }
        count = max(count, target)
    }

    // MARK: Timed operations (each returns nanoseconds for the whole slice)

    /// setItem on existing keys: BEGIN IMMEDIATE; the item by service/account/group; the staged account; one
    /// seal; UPDATE of the row; COMMIT.
    func set(_ keys: ArraySlice<[UInt8]>, values: [[UInt8]]) throws -> UInt64 {
        let start = Clock.nanoseconds()
        var v = 0
        for account in keys {
            try run(begin)
            bindText(findItem, 3, account)
            guard try step(findItem), sqlite3_column_int64(findItem, 1) == Self.creator else {
                throw BenchError("floor: no item under \(String(decoding: account, as: UTF8.self))")
            }
            let id = sqlite3_column_int64(findItem, 0)
            sqlite3_reset(findItem)
            staged.removeAll(keepingCapacity: true)
            staged.append(contentsOf: account)
            staged.append(0)
            staged.append(contentsOf: "staged".utf8)
            bindText(findStaged, 3, staged)
            if try step(findStaged) { throw BenchError("floor: unexpected staged item") }
            sqlite3_reset(findStaged)
            seal(values[v], account: account)
            sqlite3_bind_double(update, 5, Date().timeIntervalSince1970)
            bindBlob(update, 6, sealed)
            sqlite3_bind_int64(update, 7, id)
            try run(update)
            try run(commit)
            v = v + 1 == values.count ? 0 : v + 1
        }
        return Clock.nanoseconds() - start
    }

    /// getItem: the attributes by account, then the value by primary key, opened once.
    func get(_ keys: ArraySlice<[UInt8]>) throws -> UInt64 {
        var total = 0
        let start = Clock.nanoseconds()
        for account in keys {
            bindText(attributesByAccount, 3, account)
            guard try step(attributesByAccount) else { throw BenchError("floor: get found nothing") }
            total &+=
                Int(sqlite3_column_bytes(attributesByAccount, 2)) &+ Int(sqlite3_column_bytes(attributesByAccount, 3))
            sqlite3_reset(attributesByAccount)
            bindText(valueByKey, 3, account)
            guard try step(valueByKey), let blob = sqlite3_column_blob(valueByKey, 0) else {
                throw BenchError("floor: get found no value")
            }
            let length = Int(sqlite3_column_bytes(valueByKey, 0))
            guard try open(blob.assumingMemoryBound(to: UInt8.self), length, account: account) else {
                throw BenchError("floor: a value did not open")
            }
            sqlite3_reset(valueByKey)
            total &+= Int(opened[0])
        }
        let elapsed = Clock.nanoseconds() - start
        sink &+= total
        return elapsed
    }

    /// getItemInfo: the attributes by account, each column read.
    func info(_ keys: ArraySlice<[UInt8]>) throws -> UInt64 {
        var total = 0
        let start = Clock.nanoseconds()
        for account in keys {
            bindText(attributesByAccount, 3, account)
            guard try step(attributesByAccount) else { throw BenchError("floor: info found nothing") }
            let s = attributesByAccount
            total &+= sqlite3_column_type(s, 1) == SQLITE_NULL ? 0 : 1
            total &+= Int(sqlite3_column_bytes(s, 2)) &+ Int(sqlite3_column_bytes(s, 3))
            total &+= Int(sqlite3_column_int64(s, 4)) &+ Int(sqlite3_column_int64(s, 5))
            total &+= Int(sqlite3_column_double(s, 6)) &+ Int(sqlite3_column_double(s, 7))
            sqlite3_reset(s)
        }
        let elapsed = Clock.nanoseconds() - start
        sink &+= total
        return elapsed
    }

    /// getAllKeys: the service's accounts, as Swift strings.
    func listAll() throws -> (nanoseconds: UInt64, keys: Int) {
        let start = Clock.nanoseconds()
        var keys: [String] = []
        keys.reserveCapacity(count)
        while try step(accounts) {
            let text = sqlite3_column_text(accounts, 0)
            let length = Int(sqlite3_column_bytes(accounts, 0))
            keys.append(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        }
        sqlite3_reset(accounts)
        let elapsed = Clock.nanoseconds() - start
        guard keys.count == count else {
            throw BenchError("floor: listed \(keys.count) keys; the store holds \(count)")
        }
        lastListed = keys
        return (elapsed, keys.count)
    }

    // MARK: SQLite and libsodium

    private func seal(_ value: [UInt8], account: [UInt8]) {
        buildAssociatedData(account)
        let nonceLength = Self.nonceLength
        sealed.withUnsafeMutableBufferPointer { out in
            let base = out.baseAddress!
            randombytes_buf(base, nonceLength)
            var written: UInt64 = 0
            value.withUnsafeBufferPointer { message in
                associated.withUnsafeBufferPointer { ad in
                    key.withUnsafeBufferPointer { keyBytes in
                        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                            base + nonceLength, &written, message.baseAddress, UInt64(message.count), ad.baseAddress,
                            UInt64(ad.count), nil, base, keyBytes.baseAddress!)
                    }
                }
            }
        }
    }

    private func open(_ input: UnsafePointer<UInt8>, _ length: Int, account: [UInt8]) throws -> Bool {
        guard length - Self.nonceLength - Self.tagLength == opened.count else {
            throw BenchError("floor: a sealed value has the wrong size")
        }
        buildAssociatedData(account)
        let nonceLength = Self.nonceLength
        var written: UInt64 = 0
        let rc = opened.withUnsafeMutableBufferPointer { out in
            associated.withUnsafeBufferPointer { ad in
                key.withUnsafeBufferPointer { keyBytes in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        out.baseAddress, &written, nil, input + nonceLength, UInt64(length - nonceLength),
                        ad.baseAddress, UInt64(ad.count), input, keyBytes.baseAddress!)
                }
            }
        }
        return rc == 0
    }

    private func buildAssociatedData(_ account: [UInt8]) {
        associated.removeAll(keepingCapacity: true)
        associated.append(contentsOf: adPrefix)
        withUnsafeBytes(of: UInt32(account.count).bigEndian) { associated.append(contentsOf: $0) }
        associated.append(contentsOf: account)
        associated.append(contentsOf: adSuffix)
    }

    private func bindText(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                _ = sqlite3_bind_text(statement, index, "", 0, transient)
                return
            }
            base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                _ = sqlite3_bind_text(statement, index, chars, Int32(buffer.count), transient)
            }
        }
    }

    private func bindBlob(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            _ = sqlite3_bind_blob(statement, index, buffer.baseAddress, Int32(buffer.count), transient)
        }
    }

    /// Steps once: true for a row, false when done.
    func step(_ statement: OpaquePointer) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc:
            sqlite3_reset(statement)
            throw BenchError("floor: SQLite error \(rc): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// Runs a statement that returns no rows, and resets it.
    private func run(_ statement: OpaquePointer) throws {
        while try step(statement) {}
        sqlite3_reset(statement)
    }

    /// A new SQLite file at `path` with the store's schema and PRAGMAs (WAL, synchronous=FULL).
    static func createStore(_ path: String) throws -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else { throw BenchError("can't open the floor store \(path): code \(rc)") }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 10_000)
        try exec(
            handle,
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;"
        )
        try exec(handle, "BEGIN IMMEDIATE; \(schema) PRAGMA user_version = 2; COMMIT;")
        return handle
    }

    static func prepare(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw BenchError("floor: can't prepare '\(sql)': \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else {
            throw BenchError("SQLite error \(rc) in '\(sql)': \(String(cString: sqlite3_errmsg(db)))")
        }
    }
}
