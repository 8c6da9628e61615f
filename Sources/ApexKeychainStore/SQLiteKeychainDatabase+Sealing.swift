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
    func associatedData(_ binding: SealBinding) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(
            160 + key.service.utf8.count + key.account.utf8.count + key.accessGroup.utf8.count
                + (label?.utf8.count ?? 0) + (generic?.count ?? 0))
        func length(_ count: Int) {
            let count = UInt32(truncatingIfNeeded: count)
            out.append(UInt8(count >> 24))
            out.append(UInt8(count >> 16 & 0xFF))
            out.append(UInt8(count >> 8 & 0xFF))
            out.append(UInt8(count & 0xFF))
        }
        func field<S: Collection>(_ bytes: S) where S.Element == UInt8 {
            length(bytes.count)
            out.append(contentsOf: bytes)
        }
        /// An optional field: a 0 byte for none, else a 1 byte and the field (nil and empty differ).
        func optional<S: Collection>(_ bytes: S?) where S.Element == UInt8 {
            guard let bytes else { return out.append(0) }
            out.append(1)
            field(bytes)
        }
        /// A date column's number, as its 8 IEEE 754 bytes (big-endian); -0 is written as 0, as SQLite keeps it.
        func number(_ value: Double) {
            let bits = (value == 0 ? 0 : value).bitPattern
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        }
        switch binding {
        case .identity: out.append(contentsOf: "apxk-item-v1".utf8)
        case .wholeRow: out.append(contentsOf: "apxk-item-v2".utf8)
        }
        field(key.itemClass.rawValue.utf8)
        field(key.service.utf8)
        field(key.account.utf8)
        field(key.accessGroup.utf8)
        field(key.synchronizable ? "1".utf8 : "0".utf8)
        field(key.server.utf8)
        field(key.securityDomain.utf8)
        field(key.protocolCode.utf8)
        field(key.authenticationType.utf8)
        field(String(key.port).utf8)
        field(key.path.utf8)
        field(protectionDomain.rawValue.utf8)
        field(String(accessControl.rawValue).utf8)
        field((creator.map { String($0) } ?? "-").utf8)
        guard binding == .wholeRow else { return out }
        optional(label?.utf8)
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
