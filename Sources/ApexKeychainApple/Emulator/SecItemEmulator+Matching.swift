import ApexKeychain
import Foundation

/// One stored item of the emulator: a row of the class's table.
struct EmulatorRow: Sendable {
    /// The row's number: what its persistent reference names (§2.11).
    let rowID: Int64
    /// `genp` or `inet`.
    let itemClass: String
    /// The coerced attributes as stored: always `agrp`, `pdmn`, `sync` (a Boolean), `cdat` and `mdat`; never
    /// `accc` (kept in `accessControl`).
    var attributes: SecItemDictionary {
        didSet { matchValues = Self.matchValues(attributes, of: itemClass) }
    }
    /// The attributes as securityd compares them, kept with them so that a search doesn't convert every row's.
    private(set) var matchValues: [SecItemKey: MatchValue]
    /// `v_Data`, or nil when the add gave none.
    var data: Data?
    /// The item's `SecAccessControl`, when it was added (or updated) with one.
    var accessControl: SecAccessControlSpec?
    /// The enrolled set of biometrics when a `biometryCurrentSet` access control was set.
    var enrolledSet: String?
    /// Whether the enrolled set changed since (a `biometryCurrentSet` item): its data can't be decrypted any more,
    /// its attributes still list (§2.7).
    var invalidated = false

    /// The protection class (`pdmn`).
    var protection: String {
        if case .string(let name)? = attributes[.accessible] { return name }
        return "ak"
    }

    /// The access group (`agrp`).
    var accessGroup: String {
        if case .string(let group)? = attributes[.accessGroup] { return group }
        return ""
    }

    /// Whether the item is synchronizable.
    var synchronizable: Bool { attributes[.synchronizable] == .bool(true) }

    /// The item's persistent reference.
    var persistentRef: PersistentRef { PersistentRef(itemClass: itemClass, rowID: rowID) }

    init(
        rowID: Int64, itemClass: String, attributes: SecItemDictionary, data: Data?,
        accessControl: SecAccessControlSpec?, enrolledSet: String?
    ) {
        self.rowID = rowID
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
        self.accessControl = accessControl
        self.enrolledSet = enrolledSet
        self.matchValues = Self.matchValues(attributes, of: itemClass)
    }

    private static func matchValues(_ attributes: SecItemDictionary, of itemClass: String) -> [SecItemKey: MatchValue] {
        var values: [SecItemKey: MatchValue] = [:]
        for (key, value) in attributes {
            if let kind = EmulatorSchema.kind(of: key, in: itemClass), let comparable = MatchValue(value, kind: kind) {
                values[key] = comparable
            }
        }
        return values
    }
}

/// A value as securityd compares it (`apple-secitem.md` §2.1): Blob attributes by their UTF-8 bytes (the SHA-1
/// of them, SecDbQuery.c:333–354), so that a String `"k"` and the Data `"k".utf8` are equal.
enum MatchValue: Hashable, Sendable {
    case bytes(Data)
    case number(Int64)
    case text(String)
    case date(Date)

    /// The comparable form of a coerced value, or nil for one that is no match criterion (`accc`, `syna`).
    init?(_ value: SecItemValue, kind: AttributeKind) {
        switch (kind, value) {
        case (.blob, .string(let text)): self = .bytes(Data(text.utf8))
        case (.blob, .data(let data)): self = .bytes(data)
        case (.blob, .number(let number)), (.number, .number(let number)): self = .number(number)
        case (.number, .string(let text)), (.accessible, .string(let text)), (.accessGroup, .string(let text)):
            self = .text(text)
        case (.date, .date(let date)): self = .date(date)
        case (.synchronizable, .bool(let on)): self = .number(on ? 1 : 0)
        default: return nil
        }
    }
}

/// An item's identity: its class and the values of the class's primary key, defaults applied (§2.2).
struct PrimaryKey: Hashable, Sendable {
    let itemClass: String
    let values: [MatchValue]
}

