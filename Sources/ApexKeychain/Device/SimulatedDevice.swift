import Foundation

/// A scriptable ``Device`` for tests: an app's own tests and the package's.
///
/// Change what the device is like (enrol or change biometrics, remove the passcode, lock it, send the app to
/// the background, move the clock), say how the next prompts will end, and count the prompts shown.
/// A prompt the device can't show (biometry-only with nothing enrolled, or locked out) ends at once without
/// being counted, as on a phone.
public final class SimulatedDevice: Device {
    /// The biometric sensor of the simulated device.
    public typealias Biometry = BiometryType

    private struct State {
        var platform: Platform
        var biometry: BiometryType?
        var enrolledSet: String?
        var enrolments = 0
        var lockedOut = false
        var passcodeSet: Bool
        var locked: Bool
        var unlockedSinceBoot: Bool
        var strongBox: Bool
        var faceIDUsageDescription: Bool
        /// The wall clock's fixed start, or nil to follow the system clock.
        var start: Date?
        /// How far ``advanceClock(by:)`` moved the wall clock.
        var clockOffset: TimeInterval = 0
        var uptime: Double = 0
        var launch = 1 { didSet { session = nil } }
        var foreground = 1 { didSet { session = nil } }
        /// The session identifier of the current launch and foreground, once asked for.
        var session: String?
        /// ``SimulatedDevice/stateHash(_:)`` of the platform and set it was built for: built once, not per state.
        var stateHash: (platform: Platform, enrolledSet: String?, hash: String?)?
        var installMarker = false
        var markerFailure: InstallMarkerFailure?
        var clearOnReinstall: Bool
        var warnings: [KeychainWarning] = []
        var answers: [AuthenticationResult] = []
        var defaultAnswer: AuthenticationResult
        var prompts: [AuthenticationRequest] = []
    }

    /// The app's keychain-access-groups entitlement.
    public enum AccessGroups: Sendable, Equatable {
        /// The default access group only.
        case defaultOnly
        /// The default group and these.
        case listed([String])
        /// Every group (a device that models the keychain rather than one app, such as a store's profile).
        case any
    }

    /// How the install marker's storage fails.
    public enum InstallMarkerFailure: Sendable, Equatable {
        /// It can't be read.
        case reading
        /// It can be read, but not written.
        case writing
    }

    private let store: Locked<State>
    /// What ``whenSessionEnds(_:)`` was given.
    private let sessionEndActions = Locked<[@Sendable () -> Void]>([])
    private let identity = UUID().uuidString
    private let accessGroups: AccessGroups
    /// The app's bundle identifier: the default service.
    public let defaultService: String
    /// The app's default access group: `<team id>.<bundle id>`.
    public let defaultAccessGroup: String

    /// Creates a device.
    /// - Parameters:
    ///   - platform: the OS and its version.
    ///   - biometry: the sensor, or nil for none (Linux machines have none whatever is passed).
    ///   - biometricsEnrolled: whether something is enrolled on the sensor.
    ///   - passcodeSet: whether a passcode is set (enrolment needs one: without it nothing is enrolled).
    ///   - hasStrongBox: whether an Android device has StrongBox.
    ///   - hasFaceIDUsageDescription: whether the app declares `NSFaceIDUsageDescription`.
    ///   - locked: whether the device starts locked (it has been unlocked since boot unless `unlockedSinceBoot`).
    ///   - unlockedSinceBoot: whether the device has been unlocked since it started (false: before the first unlock).
    ///   - bundleIdentifier: the default service.
    ///   - teamIdentifier: the prefix of the default access group.
    ///   - defaultAnswer: how prompts end when no answer was scripted.
    ///   - now: the wall clock's time at start (tests' fixed dates: 2026-01-01 by default), or nil to follow the
    ///     system clock; ``advanceClock(by:)`` moves it either way.
    ///   - clearOnReinstall: whether the app declares `ApexKeychainClearOnReinstall = YES`.
    ///   - accessGroups: the app's keychain-access-groups entitlement.
    public init(
        platform: Platform = .iOS(major: 18), biometry: Biometry? = .faceID, passcodeSet: Bool = true,
        biometricsEnrolled: Bool = true, hasStrongBox: Bool = false, hasFaceIDUsageDescription: Bool = true,
        locked: Bool = false, unlockedSinceBoot: Bool = true, bundleIdentifier: String = "com.example.app",
        teamIdentifier: String = "ABCDE12345", defaultAnswer: AuthenticationResult = .success,
        now: Date? = Date(timeIntervalSince1970: 1_767_225_600), clearOnReinstall: Bool = false,
        accessGroups: AccessGroups = .defaultOnly
    ) {
        let sensor = platform == .linux ? nil : biometry
        let enrolled = sensor != nil && passcodeSet && biometricsEnrolled
        store = Locked(
            State(
                platform: platform, biometry: sensor, enrolledSet: enrolled ? "enrolment-1" : nil,
                enrolments: enrolled ? 1 : 0, passcodeSet: passcodeSet, locked: locked,
                unlockedSinceBoot: unlockedSinceBoot, strongBox: hasStrongBox,
                faceIDUsageDescription: hasFaceIDUsageDescription, start: now, clearOnReinstall: clearOnReinstall,
                defaultAnswer: defaultAnswer))
        self.accessGroups = accessGroups
        defaultService = bundleIdentifier
        defaultAccessGroup = "\(teamIdentifier).\(bundleIdentifier)"
    }

