import ApexKeychain
import Foundation

/// A status the emulator answers a call with, thrown from the steps of the call.
struct EmulatorFailure: Error, Equatable {
    /// The call's status.
    let status: SecItemStatus
    init(_ status: SecItemStatus) { self.status = status }
}

/// Which of the four calls a dictionary is parsed for: some keys are valid in one call only.
enum EmulatorOperation: Sendable {
    case add, copyMatching, update, delete
}

/// How an attribute's value is coerced and compared (`apple-secitem.md` §2.1, SecDbItem.c:60–160).
enum AttributeKind: Sendable {
    /// Blob attributes keep the String, Data or Number they were given; they match on their UTF-8 bytes.
    case blob
    /// Number attributes take Numbers, Booleans (0/1) and numeric Strings; other Strings stay Strings.
    case number
    /// `cdat`, `mdat`.
    case date
    /// `pdmn`: one of the protection classes (§1.3).
    case accessible
    /// `agrp`: a String.
    case accessGroup
    /// `sync`: a Boolean (0/1), or `syna` in a search.
    case synchronizable
    /// `accc`: a `SecAccessControlRef`.
    case accessControl
}

/// The attribute schema of the two password classes (`apple-secitem.md` §2.1–§2.2, SecItemSchema.c
/// `v12_genp_class` l.860 and `v12_10_inet_class` l.400): the 4-character keys each class knows.
enum EmulatorSchema {
    /// Attributes both classes have.
    private static let common: [String: AttributeKind] = [
        "cdat": .date, "mdat": .date, "desc": .blob, "icmt": .blob, "crtr": .number, "type": .number,
        "scrp": .number, "labl": .blob, "alis": .blob, "invi": .number, "nega": .number, "cusi": .number,
        "prot": .blob, "acct": .blob, "agrp": .accessGroup, "pdmn": .accessible, "accc": .accessControl,
        "sync": .synchronizable, "vwht": .blob, "tkid": .blob, "ggrp": .blob,
    ]
    /// `genp` adds `svce` and `gena`.
    private static let genericPassword = common.merging(["svce": .blob, "gena": .blob]) { a, _ in a }
    /// `inet` adds the server's attributes.
    private static let internetPassword = common.merging([
        "sdmn": .blob, "srvr": .blob, "ptcl": .number, "atyp": .blob, "port": .number, "path": .blob,
    ]) { a, _ in a }

    /// The schema of a class, or nil when the emulator doesn't model it.
    static func attributes(of itemClass: String) -> [String: AttributeKind]? {
        switch itemClass {
        case SecItemConstant.genericPassword: genericPassword
        case SecItemConstant.internetPassword: internetPassword
        default: nil
        }
    }

    /// The classes Apple knows that the emulator does not model (§1.1): certificates, keys, identities.
    static let unmodelledClasses: Set<String> = ["cert", "keys", "idnt", "apls"]

    /// The protection classes a `pdmn` may name (§1.3; SecAccessControl.m:301–311).
    static let protectionClasses: Set<String> = ["ak", "ck", "dk", "aku", "cku", "dku", "akpu"]

    /// The `kSecMatch*` keys other than `m_Limit` (§1.4): accepted by the parser, not modelled by the search.
    static let otherMatchKeys: Set<String> = [
        "m_CaseInsensitive", "m_HostOrSubdomainOfHost", "m_Policy", "m_ItemList", "m_SearchList", "m_Issuers",
        "m_EmailAddressIfPresent", "m_SubjectContains", "m_TrustedOnly", "m_ValidOnDate",
    ]

    /// The most keys one dictionary may have: "Past query key limit" (§2.1).
    static let keyLimit = 128
}

/// A call's dictionary as securityd and the client layer parse it (`apple-secitem.md` §2.1).
struct ParsedQuery: Sendable {
    /// The item class (`class`, or the persistent reference's).
    var itemClass: String
    /// The coerced 4-character attributes, `nleg` left out.
    var attributes: SecItemDictionary = [:]
    /// `m_Limit`: nil when absent; `Int64.max` for `m_LimitAll`.
    var matchLimit: Int64?
    /// How many `kSecMatch*` keys other than `m_Limit` the dictionary has.
    var otherMatchKeys = 0
    /// `r_Data`, `r_Attributes`, `r_Ref`, `r_PersistentRef` (true ones only).
    var returnData = false
    var returnAttributes = false
    var returnRef = false
    var returnPersistentRef = false
    /// `v_Data`.
    var valueData: Data?
    /// `v_PersistentRef`, decoded.
    var persistentRef: PersistentRef?
    /// `u_AuthUI` (`u_NoAuthUI = true` reads as `u_AuthUIF`).
    var authenticationUI: String?
    /// `u_AuthCtx`.
    var context: SecItemAuthentication?
    /// The attributes a row must have, as securityd compares them: computed once per call, not per row.
    var criteria: [(key: SecItemKey, value: MatchValue)] = []
    /// Whether an attribute of the query can't be compared, so that no row matches it.
    var unmatchable = false

