import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// The questions a migration asks before it writes: `keyState(_:)` key by key, `keyStates()` for a whole
/// service at once (which must answer exactly as the former), and `checkWrite` with either.
@Suite("Inspection")
struct InspectionTests {
    /// Keys that cover every state: absent, the package's (plain, access-controlled, labelled), another
    /// library's, both under one key, and two keys that are canonically equivalent but not byte-equal.
    static let keys = ["absent", "plain", "guarded", "labelled", "foreign", "shared", "caf\u{E9}", "cafe\u{301}"]

    func populate(_ f: Fixture) async throws -> Keychain {
        let keychain = try f.keychain(KeychainOptions(service: "svc"))
        try await keychain.setItem("plain", "v")
        try await keychain.setItem("guarded", "v", SetOptions(accessControl: .biometryAny))
        try await keychain.setItem("labelled", "v", SetOptions(label: "someone"))
        try await keychain.setItem("shared", "v")
        try await keychain.setItem("caf\u{E9}", "composed")
        try f.seedForeign(service: "svc", account: "foreign")
        try f.seedForeign(service: "svc", account: "shared", creator: 0x4F54_4852, synchronizable: true)
        try f.seedForeign(service: "svc", account: "cafe\u{301}")
        try f.seedForeign(service: "other", account: "plain")
        return keychain
    }

    @Test("keyStates answers as keyState does, key by key, byte for byte", arguments: DatabaseKind.allCases)
    func bulkMatchesSingle(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try await populate(f)
        let states = try await keychain.keyStates()
        for key in Self.keys {
            #expect(states.state(of: key) == (try await keychain.keyState(key)), "key \(key.debugDescription)")
        }
        #expect(states.state(of: "absent") == .absent)
        #expect(states.state(of: "foreign") == .foreign)
        #expect(states.state(of: "shared") == .foreign, "a key another library also holds is not writable")
        #expect(states.state(of: "cafe\u{301}") == .foreign)
        guard case .own(let info) = states.state(of: "caf\u{E9}") else {
            Issue.record("the composed key is the package's")
            return
        }
        #expect(info.key == "caf\u{E9}")
        guard case .own(let guarded) = states.state(of: "guarded") else {
            Issue.record("'guarded' is the package's")
            return
        }
        #expect(guarded.accessControl == .biometryAny)
        #expect(states.count == 7)
    }

    @Test("keyStates settles a write left half-done, as a read would")
    func bulkSettlesStaged() async throws {
        let rig = try AtomicWriteTests.Rig()
        try await AtomicWriteTests.leaveOnlyStaged(rig, key: "k")
        let states = try await rig.keychain.keyStates()
        guard case .own(let info) = states.state(of: "k") else {
            Issue.record("the staged write is adopted as the item, as getItemInfo adopts it")
            return
        }
        #expect(info.accessControl == .biometryAny)
        // An item with access control is never moved (that would change it): it stays, the key's item all the same.
        #expect(rig.stagedAccounts == ["k\u{0}staged"])
        #expect(states.state(of: "k\u{0}staged") == .absent)
    }

    @Test(
        "checkWrite with keyStates refuses a key another library holds, and passes a free one",
        arguments: DatabaseKind.allCases)
    func checkWriteWithStates(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try await populate(f)
        let states = try await keychain.keyStates()
        for key in ["foreign", "shared", "cafe\u{301}"] {
            #expect(
                await errorCode { try await keychain.checkWrite(key, SetOptions(), states: states) }
                    == .INVALID_ARGUMENT)
            #expect(await errorCode { try await keychain.checkWrite(key) } == .INVALID_ARGUMENT)
        }
        for key in ["absent", "plain", "caf\u{E9}"] {
            #expect(await errorCode { try await keychain.checkWrite(key, SetOptions(), states: states) } == nil)
        }
        let noBiometrics = try Fixture(kind, device: SimulatedDevice(biometry: nil))
        let other = try noBiometrics.keychain()
        let empty = try await other.keyStates()
        #expect(
            await errorCode {
                try await other.checkWrite("k", SetOptions(accessControl: .biometryAny), states: empty)
            } == .BIOMETRY_NOT_AVAILABLE)
    }
}
