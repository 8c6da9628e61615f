import Foundation

/// What the app's process can ask of iOS for ``LocalAuthenticationDevice``: LocalAuthentication's contexts, the
/// Info.plist, the entitlements, the data-protection state, the clocks and `UserDefaults`.
///
/// The binding implements it with `LAContext`, `Bundle.main`, `UserDefaults.standard`, `ProcessInfo` and
/// `UIApplication`; tests script it. Every member is a plain reading or call: the device makes the decisions.
public protocol LocalAuthenticationPlatform: Sendable {
    /// A new `LAContext`.
    func makeContext() -> any LocalAuthenticationPlatformContext
    /// `Bundle.main.object(forInfoDictionaryKey:)`, typed; nil when the key is absent.
    func infoPlistValue(forKey key: String) -> InfoPlistValue?
    /// `Bundle.main.bundleIdentifier`.
    var bundleIdentifier: String? { get }
    /// The app's access groups in the keychain's order: its `keychain-access-groups`, then its application
    /// identifier, then its app groups. The first is the default group of an add (`apple-secitem.md` §2.8).
    var accessGroups: [String] { get }
    /// `UIApplication.isProtectedDataAvailable`: false while the device is locked (and before its first unlock).
    var isProtectedDataAvailable: Bool { get }
    /// `ProcessInfo.operatingSystemVersion.majorVersion`.
    var iOSMajorVersion: Int { get }
    /// The wall clock (`Date()`).
    var now: Date { get }
    /// A clock that only moves forward (`ProcessInfo.systemUptime`).
    var uptime: TimeInterval { get }
    /// How many times the app has gone to the background in this process
    /// (`UIApplication.didEnterBackgroundNotification`).
    var backgroundTransitions: Int { get }
    /// Keeps `action` and calls it at each `UIApplication.didEnterBackgroundNotification`, once
    /// ``backgroundTransitions`` counts it.
    func whenEnteringBackground(_ action: @escaping @Sendable () -> Void)
    /// `UserDefaults.standard.bool(forKey:)`.
    func userDefaultsBool(forKey key: String) -> Bool
    /// `UserDefaults.standard.set(_:forKey:)`.
    func setUserDefaultsBool(_ value: Bool, forKey key: String)
}

/// One `LAContext`: the calls ``LocalAuthenticationDevice`` makes of it.
public protocol LocalAuthenticationPlatformContext: AnyObject, Sendable {
    /// `canEvaluatePolicy(_:error:)`.
    /// - Throws: the `LAError` code that `error` was set to.
    func canEvaluate(_ policy: LocalAuthenticationPolicy) throws(LocalAuthenticationError)
    /// Shows the prompt: `evaluateAccessControl(_:operation: .useItem, localizedReason:)` for an access control,
    /// `evaluatePolicy(_:localizedReason:)` for a policy, after setting `localizedReason`, `localizedCancelTitle` and
    /// `localizedFallbackTitle` from `text`.
    /// - Throws: the `LAError` code the evaluation failed with.
    func evaluate(
        _ target: LocalAuthenticationTarget, _ text: LocalAuthenticationPromptText
    ) async throws(LocalAuthenticationError)
    /// `biometryType` (set by `canEvaluatePolicy(_:error:)`, whatever it answers).
    var biometryType: LocalAuthenticationBiometryType { get }
    /// `evaluatedPolicyDomainState` (iOS 9 to 18): non-nil once a biometric policy could be evaluated.
    var evaluatedPolicyDomainState: Data? { get }
    /// `domainState.biometry.stateHash` on iOS 18 and newer (nil when nothing is enrolled); nil before iOS 18.
    var biometryStateHash: Data? { get }
}

/// An `LAPolicy`, by its raw value (`LAPublicDefines.h`: `kLAPolicyDeviceOwnerAuthenticationWithBiometrics` 1,
/// `kLAPolicyDeviceOwnerAuthentication` 2; developer.apple.com/documentation/localauthentication/lapolicy).
public struct LocalAuthenticationPolicy: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `LAPolicy` raw value.
    public let rawValue: Int
    /// A policy by raw value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `LAPolicy.deviceOwnerAuthenticationWithBiometrics`: biometrics only.
    public static let deviceOwnerAuthenticationWithBiometrics = LocalAuthenticationPolicy(rawValue: 1)
    /// `LAPolicy.deviceOwnerAuthentication`: biometrics or the device passcode.
    public static let deviceOwnerAuthentication = LocalAuthenticationPolicy(rawValue: 2)

    /// The policy's name.
    public var description: String {
        switch self {
        case .deviceOwnerAuthenticationWithBiometrics: "deviceOwnerAuthenticationWithBiometrics"
        case .deviceOwnerAuthentication: "deviceOwnerAuthentication"
        default: "LAPolicy(\(rawValue))"
        }
    }
}

