/// An `OSStatus` of the Security framework (`apple-secitem.md` §1.5, from `base/SecBase.h`).
public struct SecItemStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `OSStatus` number.
    public let rawValue: Int32
    /// A status by number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `errSecSuccess`.
    public static let success = SecItemStatus(rawValue: 0)
    /// `errSecUnimplemented`.
    public static let unimplemented = SecItemStatus(rawValue: -4)
    /// `errSecIO`.
    public static let io = SecItemStatus(rawValue: -36)
    /// `errSecParam`: every private item-query error is this number too.
    public static let param = SecItemStatus(rawValue: -50)
    /// `errSecAllocate`.
    public static let allocate = SecItemStatus(rawValue: -108)
    /// `errSecUserCanceled`.
    public static let userCanceled = SecItemStatus(rawValue: -128)
    /// `errSecBadReq`.
    public static let badReq = SecItemStatus(rawValue: -909)
    /// `errSecInternalComponent`.
    public static let internalComponent = SecItemStatus(rawValue: -2070)
    /// `errSecNotAvailable`.
    public static let notAvailable = SecItemStatus(rawValue: -25291)
    /// `errSecReadOnly`.
    public static let readOnly = SecItemStatus(rawValue: -25292)
    /// `errSecAuthFailed`.
    public static let authFailed = SecItemStatus(rawValue: -25293)
    /// `errSecNoSuchKeychain`.
    public static let noSuchKeychain = SecItemStatus(rawValue: -25294)
    /// `errSecDuplicateItem`.
    public static let duplicateItem = SecItemStatus(rawValue: -25299)
    /// `errSecItemNotFound`.
    public static let itemNotFound = SecItemStatus(rawValue: -25300)
    /// `errSecNoSuchAttr`.
    public static let noSuchAttr = SecItemStatus(rawValue: -25303)
    /// `errSecInvalidItemRef`.
    public static let invalidItemRef = SecItemStatus(rawValue: -25304)
    /// `errSecNoSuchClass`.
    public static let noSuchClass = SecItemStatus(rawValue: -25306)
    /// `errSecInteractionNotAllowed`.
    public static let interactionNotAllowed = SecItemStatus(rawValue: -25308)
    /// `errSecReadOnlyAttr`.
    public static let readOnlyAttr = SecItemStatus(rawValue: -25309)
    /// `errSecInteractionRequired`.
    public static let interactionRequired = SecItemStatus(rawValue: -25315)
    /// `errSecDataNotAvailable`.
    public static let dataNotAvailable = SecItemStatus(rawValue: -25316)
    /// `errSecDecode`.
    public static let decode = SecItemStatus(rawValue: -26275)
    /// `errSecInternal` (private).
    public static let `internal` = SecItemStatus(rawValue: -26276)
    /// `errSecMissingEntitlement`.
    public static let missingEntitlement = SecItemStatus(rawValue: -34018)
    /// `errSecRestrictedAPI`.
    public static let restrictedAPI = SecItemStatus(rawValue: -34020)

    /// The number.
    public var description: String { "OSStatus \(rawValue)" }
}

/// The four SecItem calls over typed dictionaries: the binding makes them with the Security framework's
/// `SecItemAdd`, `SecItemCopyMatching`, `SecItemUpdate` and `SecItemDelete`; ``SecItemEmulator`` follows their
/// documented semantics here. Each call is one round trip to the keychain.
public protocol SecItemCalls: Sendable {
    /// `SecItemAdd(attributes, NULL)`.
    func add(_ attributes: SecItemDictionary) -> SecItemStatus
    /// `SecItemCopyMatching(query, &result)`.
    func copyMatching(_ query: SecItemDictionary) -> (status: SecItemStatus, result: SecItemResult)
    /// `SecItemUpdate(query, attributesToUpdate)`.
    func update(_ query: SecItemDictionary, _ attributesToUpdate: SecItemDictionary) -> SecItemStatus
    /// `SecItemDelete(query)`.
    func delete(_ query: SecItemDictionary) -> SecItemStatus
}
