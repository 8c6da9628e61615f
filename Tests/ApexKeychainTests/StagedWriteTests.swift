import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// Seed 000 "Writes": "the new item is first added under a temporary key, which proves it can be stored; then the
/// old one goes, the new one is added under its key, and the temporary one goes. No step changes an item with
/// access control". A recording database shows the calls, and answers as a device's keychain answers for items
/// with access control (a value only with the context of a prompt of the item's own access control; an update of
/// one would need the user, and is recorded as an issue).
@Suite("Staged writes")
struct StagedWriteTests {
    struct Rig {
        let memory: InMemoryKeychainDatabase
        let database: RecordingDatabase
        let device = SimulatedDevice()
        let keychain: Keychain

        /// With `groupsWrites` false (the default), the in-memory database stands for a device's keychain.
        init(groupsWrites: Bool = false) throws {
            memory = InMemoryKeychainDatabase(groupsWrites: groupsWrites)
            database = RecordingDatabase(memory, deviceRules: true)
            keychain = try Keychain(KeychainOptions(service: "svc.staged"), database: database, device: device)
        }

        var accounts: [String] { memory.allItems().map(\.attributes.account) }

        /// Calls that change an item in place: the core makes them only for items without access control.
        var inPlaceChanges: [DatabaseCall] {
            database.calls.filter {
                switch $0 {
                case .replace, .rename: true
                default: false
                }
            }
        }
    }

    /// An overwrite of "k": the old item's protection, and the new one's.
    enum Change: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case noneToProtected, protectedToProtected, protectedToNone

        var testDescription: String { rawValue }

        var old: SetOptions {
            switch self {
            case .noneToProtected: SetOptions(accessControl: AccessControl.none, label: "old")
            case .protectedToProtected, .protectedToNone: SetOptions(accessControl: .biometryAny, label: "old")
            }
        }

