import ApexKeychain
import Foundation

/// `ItemAttributes` to a SecItem dictionary and back.
///
/// Reading a result (`apple-secitem.md` §2.4: blob attributes come back with the type they were stored with):
/// - `svce`, `acct`, `srvr`, `sdmn`, `atyp`, `path`: a string as it is, data as its UTF-8. Data that is not
///   UTF-8 (or a number) can't be one of these `String` fields: no query of this database could name the item, so
///   the item is left out of what the database reports (``dictionary(of:)`` could not address it either).
/// - `labl`: the same, except that a label that is not UTF-8 is reported as none (the label is no part of the
///   item's primary key, and the item is still reported).
/// - `gena`: data as it is, a string as its UTF-8.
/// - `ptcl`: a string (`htps`, …) as it is, a number (a numeric protocol the keychain stored as a number, §2.1)
///   in decimal.
/// - `crtr` and `port`: numbers; `sync`: a bool or the number 0 or 1, absent is false; `pdmn`: a
///   `ProtectionDomain` code, absent is `ak` (the keychain's default, §2.3); another code (a
///   private class such as `f`) leaves the item out, as it is none the package can describe.
/// - `cdat`, `mdat`: dates, absent is the Unix epoch.
/// - The access-control flags: the keychain gives no reader of an item's constraints (results carry no `accc`,
///   the shared decision of the iOS backend), so they come from the package's metadata (`gena`) for its own items,
///   and are unknown, reported empty, for other libraries' items.
enum SecItemAttributeConversion {
    /// The attributes of `item` as a write sends them: no class, no value, no `nleg`, no dates (the keychain sets
    /// `cdat` and `mdat` itself, §2.3 item 7, §2.5). An item with access control carries `accc` made from its
    /// protection domain and flags, and no `pdmn` (both together are `errSecParam`, §2.3 item 5); an item without
    /// carries `pdmn`. `sync` is always an explicit bool.
    static func dictionary(of attributes: ItemAttributes) -> SecItemDictionary {
        var dictionary: SecItemDictionary = [
            .account: .string(attributes.account), .accessGroup: .string(attributes.accessGroup),
            .synchronizable: .bool(attributes.synchronizable),
        ]
        if attributes.accessControl.isEmpty {
            dictionary[.accessible] = .string(attributes.protectionDomain.rawValue)
        } else {
            dictionary[.accessControl] = .accessControl(
                SecAccessControlSpec(
                    protection: attributes.protectionDomain.rawValue, flags: attributes.accessControl))
        }
        if let creator = attributes.creator { dictionary[.creator] = .number(Int64(creator)) }
        if let label = attributes.label { dictionary[.label] = .string(label) }
        if let generic = attributes.generic { dictionary[.generic] = .data(generic) }
        switch attributes.itemClass {
        case .genericPassword:
            dictionary[.service] = .string(attributes.service)
        case .internetPassword:
            let fields: [(SecItemKey, String?)] = [
                (.server, attributes.server), (.securityDomain, attributes.securityDomain),
                (.protocol, attributes.protocolCode), (.authenticationType, attributes.authenticationType),
                (.path, attributes.path),
            ]
            for (key, value) in fields { if let value { dictionary[key] = .string(value) } }
            if attributes.port != 0 { dictionary[.port] = .number(Int64(attributes.port)) }
        }
        return dictionary
    }

    /// The attributes in a result dictionary of an item of `itemClass`, or nil when the item can't be described
    /// (see the type's notes).
    static func attributes(_ dictionary: SecItemDictionary, of itemClass: ItemClass) -> ItemAttributes? {
        guard let account = text(dictionary[.account]) else { return nil }
        var service = ""
        // An absent `svce` is the empty service: the keychain stores a missing primary-key column as "" (§2.2),
        // as react-native-encrypted-storage's items, added without one, have it.
        if itemClass == .genericPassword, let value = dictionary[.service] {
            guard let found = text(value) else { return nil }
            service = found
        }
        guard let domain = protectionDomain(dictionary[.accessible]) else { return nil }
        var attributes = ItemAttributes(
            itemClass: itemClass, service: service, account: account,
            accessGroup: text(dictionary[.accessGroup]) ?? "", creator: creator(dictionary[.creator]),
            label: text(dictionary[.label]), generic: data(dictionary[.generic]), protectionDomain: domain,
            synchronizable: flag(dictionary[.synchronizable]),
            createdAt: date(dictionary[.creationDate]), modifiedAt: date(dictionary[.modificationDate]))
        if itemClass == .internetPassword {
            let fields: [(SecItemKey, WritableKeyPath<ItemAttributes, String?>)] = [
                (.server, \.server), (.securityDomain, \.securityDomain), (.authenticationType, \.authenticationType),
                (.path, \.path),
            ]
            for (key, path) in fields where dictionary[key] != nil {
                guard let value = text(dictionary[key]) else { return nil }
                attributes[keyPath: path] = value
            }
            switch dictionary[.protocol] {
            case .string(let code): attributes.protocolCode = code
            case .number(let number): attributes.protocolCode = String(number)
            case nil: break
            default: return nil
            }
            if case .number(let port) = dictionary[.port] { attributes.port = Int(clamping: port) }
        }
        if attributes.isApexItem, let metadata = ItemMetadata(attributes.generic) {
            attributes.accessControl = metadata.accessControl.flags
        }
        return attributes
    }

    /// A blob attribute as text: a string, or data that is UTF-8.
    private static func text(_ value: SecItemValue?) -> String? {
        switch value {
        case .string(let text): text
        case .data(let data): String(validUTF8: data)
        default: nil
        }
    }

    private static func data(_ value: SecItemValue?) -> Data? {
        switch value {
        case .data(let data): data
        case .string(let text): Data(text.utf8)
        default: nil
        }
    }

    private static func creator(_ value: SecItemValue?) -> UInt32? {
        guard case .number(let number) = value else { return nil }
        return UInt32(exactly: number)
    }

    /// `sync`: a bool, or the number the keychain stores it as (§2.1: `sync` Bool → number 0/1).
    private static func flag(_ value: SecItemValue?) -> Bool {
        switch value {
        case .bool(let flag): flag
        case .number(let number): number != 0
        default: false
        }
    }

    private static func date(_ value: SecItemValue?) -> Date {
        guard case .date(let date) = value else { return Date(timeIntervalSince1970: 0) }
        return date
    }

    /// `pdmn`: absent is `ak`, the keychain's default (§2.3 item 4); a code the package doesn't know is nil.
    private static func protectionDomain(_ value: SecItemValue?) -> ProtectionDomain? {
        switch value {
        case nil: .ak
        case .string(let code): ProtectionDomain.allCases.first { ExactText.equal($0.rawValue, code) }
        default: nil
        }
    }
}
