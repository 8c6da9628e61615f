/// The codes a keychain call can fail with. Raw values are the TypeScript API's strings.
public enum KeychainErrorCode: String, Sendable, Codable, CaseIterable {
    /// A key, service, value or option is not valid, or the key is held by another library's item.
    case INVALID_ARGUMENT
    /// The user dismissed the prompt.
    case USER_CANCELED
    /// The user chose the fallback button of a biometry-only prompt.
    case USER_FALLBACK
    /// The item's key is gone (biometrics changed, passcode removed); the item has been removed.
    case KEY_INVALIDATED
    /// The device is locked, or not unlocked since it started, and the item's class needs it unlocked.
    case INTERACTION_NOT_ALLOWED
    /// The device has a biometric sensor but nothing enrolled.
    case BIOMETRY_NOT_ENROLLED
    /// The device has no biometric sensor.
    case BIOMETRY_NOT_AVAILABLE
    /// Biometrics are locked out after too many failed attempts.
    case BIOMETRY_LOCKOUT
    /// The device has no passcode and the protection asked for needs one.
    case PASSCODE_NOT_SET
    /// The user failed to authenticate.
    case AUTHENTICATION_FAILED
    /// The platform version can't give the protection asked for.
    case UNSUPPORTED
    /// iOS Face ID without `NSFaceIDUsageDescription` in the app's Info.plist.
    case MISSING_USAGE_DESCRIPTION
    /// The app lacks the entitlement for the access group.
    case MISSING_ENTITLEMENT
    /// The hardware asked for (StrongBox) is missing.
    case HARDWARE_UNAVAILABLE
    /// Anything else: a database fault, a damaged item.
    case INTERNAL
}

/// The one error every keychain call throws: a stable code and a message for people.
///
/// Messages name keys, services and options, never a value, a password or a username.
public struct KeychainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for programs.
    public let code: KeychainErrorCode
    /// What went wrong, for people. Never contains a secret.
    public let message: String

    /// Creates an error with a code and a message (which must not contain a secret).
    public init(_ code: KeychainErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `CODE: message`.
    public var description: String { "\(code.rawValue): \(message)" }

    static func invalid(_ message: String) -> KeychainError { KeychainError(.INVALID_ARGUMENT, message) }
}
