import ApexKeychain
import ApexTestSupport
import Foundation
import Synchronization
import Testing

/// Protections that bind an item to the device passcode: every access control, and whenPasscodeSetThisDeviceOnly.
private let passcodeBound: [SetOptions] =
    AccessControl.allCases.filter { $0 != .none }.map { SetOptions(accessControl: $0) }
    + [SetOptions(accessible: .whenPasscodeSetThisDeviceOnly, accessControl: AccessControl.none)]

/// A ``SimulatedDevice`` whose enrolled set and biometric state hash are the test's to name.
private final class NamedEnrolmentDevice: Device {
    let inner = SimulatedDevice()
    let enrolment = Mutex<String>("")

    var defaultService: String { inner.defaultService }
    var defaultAccessGroup: String { inner.defaultAccessGroup }
    func state() -> DeviceState {
        var state = inner.state()
        let named = enrolment.withLock { $0 }
        (state.enrolledSet, state.biometryStateHash) = (named, named + "-hash")
        return state
    }
    func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        await inner.authenticate(request)
    }
    /// The inner device's, so the context its prompt leaves reaches the read, as a device's does.
    func evaluate(_ request: AuthenticationRequest) async -> Authentication { await inner.evaluate(request) }
    func hasInstallMarker() throws -> Bool { try inner.hasInstallMarker() }
    func setInstallMarker() throws { try inner.setInstallMarker() }
}

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
        "an enrolled set named by canonically equivalent but other bytes is another set: its items are kept apart and invalidated",
        arguments: DatabaseKind.allCases)
    func enrolledSetComparedByBytes(kind: DatabaseKind) async throws {
        let device = NamedEnrolmentDevice()
        let database = try Fixture(kind).database
        let kc = try Keychain(database: database, device: device)
        device.enrolment.withLock { $0 = "caf\u{E9}" }
        try await kc.setItem("first", "v", SetOptions(accessControl: .biometryCurrentSet))
        device.enrolment.withLock { $0 = "cafe\u{301}" }
        try await kc.setItem("second", "v", SetOptions(accessControl: .biometryCurrentSet))
        // Each item keeps the bytes of the set it was written under (the writes in a row share no metadata).
        func generic(_ account: String) throws -> String {
            let found = try database.attributes(matching: ItemQuery(account: account))
            return String(decoding: try #require(found.first?.generic), as: UTF8.self)
        }
        #expect(try generic("first").contains("bio=636166c3a9;"))
        #expect(try generic("second").contains("bio=63616665cc81;"))
        // Under the second set, the first item's set has changed: it is invalidated, and the second reads.
        #expect(await errorCode { _ = try await kc.getItem("first") } == .KEY_INVALIDATED)
        #expect(try await kc.getItem("second") == "v")
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
        if kind == .secItem, options.accessControl == AccessControl.none {
            // A keychain deletes a whenPasscodeSetThisDeviceOnly item itself when the passcode goes ("Disabling
            // the device passcode will cause all previously protected items to be deleted", `apple-secitem.md`
            // §2.10): the read finds nothing, which seed 000 allows ("The package doesn't depend on which status
            // the Keychain returns for an invalidated item").
            #expect(try await kc.getItem("k") == nil)
        } else {
            #expect(await errorCode { _ = try await kc.getItem("k") } == .KEY_INVALIDATED)
        }
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
