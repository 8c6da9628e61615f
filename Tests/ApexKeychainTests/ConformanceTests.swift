import ApexKeychain
import ApexTestSupport
import Foundation
import Synchronization
import Testing

/// A ``Device`` that forwards to a ``SimulatedDevice`` but keeps every prompt on screen, waiting for the user,
/// until ``release()``.
private final class WaitingUserDevice: Device {
    let inner: SimulatedDevice
    private let log = Mutex((held: true, started: 0))

    init(_ inner: SimulatedDevice) { self.inner = inner }

    var defaultService: String { inner.defaultService }
    var defaultAccessGroup: String { inner.defaultAccessGroup }
    /// How many prompts have come on screen.
    var started: Int { log.withLock { $0.started } }

    func state() -> DeviceState { inner.state() }

    func authenticate(_ request: AuthenticationRequest) async -> AuthenticationResult {
        await waitForTheUser()
        return await inner.authenticate(request)
    }

    /// As the inner device's, so the context its prompt leaves reaches the read, as a device's does.
    func evaluate(_ request: AuthenticationRequest) async -> Authentication {
        await waitForTheUser()
        return await inner.evaluate(request)
    }

    private func waitForTheUser() async {
        log.withLock { $0.started += 1 }
        while log.withLock({ $0.held }) { try? await Task.sleep(for: .milliseconds(1)) }
    }

    func release() { log.withLock { $0.held = false } }
    func hasInstallMarker() throws -> Bool { try inner.hasInstallMarker() }
    func setInstallMarker() throws { try inner.setInstallMarker() }
}

