import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// Seed 000 "Prompts": "The prompt evaluates the item's own access control …, then the read hands that context
/// to the Keychain, so the user sees one prompt, not two", and with authValidity > 0 "the LAContext that passed is
/// kept per service and accessControl for that many seconds and handed to the next reads; it is dropped when the
/// app goes to the background". A device that leaves a distinct context per prompt and a database that records
/// what each value read was given show which context reaches which read.
@Suite("Authentication contexts")
struct AuthenticationContextTests {
    struct Rig {
        let simulated = SimulatedDevice()
        let device: RecordingDevice
        let database: RecordingDatabase
        let keychain: Keychain

        init(_ options: KeychainOptions = KeychainOptions(service: "svc.context"), deviceRules: Bool = true) throws {
            device = RecordingDevice(simulated)
            database = RecordingDatabase(InMemoryKeychainDatabase(), deviceRules: deviceRules)
            keychain = try Keychain(options, database: database, device: device)
        }

        /// The value reads recorded so far, as (account, context number).
        var valueReads: [DatabaseCall] { database.calls.filter(\.readsValue) }
    }

    @Test(
        "the context of the read's prompt reaches the database's read of the value, and the request names the item's access control and class"
    )
    func promptContextReachesTheRead() async throws {
        let rig = try Rig()
        for (index, accessControl) in AccessControl.allCases.enumerated() where accessControl != .none {
            try await rig.keychain.setItem(
                "k\(index)", "v\(index)",
                SetOptions(accessible: .whenUnlockedThisDeviceOnly, accessControl: accessControl))
            rig.database.resetCalls()
            #expect(try await rig.keychain.getItem("k\(index)") == "v\(index)")
            let number = rig.device.contextsGiven
            #expect(rig.valueReads == [.value("k\(index)", context: number)], "\(accessControl)")
            let request = try #require(rig.simulated.prompts.last)
            #expect(request.accessControl == accessControl)
            #expect(request.accessible == .whenUnlockedThisDeviceOnly)
            #expect(request.key == "k\(index)")
        }
        #expect(rig.simulated.promptCount == 5)
    }

