import Foundation

/// The keychain item classes a ``KeychainDatabase`` holds.
public enum ItemClass: String, Sendable, Codable, CaseIterable {
    /// `kSecClassGenericPassword`: identified by service and account.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword`: identified by server, account, protocol, port, path and more.
    case internetPassword = "inet"
}

/// The four-character creator code of the package's own items, `'ApxK'` (0x4170784B).
public let apexCreator: UInt32 = 0x4170_784B

/// The attributes of one keychain item, as the keychain stores them: everything but the value.
///
/// None of these is secret by the keychain's own rules (they are readable without a prompt), except that a
/// username kept as a label is personal data: reports leave labels out unless asked.
///
/// Strings compare by their exact bytes, as the keychain compares them: `"caf\u{E9}"` and `"cafe\u{301}"` are
/// different services, keys and labels, although Swift's `==` calls them equal.
public struct ItemAttributes: Sendable, Equatable, Hashable {
    /// The item's class.
    public var itemClass: ItemClass
    /// `svce` (generic passwords); empty for internet passwords.
    public var service: String
    /// `acct`: the key (package items) or the account as found (others).
    public var account: String
    /// `agrp`: the access group.
    public var accessGroup: String
    /// `crtr`: the four-character creator code, if any.
    public var creator: UInt32?
    /// `labl`: the label, if any. The empty string is a label.
    public var label: String?
    /// `gena`: the generic attribute (the package keeps its metadata here).
    public var generic: Data?
    /// `pdmn`: when the item can be read.
    public var protectionDomain: ProtectionDomain
    /// `accc`: the access-control flags; empty when the item has none.
    public var accessControl: AccessControlFlags
    /// `sync`: whether the item syncs through iCloud Keychain.
    public var synchronizable: Bool
    /// `cdat`: when the item was created.
    public var createdAt: Date
    /// `mdat`: when the item was last modified.
    public var modifiedAt: Date
    /// Internet passwords: `srvr`, `sdmn`, `ptcl`, `atyp`, `port`, `path`; nil or 0 when absent.
    public var server: String?
    /// `sdmn`: the security domain of an internet password.
    public var securityDomain: String?
    /// `ptcl`: the protocol code of an internet password (`htps`, …).
    public var protocolCode: String?
    /// `atyp`: the authentication type of an internet password.
    public var authenticationType: String?
    /// `port`: the port of an internet password; 0 when absent.
    public var port: Int
    /// `path`: the path of an internet password.
    public var path: String?

    /// Creates attributes; dates default to the Unix epoch and internet-password fields to absent.
    public init(
        itemClass: ItemClass = .genericPassword, service: String, account: String, accessGroup: String,
        creator: UInt32? = nil, label: String? = nil, generic: Data? = nil,
        protectionDomain: ProtectionDomain = .ak, accessControl: AccessControlFlags = [],
        synchronizable: Bool = false, createdAt: Date = Date(timeIntervalSince1970: 0),
        modifiedAt: Date = Date(timeIntervalSince1970: 0), server: String? = nil, securityDomain: String? = nil,
        protocolCode: String? = nil, authenticationType: String? = nil, port: Int = 0, path: String? = nil
    ) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.creator = creator
        self.label = label
        self.generic = generic
        self.protectionDomain = protectionDomain
        self.accessControl = accessControl
        self.synchronizable = synchronizable
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.server = server
        self.securityDomain = securityDomain
        self.protocolCode = protocolCode
        self.authenticationType = authenticationType
        self.port = port
        self.path = path
    }

    /// Whether the item carries the package's creator mark.
    public var isApexItem: Bool { creator == apexCreator }

    /// The attributes that make an item unique, as the keychain's primary key does.
    public var primaryKey: PrimaryKey {
        PrimaryKey(
            itemClass: itemClass, service: service, account: account, accessGroup: accessGroup,
            synchronizable: synchronizable, server: server ?? "", securityDomain: securityDomain ?? "",
            protocolCode: protocolCode ?? "", authenticationType: authenticationType ?? "", port: port,
            path: path ?? "")
    }

    /// Equal when every attribute is equal, strings byte for byte.
    public static func == (a: ItemAttributes, b: ItemAttributes) -> Bool {
        a.primaryKey == b.primaryKey && a.creator == b.creator && ExactText.equal(a.label, b.label)
            && a.generic == b.generic && a.protectionDomain == b.protectionDomain
            && a.accessControl == b.accessControl && a.createdAt == b.createdAt && a.modifiedAt == b.modifiedAt
            && ExactText.equal(a.server, b.server) && ExactText.equal(a.securityDomain, b.securityDomain)
            && ExactText.equal(a.protocolCode, b.protocolCode)
            && ExactText.equal(a.authenticationType, b.authenticationType)
            && ExactText.equal(a.path, b.path)
    }

    /// Hashes the primary key, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { primaryKey.hash(into: &hasher) }

    /// The keychain's uniqueness constraint: two items with equal keys can't both exist. Strings compare byte
    /// for byte.
    public struct PrimaryKey: Sendable, Hashable {
        /// The class.
        public var itemClass: ItemClass
        /// `svce`.
        public var service: String
        /// `acct`.
        public var account: String
        /// `agrp`.
        public var accessGroup: String
        /// `sync`.
        public var synchronizable: Bool
        /// `srvr`, `sdmn`, `ptcl`, `atyp`, `port`, `path` (internet passwords; empty otherwise).
        public var server: String, securityDomain: String, protocolCode: String, authenticationType: String
        /// `port`.
        public var port: Int
        /// `path`.
        public var path: String

        /// A primary key from its fields (a migration's record of the source items it left pending).
        package init(
            itemClass: ItemClass, service: String, account: String, accessGroup: String, synchronizable: Bool,
            server: String, securityDomain: String, protocolCode: String, authenticationType: String, port: Int,
            path: String
        ) {
            self.itemClass = itemClass
            self.service = service
            self.account = account
            self.accessGroup = accessGroup
            self.synchronizable = synchronizable
            self.server = server
            self.securityDomain = securityDomain
            self.protocolCode = protocolCode
            self.authenticationType = authenticationType
            self.port = port
            self.path = path
        }

        /// Equal when every field is equal, strings byte for byte.
        public static func == (a: PrimaryKey, b: PrimaryKey) -> Bool {
            a.itemClass == b.itemClass && a.synchronizable == b.synchronizable && a.port == b.port
                && ExactText.equal(a.service, b.service) && ExactText.equal(a.account, b.account)
                && ExactText.equal(a.accessGroup, b.accessGroup) && ExactText.equal(a.server, b.server)
                && ExactText.equal(a.securityDomain, b.securityDomain)
                && ExactText.equal(a.protocolCode, b.protocolCode)
                && ExactText.equal(a.authenticationType, b.authenticationType) && ExactText.equal(a.path, b.path)
        }

        /// Hashes the fields' bytes, consistently with ``==(_:_:)``.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(itemClass)
            hasher.combine(synchronizable)
            hasher.combine(port)
            for text in [service, account, accessGroup, server, securityDomain, protocolCode, authenticationType, path]
            {
                ExactText.hash(text, into: &hasher)
            }
        }
    }
}

