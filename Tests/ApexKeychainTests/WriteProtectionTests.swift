import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// The access controls that need the biometric sensor itself (no passcode can stand in at write time).
private let biometryBound: [AccessControl] = [.biometryAny, .biometryCurrentSet, .biometryCurrentSetOrPasscode]
/// The access controls a passcode alone can satisfy.
private let passcodeEnough: [AccessControl] = [.biometryAnyOrPasscode, .passcode]
/// Every access control that involves the biometric sensor.
private let biometric = AccessControl.allCases.filter(\.usesBiometry)
/// Every access control but `none`.
private let protectedControls = AccessControl.allCases.filter { $0 != .none }

/// Protections that Android before API 30 can't give.
private let needsAPI30: [SetOptions] = [
    SetOptions(accessControl: .biometryAnyOrPasscode), SetOptions(accessControl: .biometryCurrentSetOrPasscode),
    SetOptions(accessControl: .passcode), SetOptions(accessControl: .biometryAny, authValidity: 10),
]

extension WriteProtectionTests {
    /// Device profiles that `canUseAccessControl` is checked against.
    enum Profile: String, CaseIterable, Sendable {
        case faceID, notEnrolled, noSensor, noPasscode, android29, android30, faceIDNoUsage, touchIDNoUsage, linux
        case linuxNoPasscode

        func device() -> SimulatedDevice {
            switch self {
            case .faceID: SimulatedDevice()
            case .notEnrolled: SimulatedDevice(biometricsEnrolled: false)
            case .noSensor: SimulatedDevice(biometry: nil)
            case .noPasscode: SimulatedDevice(passcodeSet: false)
            case .android29: SimulatedDevice(platform: .android(apiLevel: 29), biometry: .fingerprint)
            case .android30: SimulatedDevice(platform: .android(apiLevel: 30), biometry: .fingerprint)
            case .faceIDNoUsage: SimulatedDevice(hasFaceIDUsageDescription: false)
            case .touchIDNoUsage: SimulatedDevice(biometry: .touchID, hasFaceIDUsageDescription: false)
            case .linux: SimulatedDevice(platform: .linux)
            case .linuxNoPasscode: SimulatedDevice(platform: .linux, passcodeSet: false)
            }
        }
    }

    /// How a device can come to refuse a write after an item was stored under the key.
    enum Refusal: String, CaseIterable, Sendable {
        case biometricsRemoved, passcodeRemoved, deviceLocked

        /// Changes the device, and returns the write that is now refused and the code it is refused with.
        func apply(to device: SimulatedDevice) -> (SetOptions, KeychainErrorCode) {
            switch self {
            case .biometricsRemoved:
                device.removeBiometrics()
                return (SetOptions(accessControl: .biometryAny), .BIOMETRY_NOT_ENROLLED)
            case .passcodeRemoved:
                device.setPasscode(false)
                return (SetOptions(accessControl: .passcode), .PASSCODE_NOT_SET)
            case .deviceLocked:
                device.lock()
                return (SetOptions(accessible: .whenUnlocked), .INTERACTION_NOT_ALLOWED)
            }
        }
    }
}

/// The availability reason that matches the code a refused write threw.
private func reason(for code: KeychainErrorCode) -> AccessControlAvailability.Reason? {
    switch code {
    case .UNSUPPORTED: .unsupportedOS
    case .BIOMETRY_NOT_AVAILABLE: .noHardware
    case .PASSCODE_NOT_SET: .passcodeNotSet
    case .BIOMETRY_NOT_ENROLLED: .notEnrolled
    default: nil
    }
}

