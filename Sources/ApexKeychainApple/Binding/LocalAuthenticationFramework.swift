#if canImport(Security) && canImport(LocalAuthentication)
    import ApexKeychain
    import Foundation
    import LocalAuthentication
    import Security
    #if canImport(UIKit)
        import UIKit
    #endif

    /// The ``LocalAuthenticationPlatform`` of the app's process: `LAContext`, `Bundle.main`, `UserDefaults.standard`,
    /// `ProcessInfo` and, where UIKit is, `UIApplication`'s data-protection state and background notifications.
    public final class LocalAuthenticationFramework: LocalAuthenticationPlatform, @unchecked Sendable {
        private let state: Locked<(protectedData: Bool, background: Int)>
        private let backgroundActions: Locked<[@Sendable () -> Void]>
        /// Read once at start; the notification observers are only removed on deinit.
        private let observers: [any NSObjectProtocol]
        /// The app's access groups, in the keychain's order (`apple-secitem.md` §2.8).
        public let accessGroups: [String]

        /// The platform of the app: call it on the main actor, at launch.
        /// - Parameter accessGroups: the app's access groups in the keychain's order: its `keychain-access-groups`
        ///   entries, then `<team id>.<bundle id>`, then its app groups. An app can't read its entitlements at run
        ///   time, so it names them; the first is where items go.
        @available(iOSApplicationExtension, unavailable)
        @MainActor
        public init(accessGroups: [String]) {
            self.accessGroups = accessGroups
            let state = Locked((protectedData: true, background: 0))
            let actions = Locked<[@Sendable () -> Void]>([])
            self.state = state
            backgroundActions = actions
            #if canImport(UIKit)
                let center = NotificationCenter.default
                observers = [
                    center.addObserver(
                        forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil, queue: nil
                    ) { _ in state.withLock { $0.protectedData = true } },
                    center.addObserver(
                        forName: UIApplication.protectedDataWillBecomeUnavailableNotification, object: nil, queue: nil
                    ) { _ in state.withLock { $0.protectedData = false } },
                    center.addObserver(
                        forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil
                    ) { _ in
                        state.withLock { $0.background += 1 }
                        for action in actions.withLock({ $0 }) { action() }
                    },
                ]
                let available = UIApplication.shared.isProtectedDataAvailable
                state.withLock { $0.protectedData = available }
            #else
                observers = []
            #endif
        }

        deinit { for observer in observers { NotificationCenter.default.removeObserver(observer) } }

        /// `LAContext()`.
        public func makeContext() -> any LocalAuthenticationPlatformContext { LAContextBox(LAContext()) }

        /// `Bundle.main.object(forInfoDictionaryKey:)`, typed.
        public func infoPlistValue(forKey key: String) -> InfoPlistValue? {
            guard let value = Bundle.main.object(forInfoDictionaryKey: key) else { return nil }
            let object = value as AnyObject
            if CFGetTypeID(object) == CFBooleanGetTypeID(), let flag = object as? NSNumber {
                return .bool(flag.boolValue)
            }
            if let text = value as? String { return .string(text) }
            return .other
        }

        /// `Bundle.main.bundleIdentifier`.
        public var bundleIdentifier: String? { Bundle.main.bundleIdentifier }
        /// `UIApplication.isProtectedDataAvailable`, kept by its notifications (true without UIKit).
        public var isProtectedDataAvailable: Bool { state.withLock { $0.protectedData } }
        /// `ProcessInfo.operatingSystemVersion.majorVersion`.
        public var iOSMajorVersion: Int { ProcessInfo.processInfo.operatingSystemVersion.majorVersion }
        /// `Date()`.
        public var now: Date { Date() }
        /// `ProcessInfo.systemUptime`.
        public var uptime: TimeInterval { ProcessInfo.processInfo.systemUptime }
        /// The `didEnterBackgroundNotification`s seen.
        public var backgroundTransitions: Int { state.withLock { $0.background } }
        /// Calls `action` at each `didEnterBackgroundNotification`, after counting it (never without UIKit).
        public func whenEnteringBackground(_ action: @escaping @Sendable () -> Void) {
            backgroundActions.withLock { $0.append(action) }
        }
        /// `UserDefaults.standard.bool(forKey:)`.
        public func userDefaultsBool(forKey key: String) -> Bool { UserDefaults.standard.bool(forKey: key) }
        /// `UserDefaults.standard.set(_:forKey:)`.
        public func setUserDefaultsBool(_ value: Bool, forKey key: String) {
            UserDefaults.standard.set(value, forKey: key)
        }
    }

    /// One `LAContext`. The device sets it up and evaluates it once, then only the keychain reads it.
    final class LAContextBox: LocalAuthenticationPlatformContext, @unchecked Sendable {
        let context: LAContext

        init(_ context: LAContext) { self.context = context }

        func canEvaluate(_ policy: LocalAuthenticationPolicy) throws(LocalAuthenticationError) {
            guard let policy = LAPolicy(rawValue: policy.rawValue) else { throw .invalidContext }
            var error: NSError?
            if !context.canEvaluatePolicy(policy, error: &error) {
                throw LocalAuthenticationError(
                    rawValue: error?.code ?? LocalAuthenticationError.invalidContext.rawValue)
            }
        }

        func evaluate(
            _ target: LocalAuthenticationTarget, _ text: LocalAuthenticationPromptText
        ) async throws(LocalAuthenticationError) {
            context.localizedReason = text.localizedReason
            context.localizedCancelTitle = text.localizedCancelTitle
            context.localizedFallbackTitle = text.localizedFallbackTitle
            let failure: LocalAuthenticationError? = await withCheckedContinuation { continuation in
                let reply: @Sendable (Bool, (any Error)?) -> Void = { passed, error in
                    let code = (error as NSError?)?.code ?? LocalAuthenticationError.authenticationFailed.rawValue
                    continuation.resume(returning: passed ? nil : LocalAuthenticationError(rawValue: code))
                }
                switch target {
                case .accessControl(let spec):
                    // The package's own flags always make an access control (§2.11); a failure is the prompt's.
                    guard let accessControl = SecItemFramework.secAccessControl(spec) else {
                        return continuation.resume(returning: .authenticationFailed)
                    }
                    context.evaluateAccessControl(
                        accessControl, operation: .useItem, localizedReason: text.localizedReason, reply: reply)
                case .policy(let policy):
                    guard let policy = LAPolicy(rawValue: policy.rawValue) else {
                        return continuation.resume(returning: .invalidContext)
                    }
                    context.evaluatePolicy(policy, localizedReason: text.localizedReason, reply: reply)
                }
            }
            if let failure { throw failure }
            // Evaluated: the keychain takes it without UI, and answers errSecInteractionNotAllowed instead of a
            // second prompt for an item it doesn't open (apple-secitem.md §2.7, §3.2).
            context.interactionNotAllowed = true
        }

        var biometryType: LocalAuthenticationBiometryType {
            switch context.biometryType {
            case .touchID: return .touchID
            case .faceID: return .faceID
            default:
                if #available(iOS 17.0, macOS 14.0, macCatalyst 17.0, *), context.biometryType == .opticID {
                    return .opticID
                }
                return .none
            }
        }

        var evaluatedPolicyDomainState: Data? { context.evaluatedPolicyDomainState }

        var biometryStateHash: Data? {
            if #available(iOS 18.0, macOS 15.0, macCatalyst 18.0, *) { return context.domainState.biometry.stateHash }
            return nil
        }
    }
#endif
