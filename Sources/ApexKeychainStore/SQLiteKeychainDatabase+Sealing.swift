import ApexKeychain
import ApexSQLite
import ApexSodium
import Foundation

/// What a row's sealed value is bound to: every column of the row but the value, as the row holds them, each
/// field length-prefixed so that no two rows share the same bytes (``SealBinding`` says which columns). Built
/// from the attributes a write binds, or from the columns a read reads: the dates as the numbers the `cdat` and
/// `mdat` columns hold, so that a value sealed from the numbers it was written with opens from those read back.
/// Written byte by byte, without Strings in between: every write and every read of a value builds it.
enum SealedRow {
    /// The associated data of the row that ``SQLiteKeychainDatabase/bindRow(_:_:value:)`` writes for `a`
    /// (binding 2, ``SealBinding/wholeRow``).
    static func associatedData(_ a: ItemAttributes) -> [UInt8] {
        var out = FieldWriter(
            capacity: 160 + a.service.utf8.count + a.account.utf8.count + a.accessGroup.utf8.count
                + (a.label?.utf8.count ?? 0) + (a.generic?.count ?? 0))
        out.bytes.append(contentsOf: "apxk-item-v2".utf8)
        out.primaryKey(a.primaryKey)
        out.field(a.protectionDomain.rawValue)
        out.field(Int64(a.accessControl.rawValue))
        if let creator = a.creator { out.field(Int64(creator)) } else { out.field("-") }
        out.optional(a.label)
        if let generic = a.generic {
            out.bytes.append(1)
            generic.withUnsafeBytes { out.field($0) }
        } else {
            out.bytes.append(0)
        }
        out.number(a.createdAt.timeIntervalSince1970)
        out.number(a.modifiedAt.timeIntervalSince1970)
        return out.bytes
    }

    /// The associated data of a row read by ``SQLiteKeychainDatabase/rowSQL(sealColumn:withID:)`` from column
    /// `c` (its primary key's columns are `key`'s), under `binding`: the same bytes as ``associatedData(_:)`` of
    /// the attributes it was written with, the other columns read straight from the row.
    static func associatedData(
        row: Statement, from c: Int32, key: ItemAttributes.PrimaryKey, _ binding: SealBinding
    ) -> [UInt8] {
        func at(_ column: ItemColumn) -> Int32 { column.offset(from: c) }
        var out = FieldWriter(
            capacity: 256 + key.service.utf8.count + key.account.utf8.count + key.accessGroup.utf8.count)
        switch binding {
        case .identity: out.bytes.append(contentsOf: "apxk-item-v1".utf8)
        case .wholeRow: out.bytes.append(contentsOf: "apxk-item-v2".utf8)
        }
        out.primaryKey(key)
        row.withBytes(at(.protectionDomain)) { out.field($0) }
        out.field(Int64(UInt32(truncatingIfNeeded: row.int64(at(.accessControl)))))
        if row.isNull(at(.creator)) {
            out.field("-")
        } else {
            out.field(Int64(UInt32(truncatingIfNeeded: row.int64(at(.creator)))))
        }
        guard binding == .wholeRow else { return out.bytes }
        for column: ItemColumn in [.label, .generic] {
            if row.isNull(at(column)) {
                out.bytes.append(0)
            } else {
                out.bytes.append(1)
                row.withBytes(at(column)) { out.field($0) }
            }
        }
        out.number(row.double(at(.created)))
        out.number(row.double(at(.modified)))
        return out.bytes
    }
}

/// Length-prefixed fields, appended to bytes.
private struct FieldWriter {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func length(_ count: Int) {
        append(bigEndian: UInt64(UInt32(truncatingIfNeeded: count)), bytes: 4)
    }

    /// The low `count` bytes of `value`, most significant first (one append each: appending a raw buffer of four
    /// or eight bytes goes through the generic path).
    private mutating func append(bigEndian value: UInt64, bytes count: Int) {
        var shift = 8 * (count - 1)
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }

    /// The primary key's eleven fields, in ``ItemAttributes/PrimaryKey`` order: the identity every binding
    /// starts with, written alike for a write (from its attributes) and a read (from the key it looked up).
    mutating func primaryKey(_ key: ItemAttributes.PrimaryKey) {
        field(key.itemClass.rawValue)
        field(key.service)
        field(key.account)
        field(key.accessGroup)
        field(key.synchronizable ? "1" : "0")
        field(key.server)
        field(key.securityDomain)
        field(key.protocolCode)
        field(key.authenticationType)
        field(Int64(key.port))
        field(key.path)
    }