/// Write time, "never weaker": a write gets the protection it asks for or fails with the reason the device can't
/// give it, before anything is stored, without a prompt, and without touching the item already there.
@Suite("Write protection")
struct WriteProtectionTests {
    @Test(
        "with nothing enrolled, biometry-bound access controls fail with BIOMETRY_NOT_ENROLLED",
        arguments: DatabaseKind.allCases, biometryBound)
    func notEnrolled(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(biometricsEnrolled: false))
        let kc = try f.keychain()
        let code = await errorCode { try await kc.setItem("k", "v", SetOptions(accessControl: accessControl)) }
        #expect(code == .BIOMETRY_NOT_ENROLLED)
        #expect(try await kc.hasItem("k") == false)
        #expect(try f.allItems().isEmpty)
    }

    @Test(
        "with no sensor, biometry-bound access controls fail with BIOMETRY_NOT_AVAILABLE",
        arguments: DatabaseKind.allCases, biometryBound)
    func noSensor(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(biometry: nil))
        let kc = try f.keychain()
        let code = await errorCode { try await kc.setItem("k", "v", SetOptions(accessControl: accessControl)) }
        #expect(code == .BIOMETRY_NOT_AVAILABLE)
        #expect(try f.allItems().isEmpty)
    }

    @Test(
        "a passcode is enough for biometryAnyOrPasscode and passcode without usable biometrics",
        arguments: DatabaseKind.allCases, passcodeEnough)
    func passcodeIsEnough(kind: DatabaseKind, accessControl: AccessControl) async throws {
        for device in [SimulatedDevice(biometricsEnrolled: false), SimulatedDevice(biometry: nil)] {
            let f = try Fixture(kind, device: device)
            let kc = try f.keychain()
            try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
            #expect(try await kc.getItemInfo("k")?.accessControl == accessControl)
            #expect(try await kc.getItem("k") == "v")
        }
    }

    @Test(
        "with no passcode, every access control but none fails with PASSCODE_NOT_SET",
        arguments: DatabaseKind.allCases, AccessControl.allCases)
    func noPasscodeAccessControl(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(passcodeSet: false))
        let kc = try f.keychain()
        let code = await errorCode { try await kc.setItem("k", "v", SetOptions(accessControl: accessControl)) }
        #expect(code == (accessControl == .none ? nil : .PASSCODE_NOT_SET))
        #expect(try await kc.hasItem("k") == (accessControl == .none))
    }

    @Test(
        "with no passcode, whenPasscodeSetThisDeviceOnly fails with PASSCODE_NOT_SET and other classes work",
        arguments: DatabaseKind.allCases, Accessible.allCases)
    func noPasscodeAccessible(kind: DatabaseKind, accessible: Accessible) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(passcodeSet: false))
        let kc = try f.keychain()
        let options = SetOptions(accessible: accessible, accessControl: AccessControl.none)
        let code = await errorCode { try await kc.setItem("k", "v", options) }
        #expect(code == (accessible == .whenPasscodeSetThisDeviceOnly ? .PASSCODE_NOT_SET : nil))
        #expect(try await kc.hasItem("k") == (code == nil))
    }

    @Test(
        "Android before API 30 refuses passcode options and authValidity with UNSUPPORTED",
        arguments: DatabaseKind.allCases, needsAPI30)
    func androidBefore30(kind: DatabaseKind, options: SetOptions) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 29), biometry: .fingerprint))
        let kc = try f.keychain()
        #expect(await errorCode { try await kc.setItem("k", "v", options) } == .UNSUPPORTED)
        #expect(try f.allItems().isEmpty)
    }

    @Test("Android API 30 gives what API 29 refuses", arguments: DatabaseKind.allCases, needsAPI30)
    func android30(kind: DatabaseKind, options: SetOptions) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 30), biometry: .fingerprint))
        let kc = try f.keychain()
        try await kc.setItem("k", "v", options)
        #expect(try await kc.getItemInfo("k")?.accessControl == options.accessControl)
    }

    @Test("Android API 29 gives biometryAny without authValidity", arguments: DatabaseKind.allCases)
    func android29BiometryAny(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 29), biometry: .fingerprint))
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: .biometryAny, authValidity: 0))
        #expect(try await kc.getItemInfo("k")?.accessControl == .biometryAny)
    }

    @Test(
        "Face ID without a usage description refuses biometric access controls with MISSING_USAGE_DESCRIPTION",
        arguments: DatabaseKind.allCases, biometric)
    func faceIDWithoutUsageDescription(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(biometry: .faceID, hasFaceIDUsageDescription: false))
        let kc = try f.keychain()
        let code = await errorCode { try await kc.setItem("k", "v", SetOptions(accessControl: accessControl)) }
        #expect(code == .MISSING_USAGE_DESCRIPTION)
        #expect(try f.allItems().isEmpty)
    }

    @Test("Touch ID needs no Face ID usage description", arguments: DatabaseKind.allCases, biometric)
    func touchIDWithoutUsageDescription(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(biometry: .touchID, hasFaceIDUsageDescription: false))
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
        #expect(try await kc.getItemInfo("k")?.accessControl == accessControl)
    }

    @Test("accessControl passcode needs no Face ID usage description", arguments: DatabaseKind.allCases)
    func passcodeWithoutUsageDescription(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(biometry: .faceID, hasFaceIDUsageDescription: false))
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: .passcode))
        #expect(try await kc.getItemInfo("k")?.accessControl == .passcode)
    }

    @Test("strongboxRequired without StrongBox fails with HARDWARE_UNAVAILABLE", arguments: DatabaseKind.allCases)
    func strongboxRequiredMissing(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint))
        let kc = try f.keychain()
        let options = SetOptions(android: AndroidOptions(keyStorage: .strongboxRequired))
        #expect(await errorCode { try await kc.setItem("k", "v", options) } == .HARDWARE_UNAVAILABLE)
        #expect(try f.allItems().isEmpty)
    }

    @Test(
        "a StrongBox device keeps strongbox and strongboxRequired keys in StrongBox, tee keys in the TEE",
        arguments: DatabaseKind.allCases, [KeyStorage.strongboxRequired, .strongbox, .tee])
    func strongboxPresent(kind: DatabaseKind, storage: KeyStorage) async throws {
        let device = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint, hasStrongBox: true)
        let f = try Fixture(kind, device: device)
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(android: AndroidOptions(keyStorage: storage)))
        let expected: HardwareSecurityLevel = storage == .tee ? .tee : .strongbox
        #expect(try await kc.getItemInfo("k")?.android?.securityLevel == expected)
    }

    @Test("preferred strongbox without StrongBox falls back to the TEE", arguments: DatabaseKind.allCases)
    func strongboxFallsBack(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint))
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(android: AndroidOptions(keyStorage: .strongbox)))
        #expect(try await kc.getItemInfo("k")?.android?.securityLevel == .tee)
    }

    @Test("iOS ignores Android options", arguments: DatabaseKind.allCases)
    func iOSIgnoresAndroidOptions(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .iOS(major: 18)))
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(android: AndroidOptions(keyStorage: .strongboxRequired)))
        let info = try #require(try await kc.getItemInfo("k"))
        #expect(info.android == nil)
        #expect(try await kc.getItem("k") == "v")
    }

    @Test("a refused write leaves the old item as it was", arguments: DatabaseKind.allCases, Refusal.allCases)
    func refusedWriteKeepsOldItem(kind: DatabaseKind, refusal: Refusal) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "old", SetOptions(accessControl: AccessControl.none, label: "old label"))
        let before = try #require(try await kc.getItemInfo("k"))
        f.device.advanceClock(by: 60)
        let (options, expected) = refusal.apply(to: f.device)
        #expect(await errorCode { try await kc.setItem("k", "new", options) } == expected)
        f.device.unlock()
        #expect(try await kc.getItem("k") == "old")
        #expect(try await kc.getItemInfo("k") == before)
        #expect(try f.allItems().count == 1)
    }

    @Test("writes never prompt, whatever the access control", arguments: DatabaseKind.allCases)
    func writesNeverPrompt(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        for accessControl in AccessControl.allCases {
            let options = SetOptions(accessControl: accessControl)
            for _ in 0..<2 {  // a first write, then a replacement
                try await kc.setItem("s-\(accessControl.rawValue)", "v", options)
                try await kc.setBytes("b-\(accessControl.rawValue)", Data([1, 2]), options)
                try await kc.setCredentials(
                    Credentials(username: "u", password: "p"),
                    CredentialsOptions(server: accessControl.rawValue, accessControl: accessControl))
            }
            #expect(try await kc.getItemInfo("s-\(accessControl.rawValue)")?.accessControl == accessControl)
        }
        #expect(try await kc.getAllKeys().count == 3 * AccessControl.allCases.count)
        #expect(f.device.promptCount == 0)
    }

    @Test(
        "Linux refuses biometry-bound access controls with BIOMETRY_NOT_AVAILABLE",
        arguments: DatabaseKind.allCases, biometryBound)
    func linuxBiometry(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .linux))
        let kc = try f.keychain()
        let code = await errorCode { try await kc.setItem("k", "v", SetOptions(accessControl: accessControl)) }
        #expect(code == .BIOMETRY_NOT_AVAILABLE)
        #expect(try f.allItems().isEmpty)
    }

    @Test("Linux gives passcode options only when a passcode is set", arguments: DatabaseKind.allCases, passcodeEnough)
    func linuxPasscode(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let options = SetOptions(accessControl: accessControl)
        let with = try Fixture(kind, device: SimulatedDevice(platform: .linux, passcodeSet: true))
        try await with.keychain().setItem("k", "v", options)
        #expect(try await with.keychain().getItemInfo("k")?.accessControl == accessControl)
        let without = try Fixture(kind, device: SimulatedDevice(platform: .linux, passcodeSet: false))
        #expect(await errorCode { try await without.keychain().setItem("k", "v", options) } == .PASSCODE_NOT_SET)
        #expect(try without.allItems().isEmpty)
    }

    @Test(
        "canUseAccessControl answers what a write would get, without prompting",
        arguments: DatabaseKind.allCases, Profile.allCases)
    func canUseMatchesWrites(kind: DatabaseKind, profile: Profile) async throws {
        let f = try Fixture(kind, device: profile.device())
        let kc = try f.keychain()
        for accessControl in AccessControl.allCases {
            var answer: AccessControlAvailability?
            let thrown = await errorCode { answer = try await canUseAccessControl(accessControl, device: f.device) }
            let code = await errorCode {
                try await kc.setItem(accessControl.rawValue, "v", SetOptions(accessControl: accessControl))
            }
            let written = "\(accessControl) on \(profile): the write gave \(String(describing: code))"
            if let thrown {
                // An error of the app rather than a reason of the device: both fail the same way.
                #expect(thrown == .MISSING_USAGE_DESCRIPTION && code == thrown, "\(written)")
                continue
            }
            #expect(answer?.available == (code == nil), "\(written)")
            #expect(answer?.reason == code.flatMap(reason(for:)), "\(accessControl) on \(profile)")
            if let code { #expect(reason(for: code) != nil, "\(accessControl) on \(profile): unexpected \(code)") }
        }
        #expect(f.device.promptCount == 0)
    }

    @Test("a temporary biometric lockout leaves every access control available", arguments: DatabaseKind.allCases)
    func lockoutStillAvailable(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        f.device.setBiometryLockedOut(true)
        let kc = try f.keychain()
        for accessControl in AccessControl.allCases {
            let answer = try await canUseAccessControl(accessControl, device: f.device)
            #expect(answer == AccessControlAvailability(available: true))
            try await kc.setItem(accessControl.rawValue, "v", SetOptions(accessControl: accessControl))
        }
        #expect(f.device.promptCount == 0)
    }

    @Test("getBiometryTypes lists the sensor whether or not anything is enrolled")
    func biometryTypes() async {
        #expect(await getBiometryTypes(device: SimulatedDevice()) == [.faceID])
        #expect(await getBiometryTypes(device: SimulatedDevice(biometricsEnrolled: false)) == [.faceID])
        #expect(await getBiometryTypes(device: SimulatedDevice(biometry: .touchID, passcodeSet: false)) == [.touchID])
        #expect(await getBiometryTypes(device: SimulatedDevice(biometry: nil)) == [])
        let android = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint)
        android.removeBiometrics()
        #expect(await getBiometryTypes(device: android) == [.fingerprint])
        #expect(await getBiometryTypes(device: SimulatedDevice(platform: .linux)) == [])
    }

    @Test("getHardwareSecurityLevel: StrongBox or TEE on Android, TEE on iOS, software on Linux")
    func hardwareSecurityLevel() async {
        let strongbox = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint, hasStrongBox: true)
        #expect(await getHardwareSecurityLevel(device: strongbox) == .strongbox)
        let tee = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint, hasStrongBox: false)
        #expect(await getHardwareSecurityLevel(device: tee) == .tee)
        #expect(await getHardwareSecurityLevel(device: SimulatedDevice(platform: .iOS(major: 18))) == .tee)
        #expect(await getHardwareSecurityLevel(device: SimulatedDevice(platform: .linux)) == .software)
    }
}
