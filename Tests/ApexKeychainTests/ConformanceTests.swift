import ApexKeychain
import Foundation
import Testing

/// The rules of the package's documentation (pages 000 iOS, 001 Storage model, 003 Protection, 004 Options) that
/// no feature's tests proved, and the order of a write's errors (choice C1). Each test quotes its sentence and
/// names its page; docs/CONFORMANCE.md maps every rule to its test.
@Suite("Conformance")
struct ConformanceTests {
    // MARK: 000 iOS

    /// 000: "The same path takes over when the old item is locked away (errSecInteractionNotAllowed)." — the
    /// staged path of a write with access control, for a write without it. In-memory database only: no other
    /// database here locks an item away, and ``InMemoryKeychainDatabase/setLockedAway(_:_:)`` stands for it.
    @Test("000 a write over a locked-away item takes the staged path: add under a temporary key, delete, move into place")
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
        // The replace the database refused, then the staged path: add, delete the old item, rename.
        #expect(db.writeCount - before == 4)
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
    @Test("000 a locked-away item's staged replacement, interrupted at write N, leaves the old item (N=1, 2) or the new one (N=3)",
          arguments: 1...3)
    func lockedAwayStagedWriteIsAtomic(n: Int) async throws {
        let db = InMemoryKeychainDatabase()
        let device = SimulatedDevice()
        let keychain = try Keychain(database: db, device: device)
        try await keychain.setItem("k", "old", SetOptions(accessible: .whenUnlocked))
        let old = try #require(db.allItems().first).attributes.primaryKey
        device.lock()
        db.setLockedAway(old)
        db.failWrite(number: n + 1)  // write 1 is the refused replace
        #expect(await errorCode { try await keychain.setItem("k", "new") } == .INTERNAL)
        #expect(try await keychain.getAllKeys() == ["k"])

        device.unlock()
        db.setLockedAway(old, false)
        #expect(try await keychain.getItem("k") == (n == 3 ? "new" : "old"))
        #expect(db.allItems().filter { $0.attributes.account == "k" }.count == 1)
        try await keychain.setItem("k", "newer")
        #expect(db.allItems().map(\.attributes.account) == ["k"])
        #expect(try await keychain.getItem("k") == "newer")
    }
}
