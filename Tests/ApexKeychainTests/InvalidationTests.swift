import ApexKeychain
import Foundation
import Testing

/// Protections that bind an item to the device passcode: every access control, and whenPasscodeSetThisDeviceOnly.
private let passcodeBound: [SetOptions] =
    AccessControl.allCases.filter { $0 != .none }.map { SetOptions(accessControl: $0) }
    + [SetOptions(accessible: .whenPasscodeSetThisDeviceOnly, accessControl: AccessControl.none)]

/// Items whose key is lost for good: a current-set item after the enrolled biometrics change (within one OS major
/// version), a passcode-bound item after the passcode is removed. The read fails with KEY_INVALIDATED without a
/// prompt, and the item is removed; every other item survives.
@Suite("Invalidation")
struct InvalidationTests {
    @Test(
        "changed biometrics invalidate and remove current-set items, without a prompt",
        arguments: DatabaseKind.allCases, [AccessControl.biometryCurrentSet, .biometryCurrentSetOrPasscode])
    func enrolmentChangeInvalidates(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
        try await kc.setItem("plain", "p")
        f.device.enrollBiometrics()
        #expect(await errorCode { _ = try await kc.getItem("k") } == .KEY_INVALIDATED)
        #expect(f.device.promptCount == 0)
        #expect(try await kc.hasItem("k") == false)
        #expect(try await kc.getItem("k") == nil)
        #expect(try await kc.getAllKeys() == ["plain"])
        #expect(try f.allItems().map(\.account) == ["plain"])
    }

    @Test(
        "current-set items read as usual while the enrolled biometrics stay the same",
        arguments: DatabaseKind.allCases, [AccessControl.biometryCurrentSet, .biometryCurrentSetOrPasscode])
    func sameEnrolmentReads(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
        f.device.advanceClock(by: 3600)
        #expect(try await kc.getItem("k") == "v")
        #expect(try await kc.getItem("k") == "v")
        #expect(f.device.promptCount == 2)
    }

    @Test(
        "biometryAny items survive a change of enrolled biometrics",
        arguments: DatabaseKind.allCases, [AccessControl.biometryAny, .biometryAnyOrPasscode])
    func biometryAnySurvives(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
        f.device.enrollBiometrics()
        #expect(try await kc.getItem("k") == "v")
        #expect(f.device.promptCount == 1)
        #expect(try await kc.hasItem("k"))
    }

    @Test(
        "after an OS major upgrade, current-set items still read, and a change of enrolment still invalidates them",
        arguments: DatabaseKind.allCases, [AccessControl.biometryCurrentSet, .biometryCurrentSetOrPasscode])
    func osUpgradeKeepsItemUntilEnrolment(kind: DatabaseKind, accessControl: AccessControl) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .iOS(major: 18)))
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessControl: accessControl))
        f.device.upgradeOS(to: .iOS(major: 19))
        #expect(try await kc.getItem("k") == "v")
        #expect(f.device.promptCount == 1)
        f.device.enrollBiometrics()
        #expect(await errorCode { _ = try await kc.getItem("k") } == .KEY_INVALIDATED)
        #expect(f.device.promptCount == 1)
        #expect(try await kc.hasItem("k") == false)
    }

    @Test(
        "a removed passcode invalidates and removes passcode-bound items, without a prompt",
        arguments: DatabaseKind.allCases, passcodeBound)
    func passcodeRemovalInvalidates(kind: DatabaseKind, options: SetOptions) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", options)
        try await kc.setItem("plain", "p", SetOptions(accessible: .afterFirstUnlock))
        f.device.setPasscode(false)
        #expect(await errorCode { _ = try await kc.getItem("k") } == .KEY_INVALIDATED)
        #expect(f.device.promptCount == 0)
        #expect(try await kc.hasItem("k") == false)
        #expect(try await kc.getItem("k") == nil)
        #expect(try f.allItems().map(\.account) == ["plain"])
    }

    @Test(
        "plain items survive a removed passcode",
        arguments: DatabaseKind.allCases, Accessible.allCases.filter { $0 != .whenPasscodeSetThisDeviceOnly })
    func plainItemsSurvivePasscodeRemoval(kind: DatabaseKind, accessible: Accessible) async throws {
        let f = try Fixture(kind, device: SimulatedDevice())
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessible: accessible, accessControl: AccessControl.none))
        f.device.setPasscode(false)
        #expect(try await kc.getItem("k") == "v")
        #expect(try await kc.getItemInfo("k")?.accessible == accessible)
        #expect(f.device.promptCount == 0)
    }
}
