import ApexKeychain
import Foundation
import Testing

/// The rule "atomic writes", proved by fault injection on ``InMemoryKeychainDatabase`` as a device's keychain
/// (`groupsWrites: false`: each call atomic on its own, none undone with another): every database write (add,
/// replace, rename, delete) of a keychain write can fail, and whichever fails, the key keeps its old item or gets
/// the new one, never neither and never both. Staged leftovers stay invisible and are settled.
@Suite("Atomic writes")
struct AtomicWriteTests {
    /// A keychain over an in-memory database built directly, so faults can be planted in it.
    struct Rig {
        let db = InMemoryKeychainDatabase(groupsWrites: false)
        let device: SimulatedDevice
        let keychain: Keychain

        init(device: SimulatedDevice = SimulatedDevice()) throws {
            self.device = device
            keychain = try Keychain(KeychainOptions(), database: db, device: device)
        }

        /// Accounts holding U+0000: staged items.
        var stagedAccounts: [String] { db.allItems().map(\.attributes.account).filter { $0.utf8.contains(0) } }

        /// Items under exactly `account`.
        func items(at account: String) -> [KeychainItem] { db.allItems().filter { $0.attributes.account == account } }
    }

    /// An overwrite: the old item's protection and label, and the new one's.
    enum Change: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case noneToBiometryAny, biometryAnyToPasscode, passcodeToNone, biometryAnyRelabelled

        var testDescription: String { rawValue }

        var old: SetOptions {
            switch self {
            case .noneToBiometryAny: SetOptions(accessControl: AccessControl.none, label: "old")
            case .biometryAnyToPasscode, .biometryAnyRelabelled: SetOptions(accessControl: .biometryAny, label: "old")
            case .passcodeToNone: SetOptions(accessControl: .passcode, label: "old")
            }
        }

        var new: SetOptions {
            switch self {
            case .noneToBiometryAny: SetOptions(accessControl: .biometryAny, label: "new")
            case .biometryAnyToPasscode: SetOptions(accessControl: .passcode, label: "new")
            case .passcodeToNone: SetOptions(accessControl: AccessControl.none, label: "new")
            case .biometryAnyRelabelled: SetOptions(accessControl: .biometryAny, label: "new")
            }
        }

