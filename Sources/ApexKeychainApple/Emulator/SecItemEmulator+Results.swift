import Foundation

extension ParsedQuery {
    /// How many rows the search returns: one unless `m_Limit` says otherwise (SecItemServer.c:2587, §2.4).
    var limit: Int64 { matchLimit ?? 1 }

    /// Whether the result is one value rather than an array: a limit of `m_LimitOne` or the number 1; any other
    /// limit is "array mode", even for one match (§2.4).
    var returnsOne: Bool { limit == 1 }

    /// The result of a search that found `rows` (SecItemDb.c `handle_result` l.456–540; §2.4's table).
    func result(for rows: [EmulatorRow]) -> SecItemResult {
        if returnsOne { return rows.first.flatMap(entry) ?? .none }
        // No return keys in array mode: an empty array [DERIVED, §2.4]; r_Ref alone: an array without entries.
        return .list(rows.compactMap(entry))
    }

    /// One row's entry, or nil when the return keys ask for nothing a password item has.
    private func entry(for row: EmulatorRow) -> SecItemResult? {
        let asked = [returnData, returnAttributes, returnRef, returnPersistentRef].filter { $0 }.count
        switch asked {
        case 0: return nil
        case 1 where returnData: return .data(row.data ?? Data())  // empty CFData when the item has none
        case 1 where returnPersistentRef: return .data(row.persistentRef.data)
        // A SecKeychainItemRef exists for certificates, keys and identities only (SecItem.m:441–468, 1268–1283).
        case 1 where returnRef: return nil
        default: break
        }
        // Several return keys (or r_Attributes): a dictionary. The stored attributes only with r_Attributes;
        // `v_Data` only with r_Data, `v_PersistentRef` only with r_PersistentRef; `class` with r_Ref. The
        // synthesized `accc` is left out: it has no public reader of its constraints (the backend's shared
        // decision).
        var dictionary: SecItemDictionary = returnAttributes ? row.attributes : [:]
        if returnData { dictionary[.valueData] = .data(row.data ?? Data()) }
        if returnPersistentRef { dictionary[.valuePersistentRef] = .data(row.persistentRef.data) }
        if returnRef { dictionary[.itemClass] = .string(row.itemClass) }
        return .attributes(dictionary)
    }
}

extension SecItemEmulator {
    /// One stored item, as a test looks at it: every item of every group, whatever the device's state.
    public struct Item: Sendable, Equatable {
        /// `genp` or `inet`.
        public var itemClass: String
        /// The stored attributes, as an `r_Attributes` search returns them (`agrp`, `pdmn`, `sync`, `cdat`,
        /// `mdat` always; no `accc`).
        public var attributes: SecItemDictionary
        /// The stored `v_Data`, or nil when the add gave none.
        public var data: Data?
        /// The item's access control, when it has one.
        public var accessControl: SecAccessControlSpec?
        /// The item's `v_PersistentRef`.
        public var persistentRef: Data

        init(_ row: EmulatorRow) {
            itemClass = row.itemClass
            attributes = row.attributes
            data = row.data
            accessControl = row.accessControl
            persistentRef = row.persistentRef.data
        }
    }
}
