import ApexKeychainApple
import Foundation
import Synchronization

/// A `LocalAuthenticationPlatform` the tests script: what `canEvaluatePolicy` answers, how the next prompts end,
/// the Info.plist, the groups, the data-protection state, the clocks and `UserDefaults`. It records every
/// context made and every prompt evaluated.
final class ScriptedPlatform: LocalAuthenticationPlatform {
    struct Script {
        var biometryType: LocalAuthenticationBiometryType = .faceID
        /// What `canEvaluatePolicy` fails with, by policy; absent: it succeeds.
        var canEvaluate: [LocalAuthenticationPolicy: LocalAuthenticationError] = [:]
        /// The domain state of the enrolled biometrics (both APIs report it here).
        var domainState: Data? = Data([0xAB, 0x01])
        var answers: [LocalAuthenticationError?] = []
        var info: [String: InfoPlistValue] = ["NSFaceIDUsageDescription": .string("Unlocks your tokens")]
        var bundleIdentifier: String? = "com.example.app"
        var accessGroups = ["ABCDE12345.com.example.app", "ABCDE12345.shared"]
        var protectedData = true
        var major = 18
        var now = Date(timeIntervalSince1970: 1_767_225_600)
        var uptime: TimeInterval = 100
        var background = 0
        var defaults: [String: Bool] = [:]
        var contextsMade = 0
        var prompts: [(target: LocalAuthenticationTarget, text: LocalAuthenticationPromptText)] = []
    }

    let script: Mutex<Script>

    init(_ configure: (inout Script) -> Void = { _ in }) {
        var s = Script()
        configure(&s)
        script = Mutex(s)
    }

    func change(_ body: (inout Script) -> Void) { script.withLock { body(&$0) } }
    var prompts: [(target: LocalAuthenticationTarget, text: LocalAuthenticationPromptText)] {
        script.withLock { $0.prompts }
    }
    var contextsMade: Int { script.withLock { $0.contextsMade } }

    func makeContext() -> any LocalAuthenticationPlatformContext {
        script.withLock { $0.contextsMade += 1 }
        let context = ScriptedContext(self)
        made.withLock { $0.append(WeakContext(context: context)) }
        return context
    }

    private struct WeakContext: @unchecked Sendable {
        weak var context: ScriptedContext?
    }
    private let made = Mutex<[WeakContext]>([])
    /// How many of the contexts made are still alive somewhere (the platform keeps none itself).
    var liveContexts: Int { made.withLock { $0.filter { $0.context != nil }.count } }
    func infoPlistValue(forKey key: String) -> InfoPlistValue? { script.withLock { $0.info[key] } }
    var bundleIdentifier: String? { script.withLock { $0.bundleIdentifier } }
    var accessGroups: [String] { script.withLock { $0.accessGroups } }
    var isProtectedDataAvailable: Bool { script.withLock { $0.protectedData } }
    var iOSMajorVersion: Int { script.withLock { $0.major } }
    var now: Date { script.withLock { $0.now } }
    var uptime: TimeInterval { script.withLock { $0.uptime } }
    var backgroundTransitions: Int { script.withLock { $0.background } }
    private let backgroundActions = Mutex<[@Sendable () -> Void]>([])
    func whenEnteringBackground(_ action: @escaping @Sendable () -> Void) {
        backgroundActions.withLock { $0.append(action) }
    }
    /// The app goes to the background: counted, then told, as `didEnterBackgroundNotification` is.
    func goToBackground() {
        change { $0.background += 1 }
        for action in backgroundActions.withLock({ $0 }) { action() }
    }
    /// As on a phone: before the first unlock `UserDefaults` read empty.
    func userDefaultsBool(forKey key: String) -> Bool { script.withLock { $0.defaults[key] ?? false } }
    func setUserDefaultsBool(_ value: Bool, forKey key: String) { script.withLock { $0.defaults[key] = value } }
}

/// One scripted `LAContext`: as Apple documents, `evaluatedPolicyDomainState` is non-nil only once a biometric
/// policy could be evaluated on it, and `domainState` exists from iOS 18 only.
final class ScriptedContext: LocalAuthenticationPlatformContext {
    private let platform: ScriptedPlatform
    private let biometricPassed = Mutex(false)

    init(_ platform: ScriptedPlatform) { self.platform = platform }

    func canEvaluate(_ policy: LocalAuthenticationPolicy) throws(LocalAuthenticationError) {
        if let error = platform.script.withLock({ $0.canEvaluate[policy] }) { throw error }
        if policy == .deviceOwnerAuthenticationWithBiometrics { biometricPassed.withLock { $0 = true } }
    }

    func evaluate(
        _ target: LocalAuthenticationTarget, _ text: LocalAuthenticationPromptText
    ) async throws(LocalAuthenticationError) {
        let answer = platform.script.withLock { s in
            s.prompts.append((target, text))
            return s.answers.isEmpty ? nil : s.answers.removeFirst()
        }
        if let answer { throw answer }
    }

    var biometryType: LocalAuthenticationBiometryType { platform.script.withLock { $0.biometryType } }
    var evaluatedPolicyDomainState: Data? {
        biometricPassed.withLock { $0 } ? platform.script.withLock { $0.domainState } : nil
    }
    var biometryStateHash: Data? {
        platform.script.withLock { $0.major >= 18 ? $0.domainState.map { Data([0x18]) + $0 } : nil }
    }
}