    @Test(
        "getItem, getBytes and getCredentials of a protected item each hand the database the context of their own prompt"
    )
    func everyProtectedReadCarriesItsContext() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("a", "1", SetOptions(accessControl: .biometryAny))
        try await rig.keychain.setBytes("b", Data([1, 2]), SetOptions(accessControl: .passcode))
        try await rig.keychain.setCredentials(
            Credentials(username: "u", password: "p"), CredentialsOptions(accessControl: .biometryCurrentSet))
        rig.database.resetCalls()
        #expect(try await rig.keychain.getItem("a") == "1")
        #expect(try await rig.keychain.getBytes("b") == Data([1, 2]))
        #expect(try await rig.keychain.getCredentials()?.password == "p")
        #expect(
            rig.valueReads == [.value("a", context: 1), .value("b", context: 2), .value("credentials", context: 3)])
    }

    @Test("an item without access control is read without a prompt and without a context")
    func unprotectedReadHasNoContext() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("plain", "v")
        rig.database.resetCalls()
        #expect(try await rig.keychain.getItem("plain") == "v")
        #expect(rig.valueReads == [.value("plain", context: nil)])
        #expect(rig.simulated.promptCount == 0)
    }

    @Test("an open authValidity window hands its prompt's context to the next reads, without a prompt")
    func windowReusesItsContext() async throws {
        let rig = try Rig()
        let protected = SetOptions(accessControl: .biometryAnyOrPasscode, authValidity: 60)
        try await rig.keychain.setItem("a", "1", protected)
        try await rig.keychain.setItem("b", "2", protected)
        rig.database.resetCalls()
        #expect(try await rig.keychain.getItem("a") == "1")
        rig.simulated.advanceClock(by: 30)
        #expect(try await rig.keychain.getItem("b") == "2")
        #expect(try await rig.keychain.getItem("a") == "1")
        #expect(rig.simulated.promptCount == 1)
        #expect(rig.valueReads == [.value("a", context: 1), .value("b", context: 1), .value("a", context: 1)])
    }

    @Test("a new session, or a window that closed, prompts again and hands the new prompt's context")
    func newPromptNewContext() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("a", "1", SetOptions(accessControl: .biometryAny, authValidity: 10))
        rig.database.resetCalls()
        _ = try await rig.keychain.getItem("a")
        rig.simulated.goToBackground()
        _ = try await rig.keychain.getItem("a")
        _ = try await rig.keychain.getItem("a")
        rig.simulated.advanceClock(by: 10)
        _ = try await rig.keychain.getItem("a")
        rig.simulated.relaunch()
        _ = try await rig.keychain.getItem("a")
        #expect(rig.simulated.promptCount == 4)
        #expect(
            rig.valueReads == [
                .value("a", context: 1), .value("a", context: 2), .value("a", context: 2), .value("a", context: 3),
                .value("a", context: 4),
            ])
    }

    @Test("a read with authValidity 0 prompts every time and keeps no context")
    func zeroValidityKeepsNothing() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("a", "1", SetOptions(accessControl: .passcode))
        rig.database.resetCalls()
        _ = try await rig.keychain.getItem("a")
        _ = try await rig.keychain.getItem("a")
        #expect(rig.valueReads == [.value("a", context: 1), .value("a", context: 2)])
        #expect(!rig.device.isAlive(1))
        #expect(!rig.device.isAlive(2))
    }

    @Test(
        "a window's context is dropped at the background transition itself, before any read; the next read prompts",
        arguments: DatabaseKind.allCases)
    func windowContextDroppedWithTheSession(kind: DatabaseKind) async throws {
        let fixture = try Fixture(kind)
        let device = RecordingDevice(fixture.device)
        let keychain = try Keychain(KeychainOptions(service: "svc.context"), database: fixture.database, device: device)
        try await keychain.setItem("a", "1", SetOptions(accessControl: .biometryAny, authValidity: 600))
        _ = try await keychain.getItem("a")
        #expect(device.isAlive(1), "kept for the window")
        fixture.device.goToBackground()
        // The emulated keychain's call log keeps the queries it was given, contexts and all; a phone's keeps none.
        fixture.emulator?.resetCalls()
        #expect(!device.isAlive(1), "no evaluated context outlives the session in memory")
        #expect(try await keychain.getItem("a") == "1")
        #expect(fixture.device.promptCount == 2)
        #expect(device.isAlive(2))
    }

    /// How the keychain refuses a read with a context: `errSecAuthFailed`, or `errSecInteractionNotAllowed` (the
    /// context, invalidated, can't pass without the user), and the error the read reports for it.
    static let refusals: [(KeychainDatabaseError.Status, KeychainErrorCode)] = [
        (.authFailed, .AUTHENTICATION_FAILED), (.interactionNotAllowed, .INTERACTION_NOT_ALLOWED),
    ]

    @Test(
        "a context the keychain refuses leaves its window at once: the read fails, and the next one prompts",
        arguments: DatabaseKind.allCases, refusals)
    func refusedContextLeavesTheWindow(
        kind: DatabaseKind, refusal: (status: KeychainDatabaseError.Status, code: KeychainErrorCode)
    ) async throws {
        let fixture = try Fixture(kind)
        let device = RecordingDevice(fixture.device)
        let database = RecordingDatabase(fixture.database)
        let keychain = try Keychain(KeychainOptions(service: "svc.context"), database: database, device: device)
        try await keychain.setItem("a", "1", SetOptions(accessControl: .biometryAnyOrPasscode, authValidity: 600))
        try await keychain.setItem("b", "2", SetOptions(accessControl: .biometryAnyOrPasscode, authValidity: 600))
        #expect(try await keychain.getItem("a") == "1")
        // From now on the keychain refuses the window's context (invalidated, say).
        let status = refusal.status
        database.fail { call in
            guard case .value(_, context: 1) = call else { return nil }
            return KeychainDatabaseError(status, "the context was refused")
        }
        #expect(await errorCode { _ = try await keychain.getItem("b") } == refusal.code)
        fixture.emulator?.resetCalls()  // its call log keeps the contexts it was given
        #expect(!device.isAlive(1), "dropped from the window at once")
        #expect(try await keychain.getItem("b") == "2")
        #expect(try await keychain.getItem("a") == "1")
        #expect(fixture.device.promptCount == 2, "one new prompt, whose window opens the next read")
        #expect(
            database.calls.filter(\.readsValue).suffix(3) == [
                .value("b", context: 1), .value("b", context: 2), .value("a", context: 2),
            ])
    }

    @Test("a window that closed lets its context go at the next read that finds it closed")
    func closedWindowDropsItsContext() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("a", "1", SetOptions(accessControl: .biometryAny, authValidity: 5))
        try await rig.keychain.setItem("plain", "v")
        _ = try await rig.keychain.getItem("a")
        #expect(rig.device.isAlive(1))
        rig.simulated.advanceClock(by: 5)
        try await rig.keychain.setItem("a", "2", SetOptions(accessControl: .biometryAny, authValidity: 5))
        _ = try await rig.keychain.getItem("a")
        #expect(!rig.device.isAlive(1))
        #expect(rig.device.isAlive(2))
    }

    @Test("hasItem, getItemInfo, getAllKeys, keyStates and clear never read a value, so never pass a context")
    func readsThatNeverPromptPassNoContext() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("a", "1", SetOptions(accessControl: .biometryAny, authValidity: 60))
        try await rig.keychain.setItem("plain", "v")
        _ = try await rig.keychain.getItem("a")  // a window is open: it must not reach these either
        rig.database.resetCalls()
        #expect(try await rig.keychain.hasItem("a"))
        #expect(try await rig.keychain.getItemInfo("a")?.accessControl == .biometryAny)
        #expect(try await rig.keychain.getAllKeys() == ["a", "plain"])
        _ = try await rig.keychain.keyStates()
        #expect(try await rig.keychain.keyState("plain") != .absent)
        try await rig.keychain.clear()
        #expect(rig.valueReads.isEmpty, "\(rig.database.calls)")
        #expect(rig.simulated.promptCount == 1)
    }

    @Test("on a device's keychain a read back after a write with access control describes the item and reads no value")
    func readBackOfAProtectedItemReadsNoValue() throws {
        let rig = try Rig()
        let options = SetOptions(accessControl: .biometryAny, label: "l")
        try rig.keychain.setBytesSynchronously("a", Data([7]), options)
        rig.database.resetCalls()
        guard case .needsPrompt(let info) = try rig.keychain.readBack("a", writtenWith: options) else {
            Issue.record("an item with access control is read back as needing a prompt")
            return
        }
        #expect(info.label == "l")
        #expect(rig.valueReads.isEmpty, "\(rig.database.calls)")
    }

    @Test(
        "a read back expecting an item without access control finds one with it, written in between, without its value")
    func readBackFindsAProtectedItemInstead() throws {
        let rig = try Rig()
        try rig.keychain.setBytesSynchronously("a", Data([7]), SetOptions(accessControl: .passcode))
        guard case .needsPrompt(let info) = try rig.keychain.readBack("a", writtenWith: SetOptions()) else {
            Issue.record("the item there has access control: it needs a prompt")
            return
        }
        #expect(info.accessControl == .passcode)
    }
}