    mutating func field(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            length(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func field(_ raw: UnsafeRawBufferPointer) {
        length(raw.count)
        guard raw.count > 0 else { return }
        // As bytes: the copy of a typed buffer is one memcpy.
        bytes.append(contentsOf: raw.assumingMemoryBound(to: UInt8.self))
    }

    /// A number as its decimal digits, as `String(n)` writes them.
    mutating func field(_ number: Int64) {
        if number < 0 { return field(String(number)) }
        field(UInt64(number))
    }

    /// A number as its decimal digits, as `String(n)` writes them.
    mutating func field(_ number: UInt64) {
        var count = 1
        var divisor: UInt64 = 1
        while number / divisor >= 10 {
            divisor *= 10
            count += 1
        }
        length(count)
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(number / divisor % 10))
            divisor /= 10
        }
    }

    /// An optional field: a 0 byte for none, else a 1 byte and the field (nil and empty differ).
    mutating func optional(_ text: String?) {
        guard let text else { return bytes.append(0) }
        bytes.append(1)
        field(text)
    }

    /// A date column's number, as its 8 IEEE 754 bytes (big-endian); -0 is written as 0, as SQLite keeps it.
    mutating func number(_ value: Double) {
        append(bigEndian: (value == 0 ? 0 : value).bitPattern, bytes: 8)
    }
}

/// Sealing and opening values for ``SQLiteKeychainDatabase``.
extension SQLiteKeychainDatabase {
    /// Binds `value` sealed for the row written with attributes `a`, under the current binding
    /// (``SealBinding/wholeRow``), as parameter `index`: sealed straight into the bytes the statement binds.
    func bindSealed(_ statement: Statement, _ index: Int32, _ value: Data, _ a: ItemAttributes) throws(SQLiteError) {
        let key = classKey(a.protectionDomain)
        let associatedData = SealedRow.associatedData(a)
        try statement.bindBlob(index, count: Sodium.sealedCount(value.count)) { out in
            value.withUnsafeBytes { Sodium.seal($0, into: out, key: key, associatedData: associatedData) }
        }
    }

    /// The attributes and the opened value of the row under `key`, read by ``rowSQL(sealColumn:withID:)`` from
    /// column `c`.
    /// - Throws: `damaged` when the row's attributes are unknown or the value does not open under them.
    func openRow(
        _ row: Statement, from c: Int32, key: ItemAttributes.PrimaryKey
    ) throws(KeychainDatabaseError) -> (ItemAttributes, Data) {
        let attributes = try attributes(of: row, from: c, key: key)
        return (attributes, try openValue(row, from: c, key: key))
    }

    /// The opened value of a row read as ``openRow(_:from:key:)`` reads it, its associated data made of `key`
    /// and the other columns as read.
    /// - Throws: `damaged` when the row's protection or binding is unknown or the value does not open.
    func openValue(
        _ row: Statement, from c: Int32, key: ItemAttributes.PrimaryKey
    ) throws(KeychainDatabaseError) -> Data {
        guard let binding = SealBinding(rawValue: row.int64(ItemColumn.seal.offset(from: c))) else {
            throw KeychainDatabaseError(.damaged, "\(url.path): a row has an unknown seal binding")
        }
        let domain = try protectionDomain(of: row, from: c)
        let sealed = row.data(ItemColumn.data.offset(from: c)) ?? Data()
        let associated = SealedRow.associatedData(row: row, from: c, key: key, binding)
        guard let value = Sodium.open(sealed, key: classKey(domain), associatedData: associated) else {
            throw KeychainDatabaseError(
                .damaged,
                "\(url.path): the sealed value does not open: it was moved to another row, its attributes (protection, "
                    + "label, dates) were edited, or the file is damaged")
        }
        return value
    }

    private func classKey(_ domain: ProtectionDomain) -> SecretKey {
        keys[domain]!
    }
}

extension SQLiteKeychainDatabase {
    /// The associated data a value written now with attributes `a` is sealed with: for the benchmark's floor,
    /// which builds the same bytes itself and checks them against these before it measures.
    package static func associatedData(of a: ItemAttributes) -> [UInt8] {
        SealedRow.associatedData(a)
    }
}
