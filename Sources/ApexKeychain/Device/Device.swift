import Foundation

/// The operating system a ``Device`` runs, with the version the protection rules depend on.
public enum Platform: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// iOS, by major version.
    case iOS(major: Int)
    /// Android, by API level.
    case android(apiLevel: Int)
    /// A Linux machine (the embedded store's default): no biometric hardware.
    case linux

    /// `iOS 18`, `Android API 30`, `Linux`.
    public var description: String {
        switch self {
        case .iOS(let major): "iOS \(major)"
        case .android(let level): "Android API \(level)"
        case .linux: "Linux"
        }
    }

    /// The major OS version (iOS major, Android API level, 0 on Linux), kept with biometric state.
    public var majorVersion: Int {
        switch self {
        case .iOS(let major): major
        case .android(let level): level
        case .linux: 0
        }
    }

    var isAndroid: Bool { if case .android = self { true } else { false } }
    var isIOS: Bool { if case .iOS = self { true } else { false } }
}

/// What a device is like at one moment: the facts the protection rules are decided on.
public struct DeviceState: Sendable, Equatable {
    /// The operating system.
    public var platform: Platform
    /// The biometric sensor, or nil when there is none.
    public var biometry: BiometryType?
    /// An identifier of the enrolled set of biometrics as the platform knows it (changes on every enrolment
    /// change, and only then); nil when none enrolled. The keychain (iOS) and the Keystore (Android) invalidate a
    /// `biometryCurrentSet*` item when it changes, whatever the OS version.
    public var enrolledSet: String?
    /// Whether biometrics are temporarily locked out after failed attempts.
    public var biometryLockedOut: Bool
    /// Whether a device passcode (PIN, pattern, password) is set.
    public var passcodeSet: Bool
    /// Whether the device is locked now.
    public var isLocked: Bool
    /// Whether the device has been unlocked since it started.
    public var unlockedSinceBoot: Bool
    /// Whether the device has StrongBox (Android).
    public var hasStrongBox: Bool
    /// Whether the app declares `NSFaceIDUsageDescription` (iOS).
    public var hasFaceIDUsageDescription: Bool
    /// Wall-clock time, for items' created and modified dates.
    public var now: Date
    /// Seconds on a clock that only moves forward, for authValidity windows.
    public var uptime: TimeInterval
    /// Identifies one foreground session of one launch of the app: it changes when the app starts and when it
    /// goes to the background, which closes every authValidity window.
    public var session: String
    /// The biometric domain state the platform reports to the app (iOS `evaluatedPolicyDomainState`), or nil
    /// when it reports none. The package keeps it with a `biometryCurrentSet*` item and compares it under the
    /// same major OS version only: the platform may report another hash for the same enrolled set after a
    /// major update. ``enrolledSet`` is the set itself, which the platform's own invalidation follows.
    public var biometryStateHash: String?

    /// Creates a state.
    public init(
        platform: Platform, biometry: BiometryType?, enrolledSet: String?, biometryLockedOut: Bool,
        passcodeSet: Bool, isLocked: Bool, unlockedSinceBoot: Bool, hasStrongBox: Bool,
        hasFaceIDUsageDescription: Bool, now: Date, uptime: TimeInterval, session: String,
        biometryStateHash: String? = nil
    ) {
        self.platform = platform
        self.biometry = biometry
        self.enrolledSet = enrolledSet
        self.biometryLockedOut = biometryLockedOut
        self.passcodeSet = passcodeSet
        self.isLocked = isLocked
        self.unlockedSinceBoot = unlockedSinceBoot
        self.hasStrongBox = hasStrongBox
        self.hasFaceIDUsageDescription = hasFaceIDUsageDescription
        self.now = now
        self.uptime = uptime
        self.session = session
        self.biometryStateHash = biometryStateHash
    }

    /// Whether biometrics are enrolled.
    public var biometryEnrolled: Bool { biometry != nil && enrolledSet != nil }
}

/// What a prompt asks of the user.
public struct AuthenticationRequest: Sendable, Equatable {
    /// Which authentications satisfy the request.
    public enum Policy: String, Sendable, Equatable {
        /// Biometrics only: the fallback button ends the prompt with ``AuthenticationResult/fallback``.
        case biometryOnly
        /// Biometrics, or the passcode.
        case biometryOrPasscode
        /// The passcode only.
        case passcodeOnly
    }

    /// Which authentications satisfy the request.
    public var policy: Policy
    /// The text to show.
    public var prompt: Prompt
    /// The service whose item is being read (for the device's records; never shown as a secret).
    public var service: String
    /// The key being read.
    public var key: String
    /// The access control of the item being read: what a device that evaluates the item's own access control
    /// (iOS `evaluateAccessControl`) evaluates.
    public var accessControl: AccessControl
    /// The class of the item being read, which its access control was made with; nil when unknown.
    public var accessible: Accessible?