    /// Whether any return key asks for something.
    var returnsAnything: Bool { returnData || returnAttributes || returnRef || returnPersistentRef }
    /// Whether a match key (`m_Limit` included) is there: securityd counts `m_Limit` as a match pair
    /// (SecDbQuery.c:469–475, §2.6).
    var hasMatchKey: Bool { matchLimit != nil || otherMatchKeys > 0 }
    /// Whether reading the rows decrypts their secrets: only `r_Data` and `r_Ref` do (SecDbKeychainItem.m:1019–1022,
    /// §2.4).
    var decryptsData: Bool { returnData || returnRef }

    /// Parses a dictionary of one of the calls.
    /// - Throws: the status securityd or the client layer answers with.
    static func parse(
        _ dictionary: SecItemDictionary, for operation: EmulatorOperation
    ) throws(EmulatorFailure)
        -> ParsedQuery
    {
        // §2.1: "Past query key limit".
        if dictionary.count > EmulatorSchema.keyLimit { throw EmulatorFailure(.param) }
        let persistentRef: PersistentRef?
        if let value = dictionary[.valuePersistentRef] {
            // §2.3 item 9: no persistent reference in an add.
            guard operation != .add, case .data(let data) = value, let ref = PersistentRef(data) else {
                throw EmulatorFailure(.param)
            }
            persistentRef = ref
        } else {
            persistentRef = nil
        }
        let itemClass = try Self.itemClass(dictionary[.itemClass], persistentRef: persistentRef)
        guard let schema = EmulatorSchema.attributes(of: itemClass) else { throw EmulatorFailure(.unimplemented) }
        var query = ParsedQuery(itemClass: itemClass, persistentRef: persistentRef)
        // Sorted, so that a dictionary with two faults answers the same one every time.
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            try query.apply(key.rawValue, value, schema: schema, operation: operation)
        }
        try query.checkClientRules(for: operation)
        query.criteria = query.attributes.compactMap { key, value in
            // `accc` is no match criterion (SecDbQuery.c:356–366, §2.1); `agrp` and `sync` are filtered apart.
            if key == .accessControl || key == .accessGroup || key == .synchronizable { return nil }
            guard let kind = schema[key.rawValue], let wanted = MatchValue(value, kind: kind) else {
                query.unmatchable = true
                return nil
            }
            return (key, wanted)
        }
        // The most selective first (the account, then the service or server), so that most rows fail at once.
        let order: [SecItemKey: Int] = [.account: 0, .service: 1, .server: 1]
        query.criteria.sort { order[$0.key, default: 2] < order[$1.key, default: 2] }
        return query
    }

    /// `class`: missing → errSecParam unless a persistent reference names it; unknown → errSecNoSuchClass
    /// (SecDbQuery.c:585–605, §2.1).
    private static func itemClass(
        _ value: SecItemValue?, persistentRef: PersistentRef?
    ) throws(EmulatorFailure)
        -> String
    {
        guard let value else {
            if let persistentRef { return persistentRef.itemClass }
            throw EmulatorFailure(.param)
        }
        guard case .string(let name) = value else { throw EmulatorFailure(.param) }
        if EmulatorSchema.attributes(of: name) != nil { return name }
        // Apple knows these classes; the emulator models the two password classes only.
        if EmulatorSchema.unmodelledClasses.contains(name) { throw EmulatorFailure(.unimplemented) }
        throw EmulatorFailure(.noSuchClass)
    }

    /// One key, dispatched as `query_applier` does (SecDbQuery.c l.854, §2.1): 4 characters → an attribute; else by
    /// the first character.
    private mutating func apply(
        _ key: String, _ value: SecItemValue, schema: [String: AttributeKind], operation: EmulatorOperation
    ) throws(EmulatorFailure) {
        if key.count == 4 {
            // `nleg` (kSecUseDataProtectionKeychain) is ignored without an error (SecItemDb.c:81–83); `musr` is the
            // current user's view, which securityd sets itself (§2.1).
            if key == SecItemKey.useDataProtectionKeychain.rawValue || key == "musr" { return }
            // An attribute the class doesn't have → errSecNoSuchAttr (SecItemDb.c:64 `SecDbAttrWithKey`).
            guard let kind = schema[key] else { throw EmulatorFailure(.noSuchAttr) }
            attributes[SecItemKey(rawValue: key)] = try Self.coerce(value, as: kind, search: operation != .add)
            return
        }
        switch key.first {
        case "c":
            guard key == SecItemKey.itemClass.rawValue else { throw EmulatorFailure(.param) }
        case "m": try applyMatch(key, value)
        case "r": try applyReturn(key, value)
        case "u": try applyUse(key, value)
        case "v":
            switch key {
            // kSecValueData must be CFData (`query_set_data`, §2.1).
            case SecItemKey.valueData.rawValue:
                guard case .data(let data) = value else { throw EmulatorFailure(.param) }
                valueData = data
            case SecItemKey.valuePersistentRef.rawValue: break  // decoded before the class
            // `v_Ref` names a SecKeychainItemRef, which password classes don't have on iOS (§2.4's table).
            default: throw EmulatorFailure(.param)
            }
        // `f…` keys are ignored (§2.1).
        case "f": break
        default: throw EmulatorFailure(.param)
        }
    }

    /// `m_Limit` must be a CFNumber, `m_LimitOne` or `m_LimitAll` (SecDbQuery.c l.476–487, §2.1).
    private mutating func applyMatch(_ key: String, _ value: SecItemValue) throws(EmulatorFailure) {
        if key == SecItemKey.matchLimit.rawValue {
            switch value {
            case .string(SecItemConstant.matchLimitOne): matchLimit = 1
            case .string(SecItemConstant.matchLimitAll): matchLimit = .max
            // A count below one finds nothing to return: the emulator refuses it rather than guess.
            case .number(let count) where count >= 1: matchLimit = count
            default: throw EmulatorFailure(.param)
            }
        } else if EmulatorSchema.otherMatchKeys.contains(key) {
            otherMatchKeys += 1
        } else {
            throw EmulatorFailure(.param)
        }
    }

    /// Return keys must be CFBoolean (SecDbQuery.c l.627, §2.1).
    private mutating func applyReturn(_ key: String, _ value: SecItemValue) throws(EmulatorFailure) {
        guard case .bool(let on) = value else { throw EmulatorFailure(.param) }
        switch key {
        case SecItemKey.returnData.rawValue: returnData = on
        case SecItemKey.returnAttributes.rawValue: returnAttributes = on
        case SecItemKey.returnRef.rawValue: returnRef = on
        case SecItemKey.returnPersistentRef.rawValue: returnPersistentRef = on
        default: throw EmulatorFailure(.param)
        }
    }

    /// The `u_…` keys the client layer consumes (SecItem.m:1578–1644, 1646–1733, §2.1); any other → errSecParam
    /// ("add_use: unknown key").
    private mutating func applyUse(_ key: String, _ value: SecItemValue) throws(EmulatorFailure) {
        switch (key, value) {
        case (SecItemKey.authenticationUI.rawValue, .string(let ui)):
            let known = [
                SecItemConstant.authenticationUIAllow, SecItemConstant.authenticationUIFail,
                SecItemConstant.authenticationUISkip,
            ]
            guard known.contains(ui) else { throw EmulatorFailure(.param) }
            authenticationUI = ui
        // `u_NoAuthUI = true` is treated as `u_AuthUIF` (§2.1).
        case ("u_NoAuthUI", .bool(let on)):
            if on { authenticationUI = SecItemConstant.authenticationUIFail }
        case (SecItemKey.authenticationContext.rawValue, .authenticationContext(let context)):
            self.context = context
        // Moved out of the query into the authentication parameters (§2.1).
        case (SecItemKey.operationPrompt.rawValue, .string), ("u_CallerName", .string): break
        default: throw EmulatorFailure(.param)
        }
    }

    /// The client layer's own refusals (SecItem.m, §2.1).
    private func checkClientRules(for operation: EmulatorOperation) throws(EmulatorFailure) {
        // `u_AuthUIS` anywhere but SecItemCopyMatching → errSecParam (SecItem.m:1677–1682; secd-81-item-acl.m:474–489).
        if authenticationUI == SecItemConstant.authenticationUISkip, operation != .copyMatching {
            throw EmulatorFailure(.param)
        }
        try Self.checkProtection(attributes, checksSync: operation == .add)
    }

    /// `pdmn` and `accc` together → errSecParam in any dictionary (SecDbQuery.c:256–274, §2.3 item 5); on a write,
    /// `accc` with constraints and `sync = true` → errSecParam ("item with kSecAttrAccessControl is not
    /// synchronizable", SecItem.m:1656–1661).
    static func checkProtection(_ attributes: SecItemDictionary, checksSync: Bool) throws(EmulatorFailure) {
        if attributes[.accessible] != nil, attributes[.accessControl] != nil { throw EmulatorFailure(.param) }
        if checksSync, case .accessControl(let spec)? = attributes[.accessControl], spec.hasConstraints,
            attributes[.synchronizable] == .bool(true)
        {
            throw EmulatorFailure(.param)
        }
    }

    /// Coerces a value as securityd does (SecDbItem.c:60–160, §2.1); a value of the wrong type → errSecParam.
    /// - Parameter search: whether the dictionary searches (`sync = syna` is valid there, §2.11).
    static func coerce(
        _ value: SecItemValue, as kind: AttributeKind, search: Bool
    ) throws(EmulatorFailure)
        -> SecItemValue
    {
        switch (kind, value) {
        case (.blob, .string), (.blob, .data), (.blob, .number): return value
        case (.number, .number): return value
        case (.number, .bool(let on)): return .number(on ? 1 : 0)
        // A numeric string becomes a number; any other string stays a string (`ptcl = "htps"`).
        case (.number, .string(let text)): return Int64(text).map(SecItemValue.number) ?? value
        case (.date, .date): return value
        // An unknown protection class → errSecParam (SecAccessControl.m:301–311, §2.3 item 6).
        case (.accessible, .string(let name)) where EmulatorSchema.protectionClasses.contains(name): return value
        case (.accessGroup, .string): return value
        // `sync`: Bool → 0/1; `syna` in CopyMatching, Update and Delete, skipped in Add (§2.11).
        case (.synchronizable, .bool): return value
        case (.synchronizable, .number(let number)) where number == 0 || number == 1: return .bool(number == 1)
        case (.synchronizable, .string(SecItemConstant.synchronizableAny)): return value
        // `accc` must be a SecAccessControlRef (SecItem.m:1409–1424), one SecAccessControlCreateWithFlags accepts.
        case (.accessControl, .accessControl(let spec)) where spec.isValid: return value
        default: throw EmulatorFailure(.param)
        }
    }

    /// Parses SecItemUpdate's `attributesToUpdate` (SecDbQuery.c `query_update_applier` l.819–852, §2.5).
    /// - Returns: the coerced attributes and the new `v_Data`, if any.
    static func parseUpdate(
        _ dictionary: SecItemDictionary, itemClass: String
    ) throws(EmulatorFailure)
        -> (attributes: SecItemDictionary, data: Data?)
    {
        if dictionary.count > EmulatorSchema.keyLimit { throw EmulatorFailure(.param) }
        let schema = EmulatorSchema.attributes(of: itemClass) ?? [:]
        var attributes: SecItemDictionary = [:]
        var data: Data?
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            switch key.rawValue {
            case SecItemKey.valueData.rawValue:
                guard case .data(let bytes) = value else { throw EmulatorFailure(.param) }
                data = bytes
            // `nleg` and `musr` are ignored; `ggrp` → errSecParam (§2.5).
            case SecItemKey.useDataProtectionKeychain.rawValue, "musr": continue
            case "ggrp": throw EmulatorFailure(.param)
            // `mdat` is forced to now and `cdat` kept (§2.5): a given date changes neither.
            case SecItemKey.creationDate.rawValue, SecItemKey.modificationDate.rawValue:
                _ = try coerce(value, as: .date, search: false)
            default:
                // Every other key is parsed as an attribute: class, r_*, m_*, u_* keys and attributes the class
                // doesn't have → errSecNoSuchAttr (§2.5).
                guard key.rawValue.count == 4, let kind = schema[key.rawValue] else {
                    throw EmulatorFailure(.noSuchAttr)
                }
                let coerced = try coerce(value, as: kind, search: false)
                // `syna` names no value to store: skipped, as in an add (§2.11).
                if coerced == .string(SecItemConstant.synchronizableAny) { continue }
                attributes[key] = coerced
            }
        }
        try checkProtection(attributes, checksSync: true)
        return (attributes, data)
    }
}

extension SecAccessControlSpec {
    /// The flags that ask for the user: userPresence, biometryAny, biometryCurrentSet, devicePasscode, watch /
    /// companion (`apple-secitem.md` §3.1). `.or`, `.and`, `.applicationPassword` and `.privateKeyUsage` are not.
    private static let constraints: AccessControlFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .watch,
    ]

    /// Whether reading the item's data needs an authentication (§2.7: the constraints apply to `od`, decrypt).
    var hasConstraints: Bool { !flags.intersection(Self.constraints).isEmpty }

    /// What SecAccessControlCreateWithFlags accepts (SecAccessControl.m:161–182, §2.11): a known protection; not
    /// Or with And; not BiometryAny with BiometryCurrentSet; UserPresence alone but for ApplicationPassword and
    /// PrivateKeyUsage.
    var isValid: Bool {
        guard EmulatorSchema.protectionClasses.contains(protection) else { return false }
        if flags.contains(.or) && flags.contains(.and) { return false }
        if flags.contains(.biometryAny) && flags.contains(.biometryCurrentSet) { return false }
        if flags.contains(.userPresence),
            !flags.subtracting([.userPresence, .applicationPassword, .privateKeyUsage]).isEmpty
        {
            return false
        }
        return true
    }
}
