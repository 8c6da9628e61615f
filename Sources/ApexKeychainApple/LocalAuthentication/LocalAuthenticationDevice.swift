import ApexKeychain
import Foundation

/// The device an iOS app runs on: LocalAuthentication's answers and prompts, the app's Info.plist, entitlements
/// and data-protection state, as the core's `Device`.
///
/// Every decision is here, in platform-neutral Swift; a ``LocalAuthenticationPlatform`` only reads and calls.
/// - **State.** Each ``state()`` asks a new `LAContext`: `canEvaluatePolicy` for biometrics gives the sensor, the
///   enrolment and the lockout, for `deviceOwnerAuthentication` whether a passcode is set (it fails with
///   `LAErrorPasscodeNotSet` without one); the domain state is `domainState.biometry.stateHash` on iOS 18 and
///   newer, `evaluatedPolicyDomainState` before.
/// - **Prompts.** Each ``evaluate(_:)`` is one prompt on a new `LAContext`, with the `Prompt`'s title, cancel and
///   fallback texts. It evaluates the item's own access control (`evaluateAccessControl`), and a prompt that
///   passed hands that context back for the read, which takes it as `kSecUseAuthenticationContext`: the
///   keychain then needs no second prompt (`apple-secitem.md` §2.7, §3.2).
/// - **The install marker** lives in `UserDefaults`, which read empty before the device's first unlock.
///
/// On a phone, at launch on the main actor, with the binding's platform (Apple platforms only):
///
/// ```swift
/// let device = try LocalAuthenticationDevice(
///     platform: LocalAuthenticationFramework(accessGroups: ["ABCDE12345.com.example.app"]))
/// ```
public final class LocalAuthenticationDevice: Device {
    /// The `UserDefaults` key of the install marker.
    public static let installMarkerKey = "ApexKeychainInstallMarker"
    /// What `DeviceState` `enrolledSet` holds while biometrics are enrolled (nil while none are).
    ///
    /// The app can't see the enrolled set, only a domain state, which also changes, exceptionally, with a major
    /// update of iOS (`apple-secitem.md` §3.2). The keychain invalidates a `biometryCurrentSet` item itself; the
    /// package's own check compares the domain state (`biometryStateHash`) under one major version only. So the
    /// set is named as present, and its changes are left to those two.
    public static let enrolledSetPresent = "enrolled"

    private struct Memory {
        /// Whether protected data has been available, or the install marker readable, at some time in this
        /// launch: then the device has been unlocked since it started.
        var unlockedSinceBoot = false
        /// The last domain state read in this launch, for the times it can't be read (biometrics locked out).
        var lastDomainState: Data?
    }

    private let platform: any LocalAuthenticationPlatform
    private let defaultReason: String
    private let launch = UUID().uuidString
    private let memory = Locked(Memory())
    /// The app's bundle identifier.
    public let defaultService: String
    /// The first of the app's access groups (`apple-secitem.md` §2.8).
    public let defaultAccessGroup: String

    /// Creates the device of the app.
    /// - Parameters:
    ///   - platform: what the process can ask of iOS (the binding's, on a phone).
    ///   - defaultReason: the prompt's reason when the `Prompt` has no title (`LAContext` needs one).
    /// - Throws: `INVALID_ARGUMENT` when the app has no bundle identifier, `MISSING_ENTITLEMENT` when it has no
    ///   access group (the keychain answers every call with errSecMissingEntitlement then, §2.8).
    public init(
        platform: any LocalAuthenticationPlatform, defaultReason: String = "Authenticate to continue"
    ) throws(KeychainError) {
        guard let bundle = platform.bundleIdentifier, !bundle.isEmpty else {
            throw KeychainError(.INVALID_ARGUMENT, "the app has no bundle identifier")
        }
        guard let group = platform.accessGroups.first, !group.isEmpty else {
            throw KeychainError(.MISSING_ENTITLEMENT, "the app has no keychain access group")
        }
        self.platform = platform
        self.defaultReason = defaultReason.isEmpty ? "Authenticate to continue" : defaultReason
        defaultService = bundle
        defaultAccessGroup = group
    }

    // MARK: State