/// Set once a task has run to its end.
private final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Expects `error` to have `code` and a message that names `fragment` (which tells apart failures that share a
/// code).
func expectError(
    _ error: KeychainError?, _ code: KeychainErrorCode, naming fragment: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
    #expect(error?.message.contains(fragment) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
}

/// The rules of the package's documentation (pages 000 iOS, 001 Storage model, 003 Protection, 004 Options) that
/// no feature's tests proved, and the order of a write's errors (choice C1). Each test quotes its sentence and
/// names its page; docs/CONFORMANCE.md maps every rule to its test. Page 000's tests are here, the others' in an
/// extension each: `ConformanceTests+StorageModel.swift` (001), `ConformanceTests+Protection.swift` (003),
/// `ConformanceTests+Options.swift` (004) and `ConformanceTests+ErrorOrder.swift` (C1).
@Suite("Conformance")
struct ConformanceTests {
    // MARK: 000 iOS

    /// 000: "The same path takes over when the old item is locked away (errSecInteractionNotAllowed)." — the
    /// staged path of a write with access control, for a write without it. In-memory database only: no other
    /// database here locks an item away, and ``InMemoryKeychainDatabase/setLockedAway(_:_:)`` stands for it.
    @Test(
        "000 a write over a locked-away item takes the staged path: add under a temporary key, delete, add under the key, delete the temporary one"
    )
    func lockedAwayItemIsReplacedThroughStaging() async throws {
        let db = InMemoryKeychainDatabase()
        let device = SimulatedDevice()
        let keychain = try Keychain(KeychainOptions(service: "svc.locked"), database: db, device: device)
        try await keychain.setItem("k", "old", SetOptions(accessible: .whenUnlocked, label: "old"))
        let created = try #require(try await keychain.getItemInfo("k")).createdAt
        device.lock()
        db.setLockedAway(try #require(db.allItems().first).attributes.primaryKey)
        device.advanceClock(by: 60)

        let before = db.writeCount
        try await keychain.setItem("k", "new", SetOptions(accessible: .afterFirstUnlock, label: "new"))
        // The replace the database refused, then the staged path: add staged, delete the old item, add under the
        // key, delete staged.
        #expect(db.writeCount - before == 5)
        #expect(db.allItems().map(\.attributes.account) == ["k"])
        #expect(try await keychain.getItem("k") == "new")
        let info = try #require(try await keychain.getItemInfo("k"))
        #expect(info.label == "new")
        #expect(info.accessible == .afterFirstUnlock)
        #expect(info.createdAt == created)
        #expect(info.modifiedAt == created + 60_000)
        #expect(device.promptCount == 0)
    }

    /// 000: "A write is atomic: if the new value can't be stored, the old one stays" — on the path of 000's "The
    /// same path takes over when the old item is locked away", interrupted at each of its writes.
    @Test(
        "000 a locked-away item's staged replacement, interrupted at write N, leaves the old item and fails (N=1, 2) or leaves the new one and succeeds (N=3, 4)",
        arguments: 1...4)
    func lockedAwayStagedWriteIsAtomic(n: Int) async throws {
        // A device's keychain: its calls can't be grouped, so the staged path's own order is what keeps it atomic.
        let db = InMemoryKeychainDatabase(groupsWrites: false)
        let device = SimulatedDevice()
        let keychain = try Keychain(database: db, device: device)
        try await keychain.setItem("k", "old", SetOptions(accessible: .whenUnlocked))
        let old = try #require(db.allItems().first).attributes.primaryKey
        device.lock()
        db.setLockedAway(old)
        db.failWrite(number: n + 1)  // write 1 is the refused replace
        // Once the old item went (N=3, 4), the write has happened: the caller is told no failure.
        #expect(await errorCode { try await keychain.setItem("k", "new") } == (n <= 2 ? .INTERNAL : nil))
        #expect(try await keychain.getAllKeys() == ["k"])

        device.unlock()
        db.setLockedAway(old, false)
        #expect(try await keychain.getItem("k") == (n >= 3 ? "new" : "old"))
        #expect(db.allItems().filter { $0.attributes.account == "k" }.count == 1)
        try await keychain.setItem("k", "newer")
        #expect(db.allItems().map(\.attributes.account) == ["k"])
        #expect(try await keychain.getItem("k") == "newer")
    }

    /// 000: "Prompts come one at a time, in the order the reads asked, on a queue of their own: the module's queue
    /// never waits for a user."
    @Test("000 a prompt waiting for the user holds up no call that needs no prompt", arguments: DatabaseKind.allCases)
    func promptWaitingForTheUserBlocksNothingElse(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let device = WaitingUserDevice(f.device)
        let keychain = try Keychain(KeychainOptions(service: "svc.queue"), database: f.database, device: device)
        let other = try Keychain(KeychainOptions(service: "svc.other"), database: f.database, device: device)
        try await keychain.setItem("guarded", "secret", SetOptions(accessControl: .biometryAny, label: "g"))
        try await keychain.setItem("plain", "p")

        let read = Task { try await keychain.getItem("guarded") }
        #expect(await eventually { device.started == 1 }, "the read's prompt is on screen")

        let finished = Flag()
        let calls = Task {
            #expect(try await keychain.hasItem("guarded"))
            #expect(try await keychain.getItemInfo("guarded")?.label == "g")
            #expect(try await keychain.getItem("plain") == "p")
            try await keychain.setItem("written", "v")
            try await keychain.setItem("written-guarded", "v", SetOptions(accessControl: .passcode))
            try await other.setBytes("bytes", Data([1, 2]))
            #expect(try await keychain.getAllKeys() == ["guarded", "plain", "written", "written-guarded"])
            try await keychain.removeItem("written")
            #expect(try await canUseAccessControl(.biometryAny, device: device).available)
            finished.set()
        }
        #expect(await eventually { finished.isSet }, "the other calls finish while the prompt waits for the user")
        // The read is still waiting: its prompt has not reached the simulated user.
        #expect(f.device.promptCount == 0)

        device.release()
        try await calls.value
        #expect(try await read.value == "secret")
        #expect(f.device.promptCount == 1)
    }

    /// 000 (following from "the next call checks again" and "The marker is set without the key too"): without
    /// the setting, a marker that can't be read or written fails a write (issue 28: a later update that turns the
    /// setting on would take the item for a new install's) and lets a call that writes nothing go on; the next
    /// call checks again (C4).
    @Test(
        "000 without clearOnReinstall, a marker that can't be recorded fails writes only, and is tried again on the next call",
        arguments: DatabaseKind.allCases, [SimulatedDevice.InstallMarkerFailure.reading, .writing])
    func markerFailureWithoutTheSettingIsRetried(
        kind: DatabaseKind, failure: SimulatedDevice.InstallMarkerFailure
    ) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(clearOnReinstall: false))
        f.device.failInstallMarker(failure)
        let keychain = try f.keychain()
        expectError(await thrown { try await keychain.setItem("token", "v") }, .INTERNAL, naming: "install marker")
        #expect(try await keychain.getItem("token") == nil)
        #expect(!f.device.installMarkerExists)

        // The same session: no relaunch. The next call finds the marker store working and sets the marker.
        f.device.failInstallMarker(nil)
        #expect(try await keychain.hasItem("token") == false)
        #expect(f.device.installMarkerExists)
        try await keychain.setItem("token", "v")
        #expect(try f.allItems().count == 1)
    }
}