/// Byte-exact string comparison: the keychain compares attribute bytes, not canonical equivalence.
package enum ExactText {
    /// Whether `a` and `b` are the same UTF-8 bytes.
    package static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    /// The case of `Value` whose raw value is exactly `bytes` (UTF-8), found without making a String of them.
    @inlinable
    package static func named<Value: RawRepresentable & CaseIterable>(
        _ bytes: UnsafeRawBufferPointer, as _: Value.Type = Value.self
    ) -> Value? where Value.RawValue == String {
        for candidate in Value.allCases {
            // The length first, then one memcmp of the raw value's own UTF-8 (a literal's, read in place): going
            // through the UTF-8 view byte by byte was a tenth of every read of an item.
            var raw = candidate.rawValue
            guard raw.utf8.count == bytes.count else { continue }
            if bytes.isEmpty || raw.withUTF8({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
                return candidate
            }
        }
        return nil
    }

    /// Whether `a` and `b` are both nil, or the same UTF-8 bytes.
    package static func equal(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): equal(a, b)
        default: false
        }
    }

    /// Hashes the UTF-8 bytes of `text` (consistent with ``equal(_:_:)``).
    package static func hash(_ text: String, into hasher: inout Hasher) {
        var text = text
        hasher.combine(text.utf8.count)
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// One keychain item: its attributes and its value.
public struct KeychainItem: Sendable, Equatable {
    /// Everything but the value.
    public var attributes: ItemAttributes
    /// `v_Data`: the value.
    public var value: Data

    /// Creates an item.
    public init(attributes: ItemAttributes, value: Data) {
        self.attributes = attributes
        self.value = value
    }
}

/// Which items a database call concerns. A nil field matches any value.
public struct ItemQuery: Sendable, Equatable {
    /// The class; nil matches both.
    public var itemClass: ItemClass?
    /// `svce`.
    public var service: String?
    /// `acct`.
    public var account: String?
    /// `agrp`.
    public var accessGroup: String?
    /// `crtr`: nil matches any item, including one without a creator.
    public var creator: UInt32?
    /// `sync`: nil matches both (the keychain's `kSecAttrSynchronizableAny`).
    public var synchronizable: Bool?

    /// Creates a query; every field defaults to "any".
    public init(
        itemClass: ItemClass? = nil, service: String? = nil, account: String? = nil, accessGroup: String? = nil,
        creator: UInt32? = nil, synchronizable: Bool? = nil
    ) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.creator = creator
        self.synchronizable = synchronizable
    }

    /// Whether `attributes` match this query.
    public func matches(_ attributes: ItemAttributes) -> Bool {
        (itemClass == nil || itemClass == attributes.itemClass)
            && (service == nil || ExactText.equal(service, attributes.service))
            && (account == nil || ExactText.equal(account, attributes.account))
            && (accessGroup == nil || ExactText.equal(accessGroup, attributes.accessGroup))
            && (creator == nil || creator == attributes.creator)
            && (synchronizable == nil || synchronizable == attributes.synchronizable)
    }
}