    /// The device as it is now.
    public func state() -> DeviceState {
        store.withLock { s in
            let session = s.session ?? "\(identity)/\(s.launch)/\(s.foreground)"
            s.session = session
            return DeviceState(
                platform: s.platform, biometry: s.biometry, enrolledSet: s.enrolledSet, biometryLockedOut: s.lockedOut,
                passcodeSet: s.passcodeSet, isLocked: s.locked, unlockedSinceBoot: s.unlockedSinceBoot,
                hasStrongBox: s.strongBox, hasFaceIDUsageDescription: s.faceIDUsageDescription,
                now: (s.start ?? Date()).addingTimeInterval(s.clockOffset),
                uptime: s.uptime, session: session, biometryStateHash: Self.stateHash(&s))
        }
    }

    /// The domain state iOS reports: a hash of the enrolled set that, as on a phone, may differ after a major
    /// update for the same set. Android reports none (its Keystore does the check).
    private static func stateHash(_ s: inout State) -> String? {
        if let built = s.stateHash, built.platform == s.platform, built.enrolledSet == s.enrolledSet {
            return built.hash
        }
        var hash: String?
        if case .iOS(let major) = s.platform, let set = s.enrolledSet { hash = "\(set)@ios\(major)" }
        s.stateHash = (s.platform, s.enrolledSet, hash)
        return hash
    }

