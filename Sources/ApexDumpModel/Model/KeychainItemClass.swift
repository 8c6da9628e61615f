import ApexKeychain

/// The keychain's item classes (`kSecClass`), by their codes in a dump (`class`). Raw values are those codes.
public enum KeychainItemClass: String, Sendable, Codable, CaseIterable {
    /// A generic password (`kSecClassGenericPassword`): every library's string items.
    case genericPassword = "genp"
    /// An internet password (`kSecClassInternetPassword`): react-native-keychain's items with a server.
    case internetPassword = "inet"
    /// A certificate (`kSecClassCertificate`).
    case certificate = "cert"
    /// A cryptographic key (`kSecClassKey`).
    case key = "keys"
    /// An identity (`kSecClassIdentity`): a certificate with its private key.
    case identity = "idnt"
}

extension KeychainRecord {
    /// ``itemClass`` as one of the keychain's classes; nil for a class the keychain does not have (the code as
    /// found stays in ``itemClass``).
    public var knownClass: KeychainItemClass? { KeychainItemClass(rawValue: itemClass) }

    /// The protection class (`pdmn`, ``protection``) as the keychain's code: the class the item was found
    /// with, not what it maps to in the package (`dk` and `dku` have no `Accessible` of their own). Nil when
    /// the dump records none, or records a code the keychain does not have (the text as found stays in
    /// ``protection``). The class recorded inside the item's access control is
    /// ``AccessControlDescription/protectionDomain``: when the two differ, each importer says which it keeps.
    public var protectionDomain: ProtectionDomain? { protection.flatMap(ProtectionDomain.init(rawValue:)) }
}

extension AccessControlDescription {
    /// The protection class recorded inside the access control (``protection``) as the keychain's code; nil
    /// when there is none, or it is not a code the keychain has (the text stays in ``protection``).
    public var protectionDomain: ProtectionDomain? { protection.flatMap(ProtectionDomain.init(rawValue:)) }
}