    /// The device as LocalAuthentication and the app's process report it now.
    ///
    /// `unlockedSinceBoot` is true once protected data has been available, or the install marker could be read,
    /// at some time in this launch. An app launched in the background while the device is locked, after its
    /// first unlock, is reported as before it until the user unlocks: reads then fail with
    /// `INTERACTION_NOT_ALLOWED` and can be retried, rather than reading a keychain that may be locked away.
    public func state() -> DeviceState {
        let context = platform.makeContext()
        let biometric = Self.failure { () throws(LocalAuthenticationError) in
            try context.canEvaluate(.deviceOwnerAuthenticationWithBiometrics)
        }
        let owner = Self.failure { () throws(LocalAuthenticationError) in
            try context.canEvaluate(.deviceOwnerAuthentication)
        }
        let major = platform.iOSMajorVersion
        let usageDescription = hasFaceIDUsageDescription
        var biometry = Self.biometry(context.biometryType)
        // An app the user kept from Face ID, or a sensor that can't be used, is told biometryNotAvailable with the
        // type still set. Without the usage description it is the type that matters (MISSING_USAGE_DESCRIPTION).
        if biometric == .biometryNotAvailable, biometry != .faceID || usageDescription { biometry = nil }
        // Locked out means enrolled: the lockout comes from failed matches of enrolled biometrics.
        let enrolled = biometry != nil && (biometric == nil || biometric == .biometryLockout)
        let read = biometric == nil ? Self.domainState(of: context, major: major) : nil
        let protectedData = platform.isProtectedDataAvailable
        let (domainState, unlockedSinceBoot) = memory.withLock { m in
            if protectedData { m.unlockedSinceBoot = true }
            if !enrolled {
                m.lastDomainState = nil
            } else if let read {
                m.lastDomainState = read
            }
            return (enrolled ? m.lastDomainState : nil, m.unlockedSinceBoot)
        }
        return DeviceState(
            platform: .iOS(major: major), biometry: biometry, enrolledSet: enrolled ? Self.enrolledSetPresent : nil,
            biometryLockedOut: biometric == .biometryLockout, passcodeSet: owner != .passcodeNotSet,
            isLocked: !protectedData, unlockedSinceBoot: unlockedSinceBoot, hasStrongBox: false,
            hasFaceIDUsageDescription: usageDescription, now: platform.now, uptime: platform.uptime,
            session: "\(launch)/\(platform.backgroundTransitions)", biometryStateHash: domainState.map(Self.hex))
    }

    /// Calls `action` when the app goes to the background (`didEnterBackgroundNotification`, through the
    /// platform): the session ends then, and the core drops every authValidity window and its `LAContext` at once.
    public func whenSessionEnds(_ action: @escaping @Sendable () -> Void) {
        platform.whenEnteringBackground(action)
    }

    /// The domain state iOS reports to the app: `domainState.biometry.stateHash` on iOS 18 and newer,
    /// `evaluatedPolicyDomainState` (deprecated there) before.
    static func domainState(of context: any LocalAuthenticationPlatformContext, major: Int) -> Data? {
        major >= 18 ? context.biometryStateHash : context.evaluatedPolicyDomainState
    }

    static func biometry(_ type: LocalAuthenticationBiometryType) -> BiometryType? {
        switch type {
        case .none: nil
        case .touchID: .touchID
        case .faceID: .faceID
        case .opticID: .opticID
        }
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    private static func failure(
        _ call: () throws(LocalAuthenticationError) -> Void
    ) -> LocalAuthenticationError? {
        do {
            try call()
            return nil
        } catch {
            return error
        }
    }

    /// Whether the app's Info.plist declares `NSFaceIDUsageDescription` (a string).
    public var hasFaceIDUsageDescription: Bool {
        if case .string = platform.infoPlistValue(forKey: "NSFaceIDUsageDescription") { true } else { false }
    }

    /// Whether the app's Info.plist sets `ApexKeychainClearOnReinstall` to YES (a Boolean, or the string `YES` or
    /// `true` in any case).
    public var clearOnReinstall: Bool {
        switch platform.infoPlistValue(forKey: "ApexKeychainClearOnReinstall") {
        case .bool(let on): on
        case .string(let text): ["yes", "true"].contains(text.lowercased())
        case .other, nil: false
        }
    }

    // MARK: Prompts

    /// The `LAPolicy` a prompt of `policy` evaluates when the item's access control isn't known. iOS has no
    /// passcode-only policy: `deviceOwnerAuthentication` also accepts biometrics.
    public static func policy(for policy: AuthenticationRequest.Policy) -> LocalAuthenticationPolicy {
        switch policy {
        case .biometryOnly: .deviceOwnerAuthenticationWithBiometrics
        case .biometryOrPasscode, .passcodeOnly: .deviceOwnerAuthentication
        }
    }

    /// The `LAPolicy` of an access control: biometrics alone for `biometryAny` and `biometryCurrentSet`,
    /// `deviceOwnerAuthentication` for the others; nil for `none`, which needs no prompt.
    public static func policy(for accessControl: AccessControl) -> LocalAuthenticationPolicy? {
        switch accessControl {
        case .none: nil
        case .biometryAny, .biometryCurrentSet: .deviceOwnerAuthenticationWithBiometrics
        case .biometryAnyOrPasscode, .biometryCurrentSetOrPasscode, .passcode: .deviceOwnerAuthentication
        }
    }

    /// What a prompt for `request` evaluates: the item's own access control when the request names it and its
    /// class, else the request's policy.
    public static func target(of request: AuthenticationRequest) -> LocalAuthenticationTarget {
        if request.accessControl != .none, let accessible = request.accessible {
            return .accessControl(
                SecAccessControlSpec(
                    protection: accessible.protectionDomain.rawValue, flags: request.accessControl.flags))
        }
        return .policy(policy(for: request.policy))
    }

    /// How a prompt that failed with `error` ended.
    public static func result(of error: LocalAuthenticationError) -> AuthenticationResult {
        switch error {
        case .userCancel, .systemCancel, .appCancel, .invalidContext: .canceled
        case .userFallback: .fallback
        case .biometryLockout: .lockout
        case .passcodeNotSet, .biometryNotAvailable, .biometryNotEnrolled: .unavailable
        case .notInteractive: .notInteractive
        default: .failed
        }
    }

    /// ``evaluate(_:)``'s result.
    public func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        await evaluate(request).result
    }

