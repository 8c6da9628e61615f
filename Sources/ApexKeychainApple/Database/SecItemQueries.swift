import ApexKeychain
import Foundation

/// The dictionaries ``SecItemKeychainDatabase`` sends: every query of the package's iOS backend is built here, so
/// that the query-shape tests pin them in one place.
///
/// Rules every dictionary follows (seed 000, `apple-secitem.md` §1, §2):
/// - `nleg` (`kSecUseDataProtectionKeychain`) is on every query. On iOS it is a no-op (§2.1, `SecItemDb.c`
///   81–83); on Mac Catalyst it keeps iOS's keychain.
/// - A query renders only what its `ItemQuery` names: the creator mark `crtr` is there when the
///   core asks for the package's own items, never added behind its back (a write must also see another library's
///   item under the same key, to refuse it).
/// - Writes carry an explicit `sync` bool; reads, removes and listings `sync: syna` when the query names no
///   `sync`: without a `sync` key securityd adds `sync = 0` and never sees iCloud items (§2.1, `SecDbQuery.c`
///   1083–1100).
/// - Reads that must not prompt carry an `LAContext` whose `interactionNotAllowed` is true (`u_AuthCtx`), a read
///   after a prompt the evaluated one. `u_AuthUI` appears only as `u_AuthUIS` (skip) in the data listing of
///   ``SecItemKeychainDatabase/itemsWithValues(matching:)``; `u_OpPrompt` never (deprecated, §2.7).
/// - Update and delete dictionaries carry no `m_*` and no `r_*` key: on iOS either is `errSecParam` (§2.5, §2.6).
/// - An update's query carries the non-interactive context too: SecItemUpdate decrypts the old item (§2.5), so an
///   item with access control would prompt, and a write never prompts (seed 000). It answers
///   `errSecInteractionNotAllowed` instead, the answer the core takes for "stage the write".
enum SecItemQueries {
    /// The class string of `itemClass` (§1.1).
    static func classValue(_ itemClass: ItemClass) -> SecItemValue {
        .string(itemClass == .genericPassword ? SecItemConstant.genericPassword : SecItemConstant.internetPassword)
    }

    // MARK: Matching

    /// The classes a query reaches: one call per class, since every SecItem query names exactly one (§2.1).
    /// An internet password has no `svce` (an `svce` key in an `inet` query is `errSecNoSuchAttr`, §2.1), so a
    /// query for a non-empty service reaches generic passwords only.
    static func classes(of query: ItemQuery) -> [ItemClass] {
        let classes = query.itemClass.map { [$0] } ?? ItemClass.allCases
        return classes.filter { $0 == .genericPassword || (query.service ?? "").isEmpty }
    }

    /// The match of `query` in `itemClass`: its class, the fields it names, `sync` (the query's, else `syna`) and
    /// `nleg`. No match limit, return or use key: a delete sends exactly this.
    static func matching(_ query: ItemQuery, in itemClass: ItemClass) -> SecItemDictionary {
        var dictionary: SecItemDictionary = [
            .itemClass: classValue(itemClass), .useDataProtectionKeychain: .bool(true),
            .synchronizable: query.synchronizable.map(SecItemValue.bool) ?? .string(SecItemConstant.synchronizableAny),
        ]
        if itemClass == .genericPassword, let service = query.service { dictionary[.service] = .string(service) }
        if let account = query.account { dictionary[.account] = .string(account) }
        if let group = query.accessGroup { dictionary[.accessGroup] = .string(group) }
        if let creator = query.creator { dictionary[.creator] = .number(Int64(creator)) }
        return dictionary
    }

    /// The match of the one item under `key`: every field of its class's primary key (§2.2), the empty ones too
    /// (the keychain stores an absent key field as empty, so an empty one matches it), and `nleg`. The creator mark
    /// is no part of a primary key: the core found the item with a query that had it.
    static func matching(_ key: ItemAttributes.PrimaryKey) -> SecItemDictionary {
        var dictionary: SecItemDictionary = [
            .itemClass: classValue(key.itemClass), .useDataProtectionKeychain: .bool(true),
            .account: .string(key.account), .accessGroup: .string(key.accessGroup),
            .synchronizable: .bool(key.synchronizable),
        ]
        switch key.itemClass {
        case .genericPassword:
            dictionary[.service] = .string(key.service)
        case .internetPassword:
            dictionary[.server] = .string(key.server)
            dictionary[.securityDomain] = .string(key.securityDomain)
            // `ptcl` is a number column whose absent value is 0 (flag Z, §2.2): an item without a protocol (as
            // react-native-keychain's) matches 0, not an empty string.
            dictionary[.protocol] = key.protocolCode.isEmpty ? .number(0) : .string(key.protocolCode)
            dictionary[.authenticationType] = .string(key.authenticationType)
            dictionary[.port] = .number(Int64(key.port))
            dictionary[.path] = .string(key.path)
        }
        return dictionary
    }

    // MARK: Reads

    /// The attributes of every match, without a prompt: `m_LimitAll`, `r_Attributes`, the non-interactive
    /// context. Attribute-only reads don't decrypt a secret and need no authentication (§2.4).
    static func listing(_ query: ItemQuery, in itemClass: ItemClass) -> SecItemDictionary {
        var dictionary = matching(query, in: itemClass)
        dictionary[.matchLimit] = .string(SecItemConstant.matchLimitAll)
        dictionary[.returnAttributes] = .bool(true)
        dictionary[.authenticationContext] = .authenticationContext(.nonInteractive)
        return dictionary
    }