    /// Creates a request.
    public init(
        policy: Policy, prompt: Prompt, service: String, key: String, accessControl: AccessControl = .none,
        accessible: Accessible? = nil
    ) {
        self.policy = policy
        self.prompt = prompt
        self.service = service
        self.key = key
        self.accessControl = accessControl
        self.accessible = accessible
    }
}

/// How a prompt ended.
public enum AuthenticationResult: String, Sendable, Equatable, CaseIterable {
    /// The user authenticated.
    case success
    /// The user dismissed the prompt.
    case canceled
    /// The user chose the fallback button of a biometry-only prompt. On a prompt that accepts the passcode the
    /// fallback is the passcode: the device asks for it and returns how that ended instead.
    case fallback
    /// The user failed to authenticate.
    case failed
    /// Biometrics are locked out.
    case lockout
    /// The device can't authenticate now (no sensor, nothing enrolled, no passcode).
    case unavailable
    /// No prompt can be shown in this context (no terminal, an extension without UI).
    case notInteractive
}

/// The device under a ``Keychain``: the LocalAuthentication / BiometricPrompt surface.
///
/// The core asks the device what it can give before every write (never weaker) and before every read (lock
/// state, enrolment), and asks it to prompt. It calls ``authenticate(_:)`` one prompt at a time, in the order
/// the reads asked.
public protocol Device: AnyObject, Sendable {
    /// The service a ``Keychain`` uses when its options name none: the app's bundle identifier.
    var defaultService: String { get }
    /// The access group items go to when the options name none (iOS: team id + bundle id).
    var defaultAccessGroup: String { get }
    /// The device as it is now.
    func state() -> DeviceState
    /// Shows a prompt and waits for the user. Only a ``AuthenticationRequest/Policy/biometryOnly`` prompt can end
    /// with ``AuthenticationResult/fallback``: on the others the fallback is the passcode.
    func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult
    /// Shows a prompt as ``authenticate(_:)`` does, and returns with its result the context the database's next
    /// read of the item takes (``AuthenticationContext``). The core calls this one. Default: ``authenticate(_:)``,
    /// with no context.
    func evaluate(_ request: AuthenticationRequest) async -> Authentication
    /// Whether the app declares `ApexKeychainClearOnReinstall = YES` in its Info.plist: a setting of the app, not
    /// of one keychain. Default: false.
    var clearOnReinstall: Bool { get }
    /// Whether the app's keychain-access-groups entitlement holds `group` (iOS). A keychain of a group outside
    /// them fails every call with `MISSING_ENTITLEMENT`. Default: the app's default group only.
    func isEntitled(toAccessGroup group: String) -> Bool
    /// Whether the app's install marker exists (it is removed when the app is uninstalled; the keychain is not).
    /// - Throws: when the marker can't be read (never answer false for "don't know"): a ``KeychainError`` passes
    ///   through as it is (`INTERACTION_NOT_ALLOWED` before the first unlock), anything else is `INTERNAL`.
    func hasInstallMarker() throws -> Bool
    /// Records the install marker.
    /// - Throws: when it can't be recorded, as ``hasInstallMarker()``.
    func setInstallMarker() throws
    /// Receives a warning of the package (an option this platform ignores, for example). The package never
    /// prints; a device shows warnings where the app's developers look. Default: dropped.
    func warn(_ warning: KeychainWarning)
    /// Keeps `action` and calls it, on any thread, each time the session of ``DeviceState/session`` ends: when the
    /// app goes to the background, at the transition itself. The package registers once per device object, and
    /// drops every authValidity window and the context it keeps then, so that no evaluated context outlives the
    /// session in memory (seed 000: "it is dropped when the app goes to the background"). Default: never called;
    /// the windows of an ended session are then dropped at the first read of the next one.
    func whenSessionEnds(_ action: @escaping @Sendable () -> Void)
}

extension Device {
    /// ``authenticate(_:)``, with no context.
    public func evaluate(_ request: AuthenticationRequest) async -> Authentication {
        Authentication(result: await authenticate(request))
    }

    /// The app does not declare `ApexKeychainClearOnReinstall`.
    public var clearOnReinstall: Bool { false }

    /// The app's default access group only.
    public func isEntitled(toAccessGroup group: String) -> Bool { ExactText.equal(group, defaultAccessGroup) }

    /// Drops the warning.
    public func warn(_ warning: KeychainWarning) {}

    /// Never calls `action`: the package learns that a session ended from the next read's device state.
    public func whenSessionEnds(_ action: @escaping @Sendable () -> Void) {}
}

/// Something the package tells the app's developers without failing the call, once per device.
public struct KeychainWarning: Sendable, Equatable, CustomStringConvertible {
    /// Which warning.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// `synchronizable` was asked for on Android, which has no iCloud Keychain: the item stays on the device.
        case synchronizableIgnored
    }

    /// Which warning, for programs.
    public let code: Code
    /// The warning, for people. Never contains a secret.
    public let message: String

    /// Creates a warning.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
