import ApexKeychain
import ApexSQLite
import ApexSodium
import Foundation

/// What a row's sealed value is bound to: every column of the row but the value, as the row holds them.
///
/// The dates are kept as the numbers in the `cdat` and `mdat` columns, not as `Date`s, so that a value sealed
/// from the numbers it was written with opens from the numbers read back.
struct SealedRow {
    var key: ItemAttributes.PrimaryKey
    var protectionDomain: ProtectionDomain
    var accessControl: AccessControlFlags
    var creator: UInt32?
    var label: String?
    var generic: Data?
    var created: Double
    var modified: Double

    /// The row that ``SQLiteKeychainDatabase/bindRow(_:_:sealed:)`` writes for `a`.
    init(_ a: ItemAttributes) {
        self.init(a, created: a.createdAt.timeIntervalSince1970, modified: a.modifiedAt.timeIntervalSince1970)
    }

    /// The row of `a` with the dates as its columns hold them.
    init(_ a: ItemAttributes, created: Double, modified: Double) {
        key = a.primaryKey
        protectionDomain = a.protectionDomain
        accessControl = a.accessControl
        creator = a.creator
        label = a.label
        generic = a.generic
        self.created = created
        self.modified = modified
    }

    /// The associated data of `binding`: length-prefixed fields, so that no two rows share the same bytes.
    /// Written byte by byte, without Strings in between: every write and every read of a value builds it.
    func associatedData(_ binding: SealBinding) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(
            160 + key.service.utf8.count + key.account.utf8.count + key.accessGroup.utf8.count
                + (label?.utf8.count ?? 0) + (generic?.count ?? 0))
        func length(_ count: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian) { out.append(contentsOf: $0) }
        }
        func field(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                length(bytes.count)
                out.append(contentsOf: bytes)
            }
        }
        /// A number as its decimal digits, as `String(n)` writes them.
        func field(_ number: UInt64) {
            var count = 1
            var divisor: UInt64 = 1
            while number / divisor >= 10 {
                divisor *= 10
                count += 1
            }
            length(count)
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(number / divisor % 10))
                divisor /= 10
            }
        }
        /// An optional field: a 0 byte for none, else a 1 byte and the field (nil and empty differ).
        func optional(_ text: String?) {
            guard let text else { return out.append(0) }
            out.append(1)
            field(text)
        }
        func optional(_ data: Data?) {
            guard let data else { return out.append(0) }
            out.append(1)
            length(data.count)
            out.append(contentsOf: data)
        }
        /// A date column's number, as its 8 IEEE 754 bytes (big-endian); -0 is written as 0, as SQLite keeps it.
        func number(_ value: Double) {
            withUnsafeBytes(of: (value == 0 ? 0 : value).bitPattern.bigEndian) { out.append(contentsOf: $0) }
        }
        switch binding {
        case .identity: out.append(contentsOf: "apxk-item-v1".utf8)
        case .wholeRow: out.append(contentsOf: "apxk-item-v2".utf8)
        }
        field(key.itemClass.rawValue)
        field(key.service)
        field(key.account)
        field(key.accessGroup)
        field(key.synchronizable ? "1" : "0")
        field(key.server)
        field(key.securityDomain)
        field(key.protocolCode)
        field(key.authenticationType)
        if key.port >= 0 { field(UInt64(key.port)) } else { field(String(key.port)) }
        field(key.path)
        field(protectionDomain.rawValue)
        field(UInt64(accessControl.rawValue))
        if let creator { field(UInt64(creator)) } else { field("-") }
        guard binding == .wholeRow else { return out }
        optional(label)
        optional(generic)
        number(created)
        number(modified)
        return out
    }
}

/// Sealing and opening values for ``SQLiteKeychainDatabase``.
extension SQLiteKeychainDatabase {
    /// Seals `value` for the row `a` is written as, with the current binding (``SealBinding/wholeRow``).
    func seal(_ value: Data, _ a: ItemAttributes) -> Data {
        Sodium.seal(value, key: classKey(a.protectionDomain), associatedData: SealedRow(a).associatedData(.wholeRow))
    }

    /// The attributes and the opened value of a row read as `StoreSchema.attributeColumns`, `data`, then its
    /// binding, from column `c`.
    /// - Throws: `damaged` when the row's attributes are unknown or the value does not open under them.
    func openRow(_ row: Statement, from c: Int32) throws(DatabaseError) -> (ItemAttributes, Data) {
        let attributes = try attributes(of: row, from: c)
        let sealed = row.data(ItemColumn.data.offset(from: c)) ?? Data()
        guard let binding = SealBinding(rawValue: row.int64(ItemColumn.seal.offset(from: c))) else {
            throw DatabaseError(.damaged, "\(url.path): a row has an unknown seal binding")
        }
        let fields = SealedRow(
            attributes, created: row.double(ItemColumn.created.offset(from: c)),
            modified: row.double(ItemColumn.modified.offset(from: c)))
        let key = classKey(attributes.protectionDomain)
        guard let value = Sodium.open(sealed, key: key, associatedData: fields.associatedData(binding)) else {
            throw DatabaseError(
                .damaged,
                "\(url.path): the sealed value does not open: it was moved to another row, its attributes (protection, "
                    + "label, dates) were edited, or the file is damaged")
        }
        return (attributes, value)
    }

    private func classKey(_ domain: ProtectionDomain) -> SecretKey {
        keys[domain]!
    }
}

extension SQLiteKeychainDatabase {
    /// The associated data a value written now with attributes `a` is sealed with: for the benchmark's floor,
    /// which builds the same bytes itself and checks them against these before it measures.
    package static func associatedData(of a: ItemAttributes) -> [UInt8] {
        SealedRow(a).associatedData(.wholeRow)
    }
}
