/// A key of a SecItem dictionary, spelled as the Security framework's constant is (`kSecAttrService` is `svce`).
///
/// Every value is checked against `OSX/sec/Security/SecItemConstants.c` (`apple-secitem.md` §1); the binding
/// passes the raw value as the `CFString` key, which is what the framework's constant is.
public struct SecItemKey: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The framework's string.
    public let rawValue: String
    /// A key named by the framework's string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The framework's string.
    public var description: String { rawValue }
    /// By the framework's string, so that a dictionary prints in one order.
    public static func < (a: SecItemKey, b: SecItemKey) -> Bool { a.rawValue < b.rawValue }

    // MARK: Class (§1.1)

    /// `kSecClass`.
    public static let itemClass = SecItemKey(rawValue: "class")

    // MARK: Attributes (§1.2)

    /// `kSecAttrAccessible`.
    public static let accessible = SecItemKey(rawValue: "pdmn")
    /// `kSecAttrAccessControl`.
    public static let accessControl = SecItemKey(rawValue: "accc")
    /// `kSecAttrAccessGroup`.
    public static let accessGroup = SecItemKey(rawValue: "agrp")
    /// `kSecAttrSynchronizable`.
    public static let synchronizable = SecItemKey(rawValue: "sync")
    /// `kSecAttrCreationDate`.
    public static let creationDate = SecItemKey(rawValue: "cdat")
    /// `kSecAttrModificationDate`.
    public static let modificationDate = SecItemKey(rawValue: "mdat")
    /// `kSecAttrCreator`.
    public static let creator = SecItemKey(rawValue: "crtr")
    /// `kSecAttrLabel`.
    public static let label = SecItemKey(rawValue: "labl")
    /// `kSecAttrAccount`.
    public static let account = SecItemKey(rawValue: "acct")
    /// `kSecAttrService`.
    public static let service = SecItemKey(rawValue: "svce")
    /// `kSecAttrGeneric`.
    public static let generic = SecItemKey(rawValue: "gena")
    /// `kSecAttrDescription`.
    public static let itemDescription = SecItemKey(rawValue: "desc")
    /// `kSecAttrComment`.
    public static let comment = SecItemKey(rawValue: "icmt")
    /// `kSecAttrType`.
    public static let type = SecItemKey(rawValue: "type")
    /// `kSecAttrSecurityDomain`.
    public static let securityDomain = SecItemKey(rawValue: "sdmn")
    /// `kSecAttrServer`.
    public static let server = SecItemKey(rawValue: "srvr")
    /// `kSecAttrProtocol`.
    public static let `protocol` = SecItemKey(rawValue: "ptcl")
    /// `kSecAttrAuthenticationType`.
    public static let authenticationType = SecItemKey(rawValue: "atyp")
    /// `kSecAttrPort`.
    public static let port = SecItemKey(rawValue: "port")
    /// `kSecAttrPath`.
    public static let path = SecItemKey(rawValue: "path")

    // MARK: Search, return, value and use keys (§1.4)

    /// `kSecMatchLimit`.
    public static let matchLimit = SecItemKey(rawValue: "m_Limit")
    /// `kSecReturnData`.
    public static let returnData = SecItemKey(rawValue: "r_Data")
    /// `kSecReturnAttributes`.
    public static let returnAttributes = SecItemKey(rawValue: "r_Attributes")
    /// `kSecReturnPersistentRef`.
    public static let returnPersistentRef = SecItemKey(rawValue: "r_PersistentRef")
    /// `kSecReturnRef`.
    public static let returnRef = SecItemKey(rawValue: "r_Ref")
    /// `kSecValueData`.
    public static let valueData = SecItemKey(rawValue: "v_Data")
    /// `kSecValuePersistentRef`.
    public static let valuePersistentRef = SecItemKey(rawValue: "v_PersistentRef")
    /// `kSecUseAuthenticationUI` (only its `u_AuthUIS`, skip, is not deprecated).
    public static let authenticationUI = SecItemKey(rawValue: "u_AuthUI")
    /// `kSecUseAuthenticationContext`: an `LAContext`.
    public static let authenticationContext = SecItemKey(rawValue: "u_AuthCtx")
    /// `kSecUseOperationPrompt` (deprecated; the package never sends it, the libraries do).
    public static let operationPrompt = SecItemKey(rawValue: "u_OpPrompt")
    /// `kSecUseDataProtectionKeychain`: the same string as the deprecated `kSecAttrNoLegacy`.
    public static let useDataProtectionKeychain = SecItemKey(rawValue: "nleg")
}

/// The framework's value constants (`apple-secitem.md` §1.1, §1.3, §1.4): `CFString`s like any other string value.
public enum SecItemConstant {
    /// `kSecClassGenericPassword`.
    public static let genericPassword = "genp"
    /// `kSecClassInternetPassword`.
    public static let internetPassword = "inet"
    /// `kSecAttrSynchronizableAny`.
    public static let synchronizableAny = "syna"
    /// `kSecMatchLimitOne`.
    public static let matchLimitOne = "m_LimitOne"
    /// `kSecMatchLimitAll`.
    public static let matchLimitAll = "m_LimitAll"
    /// `kSecUseAuthenticationUIAllow` (deprecated).
    public static let authenticationUIAllow = "u_AuthUIA"
    /// `kSecUseAuthenticationUIFail` (deprecated).
    public static let authenticationUIFail = "u_AuthUIF"
    /// `kSecUseAuthenticationUISkip`: only in SecItemCopyMatching, where it skips items that need the user.
    public static let authenticationUISkip = "u_AuthUIS"
}