        /// Database writes of the overwrite: a replace in place when neither item has access control, else add
        /// staged, delete the old item, add under the key, delete staged.
        var writes: Int { new.accessControl == AccessControl.none && old.accessControl == AccessControl.none ? 1 : 4 }
    }

    /// Writes "old" under `key`, then fails write 3 of a staged overwrite (the add under the key), leaving only the
    /// staged item: the write happened, and reports no error.
    static func leaveOnlyStaged(_ rig: Rig, key: String) async throws {
        try await rig.keychain.setItem(key, "old", SetOptions(label: "old"))
        rig.db.failWrite(number: 3)
        let code = await errorCode {
            try await rig.keychain.setItem(key, "new", SetOptions(accessControl: .biometryAny, label: "new"))
        }
        try #require(code == nil)
        try #require(rig.items(at: key).isEmpty)
    }

    // MARK: Write counts

    @Test("a write without access control over an existing item replaces it in place with one database write")
    func plainOverwriteReplaces() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old", SetOptions(label: "l"))
        let created = try #require(try await rig.keychain.getItemInfo("k")).createdAt
        rig.device.advanceClock(by: 60)
        let before = rig.db.writeCount
        try await rig.keychain.setItem("k", "new", SetOptions(accessible: .afterFirstUnlock))
        #expect(rig.db.writeCount - before == 1)
        #expect(rig.db.allItems().count == 1)
        #expect(try await rig.keychain.getItem("k") == "new")
        let info = try #require(try await rig.keychain.getItemInfo("k"))
        #expect(info.createdAt == created)
        #expect(info.modifiedAt == created + 60_000)
        #expect(info.accessible == .afterFirstUnlock)
        #expect(info.label == nil)
    }

    @Test("a write of a new key adds it with one database write, with or without access control")
    func newKeyAdds() async throws {
        let rig = try Rig()
        for (index, accessControl) in AccessControl.allCases.enumerated() {
            let before = rig.db.writeCount
            try await rig.keychain.setItem("k\(index)", "v", SetOptions(accessControl: accessControl))
            #expect(rig.db.writeCount - before == 1, "\(accessControl)")
            #expect(rig.items(at: "k\(index)").count == 1)
        }
        #expect(rig.stagedAccounts.isEmpty)
    }

    @Test(
        "a write with access control over an existing item stages: add staged, delete the old item, add under the key, delete staged (four writes)"
    )
    func protectedOverwriteStages() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old")
        let before = rig.db.writeCount
        try await rig.keychain.setItem("k", "new", SetOptions(accessControl: .biometryAnyOrPasscode))
        #expect(rig.db.writeCount - before == 4)
        #expect(rig.db.allItems().map(\.attributes.account) == ["k"])
        #expect(rig.items(at: "k").first?.value == Data("new".utf8))
        #expect(rig.stagedAccounts.isEmpty)
    }

    // MARK: Faults

    @Test(
        "a fault at write N of a staged overwrite throws INTERNAL and leaves the old value (N=1, 2), or leaves the new one and throws nothing (N=3, 4)",
        arguments: 1...4)
    func faultInStagedOverwrite(n: Int) async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old", SetOptions(accessControl: .biometryAny, label: "old"))
        rig.db.failWrite(number: n)
        let code = await errorCode {
            try await rig.keychain.setItem("k", "new", SetOptions(accessControl: .passcode, label: "new"))
        }
        #expect(code == (n <= 2 ? .INTERNAL : nil))

        // What the fault left in the database.
        switch n {
        case 1:  // the staged add failed: nothing changed
            #expect(rig.stagedAccounts.isEmpty)
            #expect(rig.items(at: "k").first?.value == Data("old".utf8))
        case 2:  // the delete of the old item failed: both are there
            #expect(rig.stagedAccounts == ["k\u{0}staged"])
            #expect(rig.items(at: "k").first?.value == Data("old".utf8))
        case 3:  // the add under the key failed: only the staged item is left
            #expect(rig.stagedAccounts == ["k\u{0}staged"])
            #expect(rig.items(at: "k").isEmpty)
        default:  // the delete of the staged item failed: the new item and the staged one
            #expect(rig.stagedAccounts == ["k\u{0}staged"])
            #expect(rig.items(at: "k").first?.value == Data("new".utf8))
        }

        #expect(try await rig.keychain.getAllKeys() == ["k"])
        let expected = n >= 3 ? "new" : "old"
        #expect(try await rig.keychain.getItem("k") == expected)
        let info = try #require(try await rig.keychain.getItemInfo("k"))
        #expect(info.label == expected)
        #expect(info.accessControl == (n >= 3 ? .passcode : .biometryAny))
        #expect(try await rig.keychain.getAllKeys() == ["k"])

        // The next successful write settles any leftover.
        try await rig.keychain.setItem("k", "newer", SetOptions(accessControl: .biometryAnyOrPasscode))
        #expect(try await rig.keychain.getItem("k") == "newer")
        #expect(rig.stagedAccounts.isEmpty)
        #expect(rig.db.allItems().map(\.attributes.account) == ["k"])
    }

    @Test(
        "on a database that groups writes, a fault at the first two writes of a staged overwrite undoes it whole (the old item, no leftover); at the last two, the write is kept, as on a device",
        arguments: 1...4)
    func groupedStagedOverwriteIsUndoneWhole(n: Int) async throws {
        let db = InMemoryKeychainDatabase()
        let keychain = try Keychain(KeychainOptions(), database: db, device: SimulatedDevice())
        try await keychain.setItem("k", "old", SetOptions(accessControl: .biometryAny, label: "old"))
        let before = db.allItems()
        db.failWrite(number: n)
        let code = await errorCode {
            try await keychain.setItem("k", "new", SetOptions(accessControl: .passcode, label: "new"))
        }
        if n <= 2 {
            #expect(code == .INTERNAL)
            #expect(db.allItems() == before)
        } else {
            #expect(code == nil)
            #expect(try await keychain.getItem("k") == "new")
            #expect(try await keychain.getItemInfo("k")?.accessControl == .passcode)
        }
    }

    @Test(
        "removeItem interrupted between its two deletes never leaves a staged leftover alone to become the item",
        arguments: [false, true])
    func interruptedRemoveLeavesNoOrphan(groupsWrites: Bool) async throws {
        let db = InMemoryKeychainDatabase(groupsWrites: groupsWrites)
        let keychain = try Keychain(KeychainOptions(), database: db, device: SimulatedDevice())
        try await keychain.setItem("k", "old", SetOptions(accessControl: .biometryAny, label: "old"))
        // An abandoned staged write beside the item, as a write interrupted on a device leaves it.
        var staged = try #require(db.allItems().first)
        staged.attributes.account = "k\u{0}staged"
        staged.value = Data("abandoned".utf8)
        try db.add(staged)
        try #require(db.allItems().map(\.attributes.account) == ["k", "k\u{0}staged"])
        db.failWrite(number: 2)
        #expect(await errorCode { try await keychain.removeItem("k") } == .INTERNAL)
        // The item is still the old one: the abandoned value never becomes it.
        #expect(try await keychain.getItemInfo("k")?.label == "old")
        #expect(!db.allItems().contains { $0.value == Data("abandoned".utf8) && $0.attributes.account == "k" })
        try await keychain.removeItem("k")
        #expect(db.allItems().isEmpty)
    }

    @Test("a staged item beside the old one is an abandoned write: settling removes it and never adopts it")
    func abandonedStagedDiscarded() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old", SetOptions(accessControl: .biometryAny, label: "old"))
        rig.db.failWrite(number: 2)
        #expect(
            await errorCode { try await rig.keychain.setItem("k", "new", SetOptions(accessControl: .passcode)) }
                == .INTERNAL)
        try #require(rig.stagedAccounts == ["k\u{0}staged"])
        // The next write settles first (one write: the leftover goes), then fails at its own first write (the old
        // item has access control, so the write is staged).
        rig.db.failWrite(number: 2)
        #expect(await errorCode { try await rig.keychain.setItem("k", "newer") } == .INTERNAL)
        #expect(rig.stagedAccounts.isEmpty)
        #expect(try await rig.keychain.getItem("k") == "old")
        #expect(try await rig.keychain.getItemInfo("k")?.accessControl == .biometryAny)
    }

    @Test(
        "a fault at any write of an overwrite leaves exactly the old item or the new one",
        arguments: Change.allCases, 1...6)
    func faultSweep(change: Change, position: Int) async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old", change.old)
        let start = rig.db.writeCount
        rig.db.failWrite(number: position)
        let code = await errorCode { try await rig.keychain.setItem("k", "new", change.new) }
        // Spend a fault planted beyond the write's own writes, so the checks below don't meet it.
        while rig.db.writeCount < start + 6 { _ = try? rig.db.delete(matching: ItemQuery(service: "nothing here")) }

        // Only a fault before the old item went fails the write: the replace in place, or the first two of four.
        #expect(code == (position <= min(change.writes, 2) ? .INTERNAL : nil))
        #expect(try await rig.keychain.getAllKeys() == ["k"])
        let value = try await rig.keychain.getItem("k")
        let info = try #require(try await rig.keychain.getItemInfo("k"))
        switch value {
        case "old":
            #expect(code != nil, "the write succeeded but the old value is read")
            #expect(info.label == "old")
            #expect(info.accessControl == change.old.accessControl)
        case "new":
            #expect(code == nil, "the new value is read, yet the caller was told the write failed")
            #expect(info.label == "new")
            #expect(info.accessControl == change.new.accessControl)
        default:
            Issue.record("read \(String(describing: value)): neither the old value nor the new one")
        }
        // One item holds the key: under it, or alone under its staging account (one with access control stays
        // there until the next write).
        #expect(rig.items(at: "k").count == 1 || (rig.items(at: "k").isEmpty && rig.stagedAccounts == ["k\u{0}staged"]))
        #expect(try await rig.keychain.getAllKeys() == ["k"])
    }

    /// A way the device refuses a write.
    enum Refusal: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case passcodeNotSet, biometryNotEnrolled, locked

        var testDescription: String { rawValue }

        func apply(to device: SimulatedDevice) {
            switch self {
            case .passcodeNotSet: device.setPasscode(false)
            case .biometryNotEnrolled: device.removeBiometrics()
            case .locked: device.lock()
            }
        }

        var attempt: SetOptions {
            switch self {
            case .passcodeNotSet: SetOptions(accessControl: .passcode)
            case .biometryNotEnrolled: SetOptions(accessControl: .biometryAny)
            case .locked: SetOptions(accessible: .whenUnlocked)
            }
        }

        var code: KeychainErrorCode {
            switch self {
            case .passcodeNotSet: .PASSCODE_NOT_SET
            case .biometryNotEnrolled: .BIOMETRY_NOT_ENROLLED
            case .locked: .INTERACTION_NOT_ALLOWED
            }
        }
    }

    @Test("a write the device refuses performs no database write", arguments: Refusal.allCases)
    func refusedWriteTouchesNothing(refusal: Refusal) async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old")
        let items = rig.db.allItems()
        refusal.apply(to: rig.device)
        let before = rig.db.writeCount
        #expect(await errorCode { try await rig.keychain.setItem("k", "new", refusal.attempt) } == refusal.code)
        #expect(await errorCode { try await rig.keychain.setItem("fresh", "new", refusal.attempt) } == refusal.code)
        #expect(rig.db.writeCount == before)
        #expect(rig.db.allItems() == items)
    }

    // MARK: Staged leftovers

    @Test("getAllKeys never lists a staged account, and lists a key with a leftover once")
    func stagedNotListed() async throws {
        let rig = try Rig()
        // "a": the old item and an abandoned staged one (fault at the delete).
        try await rig.keychain.setItem("a", "old")
        rig.db.failWrite(number: 2)
        #expect(
            await errorCode { try await rig.keychain.setItem("a", "new", SetOptions(accessControl: .passcode)) }
                == .INTERNAL)
        // "b": only the staged item (fault at the rename).
        try await Self.leaveOnlyStaged(rig, key: "b")
        try await rig.keychain.setItem("c", "plain")
        #expect(Set(rig.stagedAccounts) == ["a\u{0}staged", "b\u{0}staged"])

        let keys = try await rig.keychain.getAllKeys()
        #expect(keys == ["a", "b", "c"])
        #expect(!keys.contains { $0.utf8.contains(0) })
    }

    @Test("hasItem finds a key whose only copy is staged")
    func hasItemFindsStaged() async throws {
        let rig = try Rig()
        try await Self.leaveOnlyStaged(rig, key: "k")
        #expect(try await rig.keychain.hasItem("k"))
        #expect(rig.device.promptCount == 0)
    }

    @Test("getItemInfo describes a key whose only copy is staged, as the new item")
    func itemInfoFindsStaged() async throws {
        let rig = try Rig()
        try await Self.leaveOnlyStaged(rig, key: "k")
        let info = try #require(try await rig.keychain.getItemInfo("k"))
        #expect(info.key == "k")
        #expect(info.label == "new")
        #expect(info.accessControl == .biometryAny)
        #expect(rig.device.promptCount == 0)
    }

    @Test("removeItem removes a key's staged leftover with it")
    func removeItemTakesStaged() async throws {
        let rig = try Rig()
        try await Self.leaveOnlyStaged(rig, key: "k")
        try await rig.keychain.removeItem("k")
        #expect(rig.db.allItems().isEmpty)
        #expect(try await rig.keychain.getItem("k") == nil)
    }

    @Test(
        "inside one batch (atomically) the rules hold write by write: never weaker, staged writes for access control, only own items; a refused write changes nothing and the batch goes on"
    )
    func rulesInsideABatch() async throws {
        let rig = try Rig(device: SimulatedDevice(biometricsEnrolled: false))
        let foreign = KeychainItem(
            attributes: ItemAttributes(
                service: rig.keychain.service, account: "theirs", accessGroup: rig.keychain.accessGroup, creator: nil),
            value: Data("foreign-secret".utf8))
        try rig.db.add(foreign)
        try await rig.keychain.setItem("guarded", "old", SetOptions(accessControl: .passcode))
        let seen = try #require(try await rig.keychain.getItemInfo("guarded"))
        var codes: [KeychainErrorCode?] = []
        var writes: [Int] = []
        try rig.db.atomically {
            // Never weaker: no biometrics enrolled, so no biometric item, and not a weaker one either.
            codes.append(
                Self.code {
                    _ = try rig.keychain.setItem(
                        "bio", "v", SetOptions(accessControl: .biometryAny), expecting: .absent)
                })
            // Only own items: another library's item under the key refuses the write.
            codes.append(Self.code { _ = try rig.keychain.setItem("theirs", "v", SetOptions(), expecting: .absent) })
            // Staged: an item with access control is added under the staging account, the old one removed, the
            // new one added under the key and the staged one removed (four writes); without, replaced in place (one).
            var before = rig.db.writeCount
            #expect(
                try rig.keychain.setItem("guarded", "new", SetOptions(accessControl: .passcode), expecting: .own(seen)))
            writes.append(rig.db.writeCount - before)
            before = rig.db.writeCount
            try rig.keychain.setBytesSynchronously("plain", Data("one".utf8), SetOptions())
            try rig.keychain.setBytesSynchronously("plain", Data("two".utf8), SetOptions())
            writes.append(rig.db.writeCount - before)
        }
        #expect(codes == [.BIOMETRY_NOT_ENROLLED, .INVALID_ARGUMENT])
        #expect(writes == [4, 2])
        #expect(rig.items(at: "bio").isEmpty)
        #expect(rig.items(at: "theirs") == [foreign])
        #expect(rig.stagedAccounts.isEmpty)
        #expect(try await rig.keychain.getItem("guarded") == "new")
        #expect(try await rig.keychain.getItemInfo("guarded")?.accessControl == .passcode)
        #expect(try await rig.keychain.getBytes("plain") == Data("two".utf8))
    }

    /// The code of the ``KeychainError`` `body` threw, or nil.
    static func code(_ body: () throws -> Void) -> KeychainErrorCode? {
        do {
            try body()
            return nil
        } catch {
            return (error as? KeychainError)?.code
        }
    }
}
