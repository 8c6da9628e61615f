import ApexKeychain
import ApexKeychainApple
import Foundation
import Testing

/// `LocalAuthenticationDevice` over a scripted platform: each mapping from LocalAuthentication and the app's
/// process onto the core's `DeviceState`, the prompts and the install marker.
@Suite("LocalAuthenticationDevice")
struct LocalAuthenticationDeviceTests {
    private static let biometrics = LocalAuthenticationPolicy.deviceOwnerAuthenticationWithBiometrics
    private static let owner = LocalAuthenticationPolicy.deviceOwnerAuthentication

    private func device(
        _ configure: (inout ScriptedPlatform.Script) -> Void = { _ in }
    ) throws -> (
        LocalAuthenticationDevice, ScriptedPlatform
    ) {
        let platform = ScriptedPlatform(configure)
        return (try LocalAuthenticationDevice(platform: platform), platform)
    }

    @Test("LAPolicy and LAError raw values are Apple's")
    func rawValues() {
        #expect(LocalAuthenticationPolicy.deviceOwnerAuthenticationWithBiometrics.rawValue == 1)
        #expect(LocalAuthenticationPolicy.deviceOwnerAuthentication.rawValue == 2)
        let codes: [(LocalAuthenticationError, Int)] = [
            (.authenticationFailed, -1), (.userCancel, -2), (.userFallback, -3), (.systemCancel, -4),
            (.passcodeNotSet, -5), (.biometryNotAvailable, -6), (.biometryNotEnrolled, -7), (.biometryLockout, -8),
            (.appCancel, -9), (.invalidContext, -10), (.notInteractive, -1004),
        ]
        for (error, code) in codes { #expect(error.rawValue == code) }
    }

    @Test("each prompt policy and access control has its LAPolicy")
    func policies() {
        #expect(LocalAuthenticationDevice.policy(for: AuthenticationRequest.Policy.biometryOnly) == Self.biometrics)
        #expect(LocalAuthenticationDevice.policy(for: AuthenticationRequest.Policy.biometryOrPasscode) == Self.owner)
        #expect(LocalAuthenticationDevice.policy(for: AuthenticationRequest.Policy.passcodeOnly) == Self.owner)
        let expected: [AccessControl: LocalAuthenticationPolicy?] = [
            .none: nil, .biometryAny: Self.biometrics, .biometryCurrentSet: Self.biometrics,
            .biometryAnyOrPasscode: Self.owner, .biometryCurrentSetOrPasscode: Self.owner, .passcode: Self.owner,
        ]
        for control in AccessControl.allCases {
            #expect(LocalAuthenticationDevice.policy(for: control) == expected[control]!, "\(control)")
        }
    }

    @Test("each LAError ends the prompt as the core knows it")
    func results() {
        let expected: [(LocalAuthenticationError, AuthenticationResult)] = [
            (.userCancel, .canceled), (.systemCancel, .canceled), (.appCancel, .canceled),
            (.invalidContext, .canceled), (.userFallback, .fallback), (.authenticationFailed, .failed),
            (.biometryLockout, .lockout), (.passcodeNotSet, .unavailable), (.biometryNotAvailable, .unavailable),
            (.biometryNotEnrolled, .unavailable), (.notInteractive, .notInteractive),
            (LocalAuthenticationError(rawValue: -12), .failed),
        ]
        for (error, result) in expected { #expect(LocalAuthenticationDevice.result(of: error) == result, "\(error)") }
    }

    @Test("the sensor as LocalAuthentication reports it")
    func biometryTypes() throws {
        let types: [(LocalAuthenticationBiometryType, BiometryType?)] = [
            (.none, nil), (.touchID, .touchID), (.faceID, .faceID), (.opticID, .opticID),
        ]
        for (reported, expected) in types {
            let (device, _) = try device { $0.biometryType = reported }
            #expect(device.state().biometry == expected)
        }
        // The user kept the app from Face ID: no usable sensor.
        let (kept, _) = try device { $0.canEvaluate[Self.biometrics] = .biometryNotAvailable }
        #expect(kept.state().biometry == nil && kept.state().enrolledSet == nil)
        // Without the usage description the type stays, so that the core can name what is missing.
        let (undeclared, _) = try device {
            $0.canEvaluate[Self.biometrics] = .biometryNotAvailable
            $0.info = [:]
        }
        #expect(undeclared.state().biometry == .faceID && !undeclared.state().hasFaceIDUsageDescription)
    }

    @Test("enrolment, lockout and passcode from canEvaluatePolicy's errors")
    func enrolment() throws {
        let (enrolled, _) = try device()
        let state = enrolled.state()
        #expect(state.enrolledSet == LocalAuthenticationDevice.enrolledSetPresent && state.biometryEnrolled)
        #expect(!state.biometryLockedOut && state.passcodeSet)

        let (none, _) = try device {
            $0.canEvaluate[Self.biometrics] = .biometryNotEnrolled
            $0.domainState = nil
        }
        #expect(none.state().enrolledSet == nil && none.state().biometry == .faceID)
        #expect(none.state().biometryStateHash == nil)

        let (noPasscode, _) = try device {
            $0.canEvaluate = [Self.biometrics: .passcodeNotSet, Self.owner: .passcodeNotSet]
        }
        #expect(!noPasscode.state().passcodeSet && noPasscode.state().enrolledSet == nil)

        let (lockedOut, platform) = try device()
        let before = try #require(lockedOut.state().biometryStateHash)
        platform.change { $0.canEvaluate[Self.biometrics] = .biometryLockout }
        let during = lockedOut.state()
        #expect(during.biometryLockedOut && during.passcodeSet && during.biometryEnrolled)
        // The domain state can't be read while locked out: the last one of this launch stands.
        #expect(during.biometryStateHash == before)
    }

    @Test("a launch that starts locked out reports no domain state, not another one")
    func lockoutAtLaunch() throws {
        let (device, _) = try device { $0.canEvaluate[Self.biometrics] = .biometryLockout }
        let state = device.state()
        #expect(state.biometryLockedOut && state.biometryEnrolled && state.biometryStateHash == nil)
    }

    @Test("iOS 18 reports domainState.biometry.stateHash, older versions evaluatedPolicyDomainState")
    func domainState() throws {
        let (ios18, _) = try device { $0.major = 18 }
        #expect(ios18.state().platform == .iOS(major: 18))
        #expect(ios18.state().biometryStateHash == "18ab01")
        let (ios17, _) = try device { $0.major = 17 }
        #expect(ios17.state().platform == .iOS(major: 17))
        #expect(ios17.state().biometryStateHash == "ab01")
    }

    @Test("locked while protected data is unavailable; unlocked since boot once it was available")
    func lockState() throws {
        let (device, platform) = try device { $0.protectedData = false }
        #expect(device.state().isLocked && !device.state().unlockedSinceBoot)
        platform.change { $0.protectedData = true }
        #expect(!device.state().isLocked && device.state().unlockedSinceBoot)
        platform.change { $0.protectedData = false }
        #expect(device.state().isLocked && device.state().unlockedSinceBoot)
        #expect(!device.state().hasStrongBox)
    }

    @Test("the clocks pass through; the session changes when the app goes to the background")
    func clocksAndSession() throws {
        let (device, platform) = try device()
        let first = device.state()
        #expect(first.now == Date(timeIntervalSince1970: 1_767_225_600) && first.uptime == 100)
        #expect(device.state().session == first.session)
        platform.change {
            $0.background += 1
            $0.uptime = 160
        }
        #expect(device.state().session != first.session && device.state().uptime == 160)
        let (relaunched, _) = try self.device()
        #expect(relaunched.state().session != first.session)
    }

    @Test("the usage description and ApexKeychainClearOnReinstall from the Info.plist")
    func infoPlist() throws {
        #expect(try device().0.hasFaceIDUsageDescription)
        #expect(try !device { $0.info = ["NSFaceIDUsageDescription": .bool(true)] }.0.hasFaceIDUsageDescription)
        #expect(try !device().0.clearOnReinstall)
        let values: [(InfoPlistValue, Bool)] = [
            (.bool(true), true), (.bool(false), false), (.string("YES"), true), (.string("true"), true),
            (.string("no"), false), (.other, false),
        ]
        for (value, on) in values {
            #expect(try device { $0.info["ApexKeychainClearOnReinstall"] = value }.0.clearOnReinstall == on)
        }
    }

    @Test("the app's groups: the first is the default, the bundle identifier the service")
    func accessGroups() throws {
        let (device, _) = try device()
        #expect(device.defaultAccessGroup == "ABCDE12345.com.example.app")
        #expect(device.defaultService == "com.example.app")
        #expect(device.isEntitled(toAccessGroup: "ABCDE12345.shared"))
        #expect(!device.isEntitled(toAccessGroup: "ABCDE12345.other"))
        #expect(!device.isEntitled(toAccessGroup: "abcde12345.shared"))
        #expect(throws: KeychainError.self) { try self.device { $0.accessGroups = [] } }
        #expect(throws: KeychainError.self) { try self.device { $0.bundleIdentifier = nil } }
    }

    @Test("the install marker: don't know before the first unlock, readable after")
    func installMarker() throws {
        let (device, platform) = try device { $0.protectedData = false }
        #expect(
            throws: KeychainError(
                .INTERACTION_NOT_ALLOWED, "the install marker can't be read before the device is unlocked")
        ) {
            _ = try device.hasInstallMarker()
        }
        #expect(throws: KeychainError.self) { try device.setInstallMarker() }
        #expect(platform.script.withLock { $0.defaults.isEmpty })
        platform.change { $0.protectedData = true }
        #expect(try !device.hasInstallMarker())
        try device.setInstallMarker()
        #expect(try device.hasInstallMarker())
        // Locked again after the first unlock: the marker reads, and it proves the first unlock to a new launch.
        platform.change { $0.protectedData = false }
        let (relaunched, _) = try self.device {
            $0.protectedData = false
            $0.defaults = platform.script.withLock { $0.defaults }
        }
        #expect(!relaunched.state().unlockedSinceBoot)
        #expect(try relaunched.hasInstallMarker())
        #expect(relaunched.state().unlockedSinceBoot)
    }
}