    /// Shows a prompt and returns how it ended.
    public func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        store.withLock { s in
            let biometryUsable = s.biometry != nil && s.enrolledSet != nil && !s.lockedOut
            switch request.policy {
            case .biometryOnly:
                if s.biometry == nil || s.enrolledSet == nil { return .unavailable }
                if s.lockedOut { return .lockout }
            case .biometryOrPasscode:
                if !biometryUsable && !s.passcodeSet { return .unavailable }
            case .passcodeOnly:
                if !s.passcodeSet { return .unavailable }
            }
            s.prompts.append(request)
            let answer = s.answers.isEmpty ? s.defaultAnswer : s.answers.removeFirst()
            // Only a biometry-only prompt ends with the fallback; on the others it is the passcode, typed.
            if answer == .fallback, request.policy != .biometryOnly { return s.passcodeSet ? .success : .unavailable }
            return answer
        }
    }

    /// ``authenticate(_:)``; a prompt that passed leaves an ``Evaluation`` of the request, which a database that
    /// reads with a context (an emulated keychain) takes. The store and the in-memory database ignore it.
    public func evaluate(_ request: AuthenticationRequest) async -> Authentication {
        let result = await authenticate(request)
        return Authentication(result: result, context: result == .success ? Evaluation(request) : nil)
    }

    /// What a prompt that passed on a simulated device leaves for the read that follows: the request it passed.
    public final class Evaluation: AuthenticationContext {
        /// The request the prompt passed.
        public let request: AuthenticationRequest
        /// The evaluation of `request`.
        public init(_ request: AuthenticationRequest) { self.request = request }
    }

    /// Whether the app declares `ApexKeychainClearOnReinstall = YES`.
    public var clearOnReinstall: Bool { store.withLock { $0.clearOnReinstall } }

    /// Whether the app's entitlement holds `group`.
    public func isEntitled(toAccessGroup group: String) -> Bool {
        switch accessGroups {
        case .any: true
        case .defaultOnly: ExactText.equal(group, defaultAccessGroup)
        case .listed(let groups):
            ExactText.equal(group, defaultAccessGroup) || groups.contains { ExactText.equal($0, group) }
        }
    }

    /// Whether the app's install marker exists.
    /// - Throws: `INTERNAL` while ``failInstallMarker(_:)`` says it can't be read.
    public func hasInstallMarker() throws -> Bool {
        try store.withLock { s throws(KeychainError) in
            if s.markerFailure == .reading { throw KeychainError(.INTERNAL, "the install marker can't be read") }
            return s.installMarker
        }
    }

    /// Records the app's install marker.
    /// - Throws: `INTERNAL` while ``failInstallMarker(_:)`` says it can't be written.
    public func setInstallMarker() throws {
        try store.withLock { s throws(KeychainError) in
            if s.markerFailure != nil { throw KeychainError(.INTERNAL, "the install marker can't be written") }
            s.installMarker = true
        }
    }

    /// Records a warning of the package (see ``warnings``).
    public func warn(_ warning: KeychainWarning) { store.withLock { $0.warnings.append(warning) } }

    // MARK: Scripting

    /// Says how the next prompts end, in order; once they are used up, prompts end with the default answer.
    public func answerNextPrompts(_ answers: AuthenticationResult...) {
        store.withLock { $0.answers.append(contentsOf: answers) }
    }

    /// How prompts end when no answer was scripted.
    public func setDefaultAnswer(_ answer: AuthenticationResult) { store.withLock { $0.defaultAnswer = answer } }

    /// Whether the install marker is recorded (what ``hasInstallMarker()`` answers when it can be read).
    public var installMarkerExists: Bool { store.withLock { $0.installMarker } }

    /// Makes the install marker's storage fail (nil: work again).
    public func failInstallMarker(_ failure: InstallMarkerFailure?) { store.withLock { $0.markerFailure = failure } }

    /// Changes the app's `ApexKeychainClearOnReinstall` setting, as an update of the app would.
    public func setClearOnReinstall(_ on: Bool) { store.withLock { $0.clearOnReinstall = on } }

    /// Every warning the package gave, in order.
    public var warnings: [KeychainWarning] { store.withLock { $0.warnings } }

    /// How many prompts have been shown.
    public var promptCount: Int { store.withLock { $0.prompts.count } }

    /// Every prompt shown, in order.
    public var prompts: [AuthenticationRequest] { store.withLock { $0.prompts } }

    /// Enrols biometrics anew (a new finger or face): the enrolled set changes. Needs a sensor and a passcode.
    public func enrollBiometrics() {
        store.withLock { s in
            guard s.biometry != nil, s.passcodeSet else { return }
            s.enrolments += 1
            s.enrolledSet = "enrolment-\(s.enrolments)"
        }
    }

    /// Removes every enrolled biometric.
    public func removeBiometrics() { store.withLock { $0.enrolledSet = nil } }

    /// Locks or unlocks biometrics after failed attempts.
    public func setBiometryLockedOut(_ lockedOut: Bool) { store.withLock { $0.lockedOut = lockedOut } }

    /// Sets or removes the passcode. Removing it removes enrolled biometrics too, as on a phone.
    public func setPasscode(_ set: Bool) {
        store.withLock { s in
            s.passcodeSet = set
            if !set { s.enrolledSet = nil }
        }
    }

    /// Sets whether the app declares `NSFaceIDUsageDescription`.
    public func setFaceIDUsageDescription(_ declared: Bool) { store.withLock { $0.faceIDUsageDescription = declared } }

    /// Locks the device.
    public func lock() { store.withLock { $0.locked = true } }

    /// Unlocks the device.
    public func unlock() {
        store.withLock { s in
            s.locked = false
            s.unlockedSinceBoot = true
        }
    }

    /// Restarts the device: locked, not unlocked since boot, the app launched anew.
    public func reboot() {
        store.withLock { s in
            s.locked = true
            s.unlockedSinceBoot = false
            s.launch += 1
        }
        endSession()
    }

    /// Sends the app to the background: the session ends, and every authValidity window closes at once.
    public func goToBackground() {
        store.withLock { $0.foreground += 1 }
        endSession()
    }

    /// Starts the app anew: every authValidity window closes.
    public func relaunch() {
        store.withLock { $0.launch += 1 }
        endSession()
    }

    /// Uninstalls and installs the app again: its install marker is gone, the keychain stays.
    public func reinstallApp() {
        store.withLock { s in
            s.installMarker = false
            s.launch += 1
        }
        endSession()
    }

    /// Calls `action` each time the session ends: ``goToBackground()``, ``relaunch()``, ``reboot()`` and
    /// ``reinstallApp()``, after the state names the new session.
    public func whenSessionEnds(_ action: @escaping @Sendable () -> Void) {
        sessionEndActions.withLock { $0.append(action) }
    }

    private func endSession() {
        for action in sessionEndActions.withLock({ $0 }) { action() }
    }

    /// Upgrades the OS to another major version (enrolment checks compare within one major version).
    public func upgradeOS(to platform: Platform) { store.withLock { $0.platform = platform } }

    /// Moves both clocks forward.
    public func advanceClock(by seconds: TimeInterval) {
        store.withLock { s in
            s.uptime += seconds
            s.clockOffset += seconds
        }
    }
}