extension EmulatorSchema {
    /// The `UNIQUE(...)` columns of each class (SecItemSchema.c, §2.2). `musr` is the single user of an iPhone
    /// and `ggrp` empty for normal items: constant here, so left out.
    static func primaryKey(of itemClass: String) -> [String] {
        switch itemClass {
        case SecItemConstant.internetPassword:
            ["acct", "sdmn", "srvr", "ptcl", "atyp", "port", "path", "agrp", "sync", "vwht", "tkid"]
        default: ["acct", "svce", "agrp", "sync", "vwht", "tkid"]
        }
    }

    /// The default of an absent primary-key column: `""` (flag E) or 0 (flag Z) (query_pre_add,
    /// SecItemDb.c:1243–1282; SecDbItem.c:282–293, §2.2).
    static func defaultValue(of key: String) -> MatchValue? {
        switch key {
        case "acct", "svce", "sdmn", "srvr", "atyp", "path", "vwht", "tkid", "ggrp": .bytes(Data())
        case "ptcl", "port", "sync": .number(0)
        default: nil
        }
    }

    /// How the class's attribute `key` compares, or nil when the class doesn't have it.
    static func kind(of key: SecItemKey, in itemClass: String) -> AttributeKind? {
        attributes(of: itemClass)?[key.rawValue]
    }
}

extension EmulatorRow {
    /// The comparable value of an attribute, with the default of a primary-key column the item doesn't have.
    func matchValue(of key: SecItemKey) -> MatchValue? {
        matchValues[key] ?? EmulatorSchema.defaultValue(of: key.rawValue)
    }

    /// The item's identity (§2.2).
    var primaryKey: PrimaryKey {
        PrimaryKey(
            itemClass: itemClass,
            values: EmulatorSchema.primaryKey(of: itemClass).map {
                matchValue(of: SecItemKey(rawValue: $0)) ?? .text("")
            })
    }

    /// Whether the item is one the search finds: the query's attributes, AND-ed, plus securityd's implicit filters
    /// (SecItemDb.c:828–838, SecDbQuery.c:1083–1100, §2.1).
    /// - Parameter groups: the caller's access groups (the query's own `agrp` was checked against them).
    func matches(_ query: ParsedQuery, groups: EmulatorGroups) -> Bool {
        guard itemClass == query.itemClass else { return false }
        if let ref = query.persistentRef, ref.rowID != rowID || ref.itemClass != itemClass { return false }
        if query.unmatchable { return false }
        for (key, wanted) in query.criteria where matchValue(of: key) != wanted { return false }
        // `agrp IN (caller's access groups)`, or the single explicit one (§2.1, §2.8).
        if case .string(let group)? = query.attributes[.accessGroup] {
            if group != accessGroup { return false }
        } else if !groups.contains(accessGroup) {
            return false
        }
        // `sync = 0` unless the query has a `sync` key (`syna`: no filter) or a persistent reference (§2.1).
        switch query.attributes[.synchronizable] {
        case nil: if query.persistentRef == nil, synchronizable { return false }
        case .bool(let on)?: if on != synchronizable { return false }
        default: break
        }
        return true
    }
}

/// A persistent reference: the 4-byte class name and the 8-byte big-endian row number (SecItem.m:110–112,
/// 738–790, §2.11). Callers treat it as opaque data.
struct PersistentRef: Hashable, Sendable {
    let itemClass: String
    let rowID: Int64

    init(itemClass: String, rowID: Int64) {
        self.itemClass = itemClass
        self.rowID = rowID
    }

    /// Decodes a reference; nil for data that is none of the emulator's.
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count == 12, let name = String(bytes: bytes[0..<4], encoding: .utf8),
            EmulatorSchema.attributes(of: name) != nil
        else { return nil }
        itemClass = name
        rowID = bytes[4..<12].reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// The reference as `v_PersistentRef` data.
    var data: Data {
        var bytes = [UInt8](itemClass.utf8)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: rowID >> shift)) }
        return Data(bytes)
    }
}
