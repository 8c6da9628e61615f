import ApexKeychain
import ApexKeychainStore
import ApexSQLite
import CSQLite
import CSodium
import Foundation

/// One row of the store as a migration wrote it, as the floor writes it again: every column as bytes or a
/// number, taken from the store after the real run (so that the floor writes the very same rows).
struct FloorRow {
    let service: [UInt8], account: [UInt8], group: [UInt8]
    let label: [UInt8]?, generic: [UInt8]?
    let domain: [UInt8]
    let accessControl: Int64
    let created: Double, modified: Double
    let value: [UInt8]

    init(_ a: ItemAttributes, value: Data) {
        service = Array(a.service.utf8)
        account = Array(a.account.utf8)
        group = Array(a.accessGroup.utf8)
        label = a.label.map { Array($0.utf8) }
        generic = a.generic.map(Array.init)
        domain = Array(a.protectionDomain.rawValue.utf8)
        accessControl = Int64(a.accessControl.rawValue)
        created = a.createdAt.timeIntervalSince1970
        modified = a.modifiedAt.timeIntervalSince1970
        self.value = Array(value)
    }
}

/// The physical floor of a migration's writes: the store's schema and PRAGMAs (WAL, synchronous=FULL) on a plain
/// SQLite file, driven through the raw C API with statements prepared once, in batches of the run's size:
/// - apply: per batch one `BEGIN IMMEDIATE` … `COMMIT`; per row a look-up of its key, one XChaCha20-Poly1305 seal
///   under the associated data the store binds (``SQLiteKeychainDatabase/associatedData(of:)``, built here from
///   the row's bytes and checked against the store's own before anything is timed) and one `INSERT`;
/// - verify: per row, the row by key, its associated data built from the columns read, one open, one compare;
/// - ledger: per row one HMAC-SHA-256 of the value (the fingerprint) and one BLAKE2b digest of its place; per
///   batch its record (the same JSON) built and sealed twice, inserted in the batch's transaction, and updated
///   with the verified states in the next batch's (the last one's in a transaction of its own), as a run does.
final class BulkFloor {
    let path: String
    private let db: OpaquePointer
    private let begin: OpaquePointer, commit: OpaquePointer, find: OpaquePointer, insert: OpaquePointer
    private let read: OpaquePointer, update: OpaquePointer, keys: OpaquePointer
    private var key = [UInt8](repeating: 0, count: Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES))
    private var hmacKey = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_KEYBYTES))
    private var associated: [UInt8] = []
    private var sealed: [UInt8] = []
    private var opened: [UInt8] = []
    private var record: [UInt8] = []
    private var sealedRecord: [UInt8] = []
    var sink = 0

    /// The migration ledger's service (its records are rows of the store too).
    static let service = "apex-keychain.migration"

    init(path: String) throws {
        self.path = path
        db = try FloorSide.createStore(path)
        begin = try FloorSide.prepare(db, "BEGIN IMMEDIATE")
        commit = try FloorSide.prepare(db, "COMMIT")
        find = try FloorSide.prepare(
            db, "SELECT id FROM items WHERE class = 'genp' AND svce = ? AND acct = ? AND agrp = ?")
        insert = try FloorSide.prepare(
            db,
            "INSERT INTO items(class, svce, acct, agrp, sync, crtr, labl, gena, pdmn, accc, cdat, mdat, data, seal) "
                + "VALUES ('genp', ?, ?, ?, 0, \(FloorSide.creator), ?, ?, ?, ?, ?, ?, ?, 2)")
        read = try FloorSide.prepare(
            db,
            "SELECT crtr, labl, gena, pdmn, accc, cdat, mdat, data FROM items WHERE class = 'genp' AND svce = ? AND acct = ? AND agrp = ?"
        )
        update = try FloorSide.prepare(db, "UPDATE items SET data = ?, mdat = ? WHERE id = ?")
        keys = try FloorSide.prepare(db, "SELECT svce, acct FROM items WHERE class = 'genp'")
        guard sodium_init() >= 0 else { throw BenchError("libsodium failed to initialise") }
        randombytes_buf(&key, key.count)
        randombytes_buf(&hmacKey, hmacKey.count)
    }

    deinit {
        for statement in [begin, commit, find, insert, read, update, keys] { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    /// The plan floor: the target's keys in one `SELECT`, then a hash look-up of every key to write (service,
    /// 0, key).
    func plan(_ places: [[UInt8]]) throws -> Double {
        let started = Clock.nanoseconds()
        var held = Set<[UInt8]>()
        while try step(keys) {
            held.insert(column(keys, 0) + [0] + column(keys, 1))
        }
        sqlite3_reset(keys)
        var absent = 0
        for place in places where !held.contains(place) { absent += 1 }
        guard absent == places.count else { throw BenchError("the floor store is not empty") }
        return Clock.seconds(since: started)
    }

    /// Checks that the floor seals each row under exactly the associated data the store binds.
    func checkAssociatedData(_ rows: [FloorRow], against attributes: [ItemAttributes]) throws {
        for (row, a) in zip(rows, attributes) {
            buildAssociatedData(row, row.label, row.generic, row.created, row.modified)
            guard associated == SQLiteKeychainDatabase.associatedData(of: a) else {
                throw BenchError("the floor's associated data differs from the store's for \(a.service)/\(a.account)")
            }
        }
    }

    /// Writes, reads back and records `rows` in batches of `batch`: seconds spent on each stage.
    func run(_ rows: [FloorRow], batch: Int) throws -> (apply: Double, verify: Double, ledger: Double) {
        var (apply, verify, ledger): (UInt64, UInt64, UInt64) = (0, 0, 0)
        var sequence = 0
        var start = 0
        // The record of the batch before, with its verified states, written in this batch's transaction.
        var verified: (id: Int64, row: FloorRow)?
        func updateRecord(_ record: (id: Int64, row: FloorRow)) throws {
            bindBlob(update, 1, sealedRecord)
            sqlite3_bind_double(update, 2, record.row.modified)
            sqlite3_bind_int64(update, 3, record.id)
            try run(update)
        }
        while start < rows.count {
            let chunk = rows[start..<min(start + batch, rows.count)]
            start = chunk.endIndex
            sequence += 1
            let account = Array(
                "entries:default:\(String(repeating: "0", count: 10 - String(sequence).count))\(sequence)".utf8)
            // Ledger: fingerprints, digests and the record, pending.
            var t = Clock.nanoseconds()
            var entries: [([UInt8], [UInt8])] = []
            entries.reserveCapacity(chunk.count)
            for row in chunk { entries.append((digest(row), fingerprint(row))) }
            buildRecord(entries, state: "pending")
            let recordRow = recordRow(account)
            sealRecord(recordRow)
            try run(begin)
            if let record = verified { try updateRecord(record) }
            bindKey(insert, recordRow)
            bindRow(recordRow, sealed: sealedRecord)
            try run(insert)
            let recordID = sqlite3_last_insert_rowid(db)
            var now = Clock.nanoseconds()
            ledger += now - t
            // Apply: each row looked up, sealed and inserted; one commit.
            t = now
            for row in chunk {
                bindKey(find, row)
                if try step(find) { throw BenchError("the floor item exists") }
                sqlite3_reset(find)
                buildAssociatedData(row, row.label, row.generic, row.created, row.modified)
                seal(row.value)
                bindKey(insert, row)
                bindRow(row, sealed: sealed)
                try run(insert)
            }
            try run(commit)
            now = Clock.nanoseconds()
            apply += now - t
            // Verify: each row read by key and opened under the associated data of the columns read.
            t = now
            for row in chunk {
                bindKey(read, row)
                guard try step(read) else { throw BenchError("the floor item is missing") }
                let label = sqlite3_column_type(read, 1) == SQLITE_NULL ? nil : column(read, 1)
                let generic = sqlite3_column_type(read, 2) == SQLITE_NULL ? nil : column(read, 2)
                buildAssociatedData(
                    row, label, generic, sqlite3_column_double(read, 5), sqlite3_column_double(read, 6))
                let ok = try open(read, 7) && opened == row.value
                sqlite3_reset(read)
                guard ok else { throw BenchError("the floor item does not open") }
            }
            now = Clock.nanoseconds()
            verify += now - t
            // Ledger: the record again, verified, for the next batch's transaction.
            t = now
            buildRecord(entries, state: "verified")
            sealRecord(recordRow)
            verified = (recordID, recordRow)
            ledger += Clock.nanoseconds() - t
        }
        if let record = verified {
            let t = Clock.nanoseconds()
            try run(begin)
            try updateRecord(record)
            try run(commit)
            ledger += Clock.nanoseconds() - t
        }
        return (Double(apply) / 1e9, Double(verify) / 1e9, Double(ledger) / 1e9)
    }

    // MARK: Ledger

    /// BLAKE2b-128 of service, 0, access group, 0, key, in lowercase hex (`Ledger.digest`).
    private func digest(_ row: FloorRow) -> [UInt8] {
        var text = row.service
        text.append(0)
        text.append(contentsOf: row.group)
        text.append(0)
        text.append(contentsOf: row.account)
        var hash = [UInt8](repeating: 0, count: 16)
        crypto_generichash(&hash, 16, text, UInt64(text.count), nil, 0)
        var hex = [Int8](repeating: 0, count: 33)
        sodium_bin2hex(&hex, 33, hash, 16)
        return hex.dropLast().map { UInt8(bitPattern: $0) }
    }

    /// HMAC-SHA-256 of the kind and the value, in Base64 (`Ledger.fingerprint`).
    private func fingerprint(_ row: FloorRow) -> [UInt8] {
        var message = Array("string".utf8)
        message.append(0)
        message.append(contentsOf: row.value)
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256(&mac, message, UInt64(message.count), hmacKey)
        let variant = Int32(sodium_base64_VARIANT_ORIGINAL)
        var text = [Int8](repeating: 0, count: sodium_base64_encoded_len(mac.count, variant))
        sodium_bin2base64(&text, text.count, mac, mac.count, variant)
        return text.dropLast().map { UInt8(bitPattern: $0) }
    }

    /// The record's JSON, as the ledger writes it: `{"<digest>":{"fingerprint":"…","state":"…"},…}`.
    private func buildRecord(_ entries: [([UInt8], [UInt8])], state: String) {
        record.removeAll(keepingCapacity: true)
        record.append(UInt8(ascii: "{"))
        for (index, (digest, fingerprint)) in entries.enumerated() {
            if index > 0 { record.append(UInt8(ascii: ",")) }
            record.append(UInt8(ascii: "\""))
            record.append(contentsOf: digest)
            record.append(contentsOf: "\":{\"fingerprint\":\"".utf8)
            record.append(contentsOf: fingerprint)
            record.append(contentsOf: "\",\"state\":\"".utf8)
            record.append(contentsOf: state.utf8)
            record.append(contentsOf: "\"}".utf8)
        }
        record.append(UInt8(ascii: "}"))
    }

    private func recordRow(_ account: [UInt8]) -> FloorRow {
        let now = Date()
        return FloorRow(
            ItemAttributes(
                service: Self.service, account: String(decoding: account, as: UTF8.self), accessGroup: "",
                creator: apexCreator, generic: Data(FloorSide.metadata), protectionDomain: .cku, createdAt: now,
                modifiedAt: now),
            value: Data())
    }

    private func sealRecord(_ row: FloorRow) {
        buildAssociatedData(row, row.label, row.generic, row.created, row.modified)
        seal(record)
        sealedRecord = sealed
    }

    // MARK: Rows and sealing

    /// Binds a row's service, account and group as parameters 1 to 3.
    private func bindKey(_ statement: OpaquePointer, _ row: FloorRow) {
        bindText(statement, 1, row.service)
        bindText(statement, 2, row.account)
        bindText(statement, 3, row.group)
    }

    private func bindRow(_ row: FloorRow, sealed: [UInt8]) {
        if let label = row.label { bindText(insert, 4, label) } else { sqlite3_bind_null(insert, 4) }
        if let generic = row.generic { bindBlob(insert, 5, generic) } else { sqlite3_bind_null(insert, 5) }
        bindText(insert, 6, row.domain)
        sqlite3_bind_int64(insert, 7, row.accessControl)
        sqlite3_bind_double(insert, 8, row.created)
        sqlite3_bind_double(insert, 9, row.modified)
        bindBlob(insert, 10, sealed)
    }

    /// The store's associated data of a row (binding 2): every column but the value, each field length-prefixed.
    private func buildAssociatedData(
        _ row: FloorRow, _ label: [UInt8]?, _ generic: [UInt8]?, _ created: Double, _ modified: Double
    ) {
        associated.removeAll(keepingCapacity: true)
        associated.append(contentsOf: "apxk-item-v2".utf8)
        field(Array("genp".utf8))
        field(row.service)
        field(row.account)
        field(row.group)
        field([UInt8(ascii: "0")])
        for _ in 0..<4 { field([]) }
        field([UInt8(ascii: "0")])
        field([])
        field(row.domain)
        field(Array(String(row.accessControl).utf8))
        field(Array(String(FloorSide.creator).utf8))
        optional(label)
        optional(generic)
        number(created)
        number(modified)
    }

    private func field(_ bytes: [UInt8]) {
        withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { associated.append(contentsOf: $0) }
        associated.append(contentsOf: bytes)
    }

    private func optional(_ bytes: [UInt8]?) {
        guard let bytes else { return associated.append(0) }
        associated.append(1)
        field(bytes)
    }

    private func number(_ value: Double) {
        withUnsafeBytes(of: (value == 0 ? 0 : value).bitPattern.bigEndian) { associated.append(contentsOf: $0) }
    }

    private func seal(_ value: [UInt8]) {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let total = nonceLength + value.count + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        if sealed.count != total { sealed = [UInt8](repeating: 0, count: total) }
        sealed.withUnsafeMutableBufferPointer { buffer in
            randombytes_buf(buffer.baseAddress!, nonceLength)
            var length: UInt64 = 0
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                buffer.baseAddress! + nonceLength, &length, value, UInt64(value.count), associated,
                UInt64(associated.count), nil, buffer.baseAddress!, key)
        }
    }

    /// Opens the sealed value in `column` of `statement` into `opened`.
    private func open(_ statement: OpaquePointer, _ column: Int32) throws -> Bool {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let tag = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count >= nonceLength + tag, let blob = sqlite3_column_blob(statement, column) else { return false }
        let input = blob.assumingMemoryBound(to: UInt8.self)
        if opened.count != count - nonceLength - tag {
            opened = [UInt8](repeating: 0, count: count - nonceLength - tag)
        }
        var length: UInt64 = 0
        return crypto_aead_xchacha20poly1305_ietf_decrypt(
            &opened, &length, nil, input + nonceLength, UInt64(count - nonceLength), associated,
            UInt64(associated.count), input, key) == 0
    }

    // MARK: SQLite

    private func bindText(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress {
                _ = sqlite3_bind_text(
                    statement, index, base.assumingMemoryBound(to: CChar.self), Int32(raw.count), sqliteTransient)
            } else {
                _ = sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
            }
        }
    }

    private func bindBlob(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob(
                statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), sqliteTransient)
        }
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let blob = sqlite3_column_blob(statement, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }

    private func step(_ statement: OpaquePointer) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw BenchError("floor: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    private func run(_ statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        _ = try step(statement)
    }
}