    /// Shows one prompt on a new `LAContext` with the `Prompt`'s texts (the title as `localizedReason`, or the
    /// default reason; `cancel` as `localizedCancelTitle`; `fallback` as `localizedFallbackTitle`), evaluating
    /// ``target(of:)``. A prompt that passed returns that context, as an ``Evaluation``, for the read.
    public func evaluate(_ request: AuthenticationRequest) async -> Authentication {
        let target = Self.target(of: request)
        let title = request.prompt.title ?? ""
        let text = LocalAuthenticationPromptText(
            localizedReason: title.isEmpty ? defaultReason : title, localizedCancelTitle: request.prompt.cancel,
            localizedFallbackTitle: request.prompt.fallback)
        let context = platform.makeContext()
        do {
            try await context.evaluate(target, text)
        } catch {
            return Authentication(result: Self.result(of: error))
        }
        return Authentication(
            result: .success, context: Evaluation(context: context, target: target, request: request))
    }

    /// What a prompt that passed leaves for the read that follows: the `LAContext` it evaluated, which the
    /// binding passes as `kSecUseAuthenticationContext`.
    public final class Evaluation: LocalAuthenticationContext {
        /// The evaluated context.
        public let context: any LocalAuthenticationPlatformContext
        /// What it evaluated.
        public let target: LocalAuthenticationTarget
        /// The request the prompt passed.
        public let request: AuthenticationRequest

        /// An evaluation of `target` for `request` on `context`.
        public init(
            context: any LocalAuthenticationPlatformContext, target: LocalAuthenticationTarget,
            request: AuthenticationRequest
        ) {
            self.context = context
            self.target = target
            self.request = request
        }

        /// Whether the prompt passed for exactly these access-control flags: those of the request's access
        /// control (the keychain itself decides on a phone; an emulator asks this).
        public func hasEvaluated(_ accessControl: SecAccessControlSpec) -> Bool {
            request.accessControl != .none && accessControl.flags == request.accessControl.flags
        }
    }

    // MARK: Entitlements and the install marker

    /// Whether `group` is one of the app's access groups, byte for byte.
    public func isEntitled(toAccessGroup group: String) -> Bool {
        platform.accessGroups.contains { ExactText.equal($0, group) }
    }

    /// Whether the install marker is in `UserDefaults`.
    /// - Throws: `INTERACTION_NOT_ALLOWED` when it reads absent while protected data is unavailable: before the
    ///   first unlock `UserDefaults` read empty, so absent then means "don't know".
    public func hasInstallMarker() throws -> Bool {
        if platform.userDefaultsBool(forKey: Self.installMarkerKey) {
            // Readable: the device has been unlocked since it started.
            memory.withLock { $0.unlockedSinceBoot = true }
            return true
        }
        guard platform.isProtectedDataAvailable else {
            throw KeychainError(
                .INTERACTION_NOT_ALLOWED, "the install marker can't be read before the device is unlocked")
        }
        memory.withLock { $0.unlockedSinceBoot = true }
        return false
    }

    /// Records the install marker in `UserDefaults`.
    /// - Throws: `INTERACTION_NOT_ALLOWED` while protected data is unavailable and the device isn't known to have
    ///   been unlocked since it started (a write then may not last).
    public func setInstallMarker() throws {
        let protectedData = platform.isProtectedDataAvailable
        let unlocked = memory.withLock { m in
            if protectedData { m.unlockedSinceBoot = true }
            return m.unlockedSinceBoot
        }
        guard unlocked else {
            throw KeychainError(
                .INTERACTION_NOT_ALLOWED, "the install marker can't be written before the device is unlocked")
        }
        platform.setUserDefaultsBool(true, forKey: Self.installMarkerKey)
    }
}