        var new: SetOptions {
            switch self {
            case .noneToProtected, .protectedToProtected: SetOptions(accessControl: .passcode, label: "new")
            case .protectedToNone: SetOptions(accessControl: AccessControl.none, label: "new")
            }
        }
    }

    /// Leaves only the staged item of a write of "new" with `new` over "old" with `old`: the write stops at its
    /// third step (the add under the key), after the old item went, so it has happened and reports no error.
    static func leaveOnlyStaged(_ rig: Rig, old: SetOptions, new: SetOptions) async throws {
        try await rig.keychain.setItem("k", "old", old)
        rig.memory.failWrite(number: 3)
        try #require(await errorCode { try await rig.keychain.setItem("k", "new", new) } == nil)
        try #require(rig.accounts == ["k\u{0}staged"])
    }

    @Test(
        "an overwrite where either item has access control: add staged, delete the old, add under the key, delete staged, in one atomically",
        arguments: Change.allCases)
    func exactSequence(change: Change) async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old", change.old)
        rig.database.resetCalls()
        try await rig.keychain.setItem("k", "new", change.new)
        #expect(
            rig.database.calls == [
                .beginExclusively, .attributesOrAccount("k", "k\u{0}staged"),
                .beginAtomically, .add("k\u{0}staged"), .delete("k"), .add("k"), .delete("k\u{0}staged"), .end,
                .end,
            ])
        #expect(rig.accounts == ["k"])
        #expect(try await rig.keychain.getItem("k") == "new")
        #expect(try await rig.keychain.getItemInfo("k")?.accessControl == change.new.accessControl)
        #expect(rig.device.promptCount == (change.new.accessControl == AccessControl.none ? 0 : 1))
    }

    @Test("an overwrite where neither item has access control is one replace in place")
    func plainOverwriteReplaces() async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old")
        rig.database.resetCalls()
        try await rig.keychain.setItem("k", "new")
        #expect(rig.database.operations == [.attributesOrAccount("k", "k\u{0}staged"), .replace("k")])
    }

    @Test(
        "a staged write interrupted at each step leaves the old item (and an error) or the new one (and no error), never neither and never a weaker one, and no step changes an item with access control",
        arguments: Change.allCases, 1...4)
    func interruptedAtEachStep(change: Change, step: Int) async throws {
        let rig = try Rig()
        try await rig.keychain.setItem("k", "old", change.old)
        rig.memory.failWrite(number: step)
        // Seed 000: a write either happened or did not. After step 2 the old item is gone and the staged one holds
        // the key: the write happened, and the caller is told so.
        #expect(
            await errorCode { try await rig.keychain.setItem("k", "new", change.new) } == (step <= 2 ? .INTERNAL : nil))

        #expect(try await rig.keychain.hasItem("k"))
        #expect(try await rig.keychain.getAllKeys() == ["k"])
        let info = try #require(try await rig.keychain.getItemInfo("k"))
        let value = try await rig.keychain.getItem("k")
        switch value {
        case "old":
            #expect(step <= 2, "the new item was added under its key, yet the old value is read")
            #expect(info.label == "old")
            #expect(info.accessControl == change.old.accessControl)
        case "new":
            #expect(step >= 3, "the old item is still there, yet the new value is read")
            #expect(info.label == "new")
            #expect(info.accessControl == change.new.accessControl)
        default:
            Issue.record("read \(String(describing: value)): neither the old value nor the new one")
        }

        // The next write settles whatever was left, without changing an item with access control either.
        try await rig.keychain.setItem("k", "newer", SetOptions(accessControl: .biometryAnyOrPasscode))
        #expect(rig.accounts == ["k"])
        #expect(try await rig.keychain.getItem("k") == "newer")
        for call in rig.inPlaceChanges {
            // Only a staged item without access control may be moved into place (protectedToNone at step 3).
            #expect(call == .rename("k\u{0}staged", to: "k") && change == .protectedToNone && step == 3, "\(call)")
        }
    }

    @Test(
        "on every database, a staged write whose add under the key or delete of the staged item fails has happened: no error, the key reads the new value, and the next write settles the rest",
        arguments: DatabaseKind.allCases, [3, 4])
    func failureAfterTheOldItemWentIsNoFailure(kind: DatabaseKind, step: Int) async throws {
        let fixture = try Fixture(kind)
        let database = RecordingDatabase(fixture.database)
        let keychain = try Keychain(KeychainOptions(service: "svc.staged"), database: database, device: fixture.device)
        try await keychain.setItem("k", "old", SetOptions(accessControl: .biometryAny, label: "old"))
        let failing: DatabaseCall = step == 3 ? .add("k") : .delete("k\u{0}staged")
        database.fail { $0 == failing ? KeychainDatabaseError(.io, "planted fault") : nil }
        #expect(
            await errorCode {
                try await keychain.setItem("k", "new", SetOptions(accessControl: .passcode, label: "new"))
            } == nil)
        database.fail(nil)
        #expect(database.operations.contains(failing), "the fault was met")

        #expect(try await keychain.hasItem("k"))
        #expect(try await keychain.getAllKeys() == ["k"])
        let info = try #require(try await keychain.getItemInfo("k"))
        #expect(info.label == "new")
        #expect(info.accessControl == .passcode)
        #expect(try await keychain.getItem("k") == "new")
        try await keychain.setItem("k", "newer")
        #expect(try await keychain.getItem("k") == "newer")
        #expect(try fixture.storedPlaces().map(\.account) == ["k"])
    }

    @Test(
        "a staged item with access control left alone is the key's item: read with the prompt where it is, and replaced without a rename or a replace of it"
    )
    func loneProtectedStagedItem() async throws {
        let rig = try Rig()
        try await Self.leaveOnlyStaged(rig, old: SetOptions(label: "old"), new: SetOptions(accessControl: .passcode))
        rig.database.resetCalls()

        #expect(try await rig.keychain.hasItem("k"))
        #expect(try await rig.keychain.getItemInfo("k")?.accessControl == .passcode)
        #expect(try await rig.keychain.getAllKeys() == ["k"])
        #expect(try await rig.keychain.keyStates().state(of: "k") != .absent)
        #expect(try await rig.keychain.getItem("k") == "new")
        #expect(rig.device.promptCount == 1)
        #expect(rig.database.calls.filter(\.readsValue) == [.value("k\u{0}staged", context: 0)])
        #expect(rig.accounts == ["k\u{0}staged"], "left where it is")

        rig.database.resetCalls()
        try await rig.keychain.setItem("k", "newer", SetOptions(accessControl: .biometryAny))
        #expect(
            rig.database.operations == [
                .attributesOrAccount("k", "k\u{0}staged"), .add("k"), .delete("k\u{0}staged"),
            ])
        #expect(rig.accounts == ["k"])
        #expect(try await rig.keychain.getItem("k") == "newer")
        #expect(rig.inPlaceChanges.isEmpty)
    }

    @Test(
        "a lone staged item's replacement interrupted at either step leaves the staged item (and an error) or the new one (and no error)",
        arguments: 1...2)
    func loneStagedReplacementInterrupted(step: Int) async throws {
        let rig = try Rig()
        try await Self.leaveOnlyStaged(rig, old: SetOptions(), new: SetOptions(accessControl: .passcode))
        rig.memory.failWrite(number: step)
        #expect(
            await errorCode { try await rig.keychain.setItem("k", "newer", SetOptions()) }
                == (step == 1 ? .INTERNAL : nil))
        #expect(try await rig.keychain.getItem("k") == (step == 1 ? "new" : "newer"))
        #expect(try await rig.keychain.getItemInfo("k")?.accessControl == (step == 1 ? .passcode : AccessControl.none))
        try await rig.keychain.setItem("k", "newest")
        #expect(rig.accounts == ["k"])
        // Only "newer", which has no access control, is ever replaced in place.
        #expect(rig.inPlaceChanges == (step == 2 ? [.replace("k")] : []))
    }

    @Test("removeItem and clear remove a lone staged item with access control")
    func loneStagedRemoved() async throws {
        for removal in ["removeItem", "clear"] {
            let rig = try Rig()
            try await Self.leaveOnlyStaged(rig, old: SetOptions(), new: SetOptions(accessControl: .biometryAny))
            if removal == "clear" { try await rig.keychain.clear() } else { try await rig.keychain.removeItem("k") }
            #expect(rig.memory.allItems().isEmpty, "\(removal)")
            #expect(try await !rig.keychain.hasItem("k"))
            #expect(try await rig.keychain.getAllKeys().isEmpty)
        }
    }

    @Test("a lone staged item without access control is moved into place by a read")
    func lonePlainStagedMoved() async throws {
        let rig = try Rig()
        try await Self.leaveOnlyStaged(rig, old: SetOptions(accessControl: .passcode), new: SetOptions(label: "new"))
        #expect(try await rig.keychain.getItemInfo("k")?.label == "new")
        #expect(rig.accounts == ["k"])
        #expect(try await rig.keychain.getItem("k") == "new")
    }

    @Test("a lone staged item without access control that is locked away stays where it is: it exists and is described")
    func lockedAwayLoneStagedStays() async throws {
        let rig = try Rig()
        try await Self.leaveOnlyStaged(rig, old: SetOptions(accessControl: .passcode), new: SetOptions(label: "new"))
        let staged = try #require(rig.memory.allItems().first).attributes.primaryKey
        rig.memory.setLockedAway(staged)
        #expect(try await rig.keychain.hasItem("k"))
        #expect(try await rig.keychain.getItemInfo("k")?.label == "new")
        #expect(rig.accounts == ["k\u{0}staged"])
        rig.memory.setLockedAway(staged, false)
        #expect(try await rig.keychain.getItem("k") == "new")
        #expect(rig.accounts == ["k"])
    }
}