/// An `LAError` code (`LAError.h`; developer.apple.com/documentation/localauthentication/laerror-swift.struct/code).
public struct LocalAuthenticationError: Error, RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `LAError.Code` raw value.
    public let rawValue: Int
    /// An error by code.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `LAErrorAuthenticationFailed`: the user failed to give valid credentials.
    public static let authenticationFailed = LocalAuthenticationError(rawValue: -1)
    /// `LAErrorUserCancel`: the user tapped the cancel button.
    public static let userCancel = LocalAuthenticationError(rawValue: -2)
    /// `LAErrorUserFallback`: the user tapped the fallback button.
    public static let userFallback = LocalAuthenticationError(rawValue: -3)
    /// `LAErrorSystemCancel`: the system canceled (another app came to the foreground).
    public static let systemCancel = LocalAuthenticationError(rawValue: -4)
    /// `LAErrorPasscodeNotSet`: no passcode is set.
    public static let passcodeNotSet = LocalAuthenticationError(rawValue: -5)
    /// `LAErrorBiometryNotAvailable`: no sensor, or the app may not use it.
    public static let biometryNotAvailable = LocalAuthenticationError(rawValue: -6)
    /// `LAErrorBiometryNotEnrolled`: nothing is enrolled.
    public static let biometryNotEnrolled = LocalAuthenticationError(rawValue: -7)
    /// `LAErrorBiometryLockout`: too many failed attempts.
    public static let biometryLockout = LocalAuthenticationError(rawValue: -8)
    /// `LAErrorAppCancel`: the app canceled.
    public static let appCancel = LocalAuthenticationError(rawValue: -9)
    /// `LAErrorInvalidContext`: the context was invalidated.
    public static let invalidContext = LocalAuthenticationError(rawValue: -10)
    /// `LAErrorNotInteractive`: the context may not show a prompt (`interactionNotAllowed`).
    public static let notInteractive = LocalAuthenticationError(rawValue: -1004)

    /// `LAError <code>`.
    public var description: String { "LAError \(rawValue)" }
}

/// `LABiometryType`.
public enum LocalAuthenticationBiometryType: Sendable, Equatable {
    /// `.none`: no sensor.
    case none
    /// `.touchID`.
    case touchID
    /// `.faceID`.
    case faceID
    /// `.opticID`.
    case opticID
}

/// What a prompt evaluates.
public enum LocalAuthenticationTarget: Sendable, Equatable {
    /// The item's own access control (`evaluateAccessControl` for `.useItem`).
    case accessControl(SecAccessControlSpec)
    /// A policy (`evaluatePolicy`), when the item's access control isn't known.
    case policy(LocalAuthenticationPolicy)
}

/// The text of one prompt, as `LAContext` takes it.
public struct LocalAuthenticationPromptText: Sendable, Equatable {
    /// `localizedReason` (never empty: `LAContext` refuses an empty reason).
    public var localizedReason: String
    /// `localizedCancelTitle`; nil keeps the system's.
    public var localizedCancelTitle: String?
    /// `localizedFallbackTitle`; nil keeps the system's, `""` hides the button.
    public var localizedFallbackTitle: String?

    /// Creates the text.
    public init(localizedReason: String, localizedCancelTitle: String?, localizedFallbackTitle: String?) {
        self.localizedReason = localizedReason
        self.localizedCancelTitle = localizedCancelTitle
        self.localizedFallbackTitle = localizedFallbackTitle
    }
}

/// A value of the app's Info.plist, typed as the property list holds it.
public enum InfoPlistValue: Sendable, Equatable {
    /// A `<string>`.
    case string(String)
    /// A `<true/>` or `<false/>`.
    case bool(Bool)
    /// Anything else (a number, an array, a dictionary, data, a date).
    case other
}
