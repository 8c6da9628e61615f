import ApexKeychain
import Foundation

/// A SecItem dictionary: what each of the four calls takes, keyed by the framework's strings.
public typealias SecItemDictionary = [SecItemKey: SecItemValue]

/// A value of a SecItem dictionary, typed as the Core Foundation object the binding makes of it.
public enum SecItemValue: Sendable, Equatable, CustomStringConvertible {
    /// A `CFString` (a constant such as `ck`, `syna` or `m_LimitAll` too).
    case string(String)
    /// A `CFData`.
    case data(Data)
    /// A `CFNumber`.
    case number(Int64)
    /// A `CFBoolean`.
    case bool(Bool)
    /// A `CFDate`.
    case date(Date)
    /// A `SecAccessControlRef`, made with `SecAccessControlCreateWithFlags`.
    case accessControl(SecAccessControlSpec)
    /// An `LAContext`.
    case authenticationContext(SecItemAuthentication)

    /// The value as a test or an auditor reads it; a `v_Data` value shows its length only.
    public var description: String {
        switch self {
        case .string(let text): "\"\(text)\""
        case .data(let data): "<\(data.count) bytes>"
        case .number(let number): "\(number)"
        case .bool(let flag): flag ? "true" : "false"
        case .date(let date): "\(date.timeIntervalSince1970)"
        case .accessControl(let spec): "SecAccessControl(\(spec.protection), flags: \(spec.flags.rawValue))"
        case .authenticationContext(let context): "\(context)"
        }
    }
}

/// The arguments of `SecAccessControlCreateWithFlags`: the protection class and the flags.
public struct SecAccessControlSpec: Sendable, Hashable {
    /// The `kSecAttrAccessible` value (`pdmn`): `ak`, `ck`, `aku`, `cku`, `akpu`, ….
    public var protection: String
    /// The `SecAccessControlCreateFlags`.
    public var flags: AccessControlFlags

    /// Creates the arguments.
    public init(protection: String, flags: AccessControlFlags) {
        self.protection = protection
        self.flags = flags
    }
}

/// The `LAContext` a query carries as `kSecUseAuthenticationContext`.
public enum SecItemAuthentication: Sendable, Equatable, CustomStringConvertible {
    /// A fresh context whose `interactionNotAllowed` is true: the keychain can't show a prompt, and answers
    /// `errSecInteractionNotAllowed` for an item that would need one.
    case nonInteractive
    /// A context a prompt evaluated (the device's `AuthenticationContext`): the keychain takes it
    /// without a second prompt.
    case evaluated(any AuthenticationContext)

    /// Equal when both are non-interactive, or both are the same context object.
    public static func == (a: SecItemAuthentication, b: SecItemAuthentication) -> Bool {
        switch (a, b) {
        case (.nonInteractive, .nonInteractive): true
        case (.evaluated(let a), .evaluated(let b)): a === b
        default: false
        }
    }

    /// `LAContext(interactionNotAllowed)` or `LAContext(evaluated)`.
    public var description: String {
        switch self {
        case .nonInteractive: "LAContext(interactionNotAllowed)"
        case .evaluated: "LAContext(evaluated)"
        }
    }
}

/// What `SecItemCopyMatching` returns through its result pointer (`apple-secitem.md` §2.4's table).
public indirect enum SecItemResult: Sendable, Equatable {
    /// No result (a call without return keys, or a failed one).
    case none
    /// A `CFData`: the value, or a persistent reference.
    case data(Data)
    /// A `CFDictionary` of attributes (with `v_Data` when the data was asked for).
    case attributes(SecItemDictionary)
    /// A `CFArray` of results (a match limit other than one).
    case list([SecItemResult])
}