    /// The value of the item under `key`: `m_LimitOne`, `r_Data`, and `context` (the non-interactive one when
    /// the read must not prompt, so that an item that needs the user answers `errSecInteractionNotAllowed`).
    static func valueRead(_ key: ItemAttributes.PrimaryKey, _ context: SecItemAuthentication) -> SecItemDictionary {
        var dictionary = matching(key)
        dictionary[.matchLimit] = .string(SecItemConstant.matchLimitOne)
        dictionary[.returnData] = .bool(true)
        dictionary[.authenticationContext] = .authenticationContext(context)
        return dictionary
    }

    /// The attributes and value of the item under `key` in one call, with `context` (without a prompt by
    /// default).
    static func itemRead(
        _ key: ItemAttributes.PrimaryKey, _ context: SecItemAuthentication = .nonInteractive
    ) -> SecItemDictionary {
        var dictionary = valueRead(key, context)
        dictionary[.returnAttributes] = .bool(true)
        return dictionary
    }

    /// Step 1 of `apple-secitem.md` §8.2: every match's attributes and persistent reference, no prompt. The
    /// listing of protected items needs no authentication: it decrypts no secret (§8.2, `SecDbKeychainItem.m`
    /// 1019–1025).
    static func attributesListing(_ query: ItemQuery, in itemClass: ItemClass) -> SecItemDictionary {
        var dictionary = listing(query, in: itemClass)
        dictionary[.returnPersistentRef] = .bool(true)
        return dictionary
    }

    /// Step 2 of §8.2: the same listing with every value, skipping the items that need the user
    /// (`u_AuthUIS`, valid in SecItemCopyMatching only, §2.1; securityd drops the rows that would answer
    /// `errSecAuthNeeded`, `SecDbQuery.c` 694). It carries no context: skip already keeps it from prompting.
    static func dataListing(_ query: ItemQuery, in itemClass: ItemClass) -> SecItemDictionary {
        var dictionary = matching(query, in: itemClass)
        dictionary[.matchLimit] = .string(SecItemConstant.matchLimitAll)
        dictionary[.returnAttributes] = .bool(true)
        dictionary[.returnPersistentRef] = .bool(true)
        dictionary[.returnData] = .bool(true)
        dictionary[.authenticationUI] = .string(SecItemConstant.authenticationUISkip)
        return dictionary
    }

    /// §8.2's fallback when the keychain refuses a data listing: the value of one listed item by its persistent
    /// reference, skipping it if it needs the user. A persistent reference names the item, so no other attribute
    /// (and no `sync`: a reference lifts the implicit `sync = 0`, §2.1) is sent.
    static func persistentReferenceRead(_ reference: Data, in itemClass: ItemClass) -> SecItemDictionary {
        [
            .itemClass: classValue(itemClass), .useDataProtectionKeychain: .bool(true),
            .valuePersistentRef: .data(reference), .returnData: .bool(true),
            .authenticationUI: .string(SecItemConstant.authenticationUISkip),
        ]
    }

    /// The fallback's read of a listed item that came without a persistent reference: by its primary key.
    static func skippingValueRead(_ key: ItemAttributes.PrimaryKey) -> SecItemDictionary {
        var dictionary = matching(key)
        dictionary[.matchLimit] = .string(SecItemConstant.matchLimitOne)
        dictionary[.returnData] = .bool(true)
        dictionary[.authenticationUI] = .string(SecItemConstant.authenticationUISkip)
        return dictionary
    }

    // MARK: Writes

    /// The query of a SecItemUpdate of the item under `key`: its match and the non-interactive context (no
    /// prompt; see the type's notes).
    static func updating(_ key: ItemAttributes.PrimaryKey) -> SecItemDictionary {
        var dictionary = matching(key)
        dictionary[.authenticationContext] = .authenticationContext(.nonInteractive)
        return dictionary
    }

    /// The dictionary of `SecItemAdd` for `item` (§2.3): its class, attributes and value, and `nleg`.
    static func addition(_ item: KeychainItem) -> SecItemDictionary {
        var dictionary = SecItemAttributeConversion.dictionary(of: item.attributes)
        dictionary[.itemClass] = classValue(item.attributes.itemClass)
        dictionary[.useDataProtectionKeychain] = .bool(true)
        dictionary[.valueData] = .data(item.value)
        return dictionary
    }

    /// The attributes to update of a replace: every attribute of `item` and its value, no class and no `nleg`
    /// (every key but `v_Data` is parsed as an attribute there, §2.5). The keychain sets `mdat` and keeps `cdat`.
    ///
    /// SecItemUpdate can't remove an attribute, so an item replaced without a label gets the empty one: the old
    /// label (a username, maybe) does not outlive the write. The package's metadata says whether a label is one.
    /// In the same way an item replaced without a creator gets creator 0 and one without `gena` the empty data:
    /// another library's item that a migration turned into the package's, and put back when it was not verified,
    /// keeps neither the package's mark nor its metadata.
    static func replacement(_ item: KeychainItem) -> SecItemDictionary {
        var dictionary = SecItemAttributeConversion.dictionary(of: item.attributes)
        if item.attributes.label == nil { dictionary[.label] = .string("") }
        if item.attributes.creator == nil { dictionary[.creator] = .number(0) }
        if item.attributes.generic == nil { dictionary[.generic] = .data(Data()) }
        dictionary[.valueData] = .data(item.value)
        return dictionary
    }

    /// The attributes to update of a rename: the account alone.
    static func rename(toAccount account: String) -> SecItemDictionary {
        [.account: .string(account)]
    }
}
