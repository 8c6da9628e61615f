import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// Plan, apply and verify: one action per item, decided against the target as it is; a dry run writes nothing;
/// apply does what the plan said, item for item, and a second run finds everything in place.
@Suite("Plan and apply")
struct PlanApplyTests {
    static let records: [(service: String, account: String, value: String, pdmn: String, flags: AccessControlFlags)] = [
        ("app", "token", "sample-token-0001", "ck", []),
        ("app", "refresh", "sample-refresh-0002", "aku", [.biometryAny]),
        ("vault", "seed", "sample-seed-0003", "akpu", [.devicePasscode]),
        ("app", "skip-me", "sample-skip", "ck", []),
        ("app", "sealed-one", "sample-sealed", "ck", []),
        ("app", "blocked-one", "sample-blocked", "ck", []),
    ]

    @Test("the plan gives each item one action, and making it writes nothing")
    func planIsPure() async throws {
        let target = memoryTarget()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        let plan = try await migration.plan()
        #expect(
            plan.actionsByAccount == [
                "token": .create, "refresh": .create, "seed": .create, "skip-me": .skipped, "sealed-one": .sealed,
                "blocked-one": .blocked,
            ])
        #expect(try target.database.attributes(matching: ItemQuery()).isEmpty)
    }

    /// ``PlainImporter``'s items that `keep` accepts, as another library's.
    struct FilteredImporter: Importer {
        var library: SourceLibrary
        var keep: @Sendable (SourceItem) -> Bool

        func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
            try PlainImporter().importItems(from: dumps, options: options).filter(keep).map {
                var item = $0
                item.library = library
                return item
            }
        }
    }

    @Test("with several importers, a place in a dump is one item: the first importer to claim it keeps it")
    func firstImporterClaims() async throws {
        let first = FilteredImporter(library: .expoSecureStore) { $0.origin.path == "a.plist" }
        let second = FilteredImporter(library: .reactNativeKeychain) { $0.source.account != "mine" }
        let migration = Migration(
            id: .forTests, importers: [first, second],
            source: .dumps([
                dump([("app", "mine", "v1", "ck", []), ("app", "both", "v2", "ck", [])], path: "a.plist"),
                dump([("app", "theirs", "v3", "ck", [])], path: "b.plist"),
            ]),
            target: memoryTarget())
        let plan = try await migration.plan()
        let found = plan.actions.map { "\($0.item.origin.path) \($0.item.origin.location) \($0.item.library.rawValue)" }
        #expect(
            found == [
                "a.plist item 1 expo-secure-store", "a.plist item 2 expo-secure-store",
                "b.plist item 1 react-native-keychain",
            ])
        #expect(plan.dumps.map(\.library) == [.expoSecureStore, .reactNativeKeychain])
    }

    @Test("a dump given twice gives its items once, with one importer or several", arguments: [1, 2])
    func dumpGivenTwice(importers count: Int) async throws {
        let first = FilteredImporter(library: .expoSecureStore) { _ in true }
        let second = FilteredImporter(library: .reactNativeKeychain) { _ in false }
        let twice = dump([("app", "one", "v1", "ck", []), ("app", "two", "v2", "ck", [])], path: "a.plist")
        let importers: [any Importer] = count == 1 ? [first] : [first, second]
        let migration = Migration(
            id: .forTests, importers: importers, source: .dumps([twice, twice]), target: memoryTarget())
        let plan = try await migration.plan()
        #expect(plan.actions.map(\.item.origin.location) == ["item 1", "item 2"])
        #expect(plan.actions.allSatisfy { $0.action == .create })
    }

    @Test("apply writes every create through the core with its protection, and reads each back")
    func applyWritesAndVerifies() async throws {
        let device = SimulatedDevice()
        let target = memoryTarget(device: device)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        let report = try await migration.run()
        #expect(report.summary.create == 3)
        #expect(report.summary.written == 3)
        #expect(report.summary.verified == 3)
        #expect(report.summary.failed == 0)
        let app = try target.keychain(service: "app")
        #expect(try await app.getItemInfo("refresh")?.accessControl == .biometryAny)
        #expect(try await app.getItemInfo("refresh")?.accessible == .whenUnlockedThisDeviceOnly)
        #expect(try await app.getItem("token") == "sample-token-0001")
        #expect(try await target.keychain(service: "vault").getItemInfo("seed")?.accessControl == .passcode)
        #expect(device.promptCount >= 2, "verifying the protected items reads them through the device")
    }

    @Test("what apply does matches the dry run item for item")
    func applyMatchesPlan() async throws {
        let target = memoryTarget()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        let plan = try await migration.plan()
        let report = try await migration.run()
        #expect(report.items.map(\.action) == plan.actions.map(\.action))
        #expect(report.items.map(\.target?.key) == plan.actions.map(\.item.target?.key))
    }

    @Test("a second run finds everything in place: all exists, nothing written")
    func secondRunIsAllExists() async throws {
        let target = memoryTarget()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        _ = try await migration.run()
        let writes = (target.database as? InMemoryKeychainDatabase)?.writeCount
        let second = try await migration.run()
        #expect(second.summary.exists == 3)
        #expect(second.summary.create == 0)
        #expect(second.summary.written == 0)
        #expect(
            (target.database as? InMemoryKeychainDatabase)?.writeCount == writes.map { $0 + 1 },
            "only the completion marker is rewritten")
    }

    @Test("a batch of 256 items costs one transaction and two ledger writes, not two per item")
    func ledgerWritesPerBatch() async throws {
        let count = 600
        let records = (0..<count).map {
            (service: "app", account: "key-\($0)", value: "value-\($0)", pdmn: "ck", flags: AccessControlFlags())
        }
        let database = InMemoryKeychainDatabase()
        let target = MigrationTarget(database: database, device: SimulatedDevice())
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target,
            policy: MigrationPolicy(batching: .init(items: 256, duration: 3600)))
        let report = try await migration.run()
        #expect(report.summary.verified == count)
        let batches = (count + 255) / 256
        // One write per item, the fingerprint key, a pending and a verified record per batch, the marker.
        #expect(database.writeCount == count + 1 + 2 * batches + 1)
        // Each batch: its record and writes in one transaction, its verified record in the next batch's (the
        // last batch's in one more).
        #expect(database.committedScopes == batches + 1)
        let ledgerKeys = try await target.keychain(service: "apex-keychain.migration").getAllKeys()
        #expect(ledgerKeys.filter { $0.hasPrefix("entries:default:") }.count == batches)
        let second = try await Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target
        ).plan()
        #expect(second.count(.exists) == count)
    }

    @Test("a write that fails carries its reason (code and message, no value) into the report")
    func failureReasonReachesReport() async throws {
        let database = FaultyDatabase()
        let target = MigrationTarget(database: database, device: SimulatedDevice())
        let records = Self.records.filter { $0.service == "app" && !$0.account.contains("-") } + [Self.records[2]]
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target)
        database.failPackageWrites(service: "app")
        let report = try await migration.run()
        #expect(report.summary.failed == 2)
        #expect(report.summary.verified == 1)
        let failed = report.items.filter { $0.result == .failed }
        #expect(failed.count == 2)
        for item in failed {
            #expect(item.resultReason?.hasPrefix("INTERNAL: ") == true)
            #expect(item.resultReason?.contains("injected fault") == true)
        }
        #expect(report.items.first { $0.result == .verified }?.resultReason == nil)
        let json = String(decoding: report.json(), as: UTF8.self)
        #expect(json.contains("\"resultReason\" : \"INTERNAL: "))
        #expect(json.contains("\"resultReason\" : null"))
        #expect(report.text().contains("create (failed)"))
        #expect(report.text().contains("injected fault"))
        for record in records {
            #expect(
                !json.contains(record.value) && !report.text().contains(record.value)
                    && !report.markdown().contains(record.value))
        }
        #expect(try await migration.isComplete() == false, "a run with failures is not marked complete")
    }

    @Test("timedRun tells where the time went; a run with nothing to write spends none on apply or verify")
    func timings() async throws {
        let target = memoryTarget()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        let (report, first) = try await migration.timedRun()
        #expect(report.summary.verified == 3)
        #expect(first.plan > .zero && first.apply > .zero && first.verify > .zero && first.ledger > .zero)
        let (again, second) = try await migration.timedRun()
        #expect(again.summary.written == 0)
        #expect(second.apply == .zero && second.verify == .zero)
        #expect(second.plan > .zero && second.ledger > .zero)
    }

    @Test("after a completed run, runIfNeeded reads no source and writes nothing")
    func completedRunIsOneLookup() async throws {
        let target = memoryTarget()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        guard case .ran = try await migration.runIfNeeded() else {
            Issue.record("the first call must run")
            return
        }
        let writes = (target.database as? InMemoryKeychainDatabase)?.writeCount
        guard case .alreadyComplete = try await migration.runIfNeeded() else {
            Issue.record("the second call must not run")
            return
        }
        #expect((target.database as? InMemoryKeychainDatabase)?.writeCount == writes)
    }

    @Test("a biometric item on a device without biometrics is blocked, never written weaker")
    func neverWeaker() async throws {
        let target = memoryTarget(device: SimulatedDevice(biometry: nil))
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        let report = try await migration.run()
        let refresh = try #require(report.items.first { $0.target?.key == "refresh" })
        #expect(refresh.action == .blocked)
        #expect(refresh.reason?.hasPrefix("BIOMETRY_NOT_AVAILABLE") == true)
        #expect(try await target.keychain(service: "app").hasItem("refresh") == false)
    }

    @Test("a target key held by another library's item is a conflict, and the item is left as it was")
    func foreignHolderIsConflict() async throws {
        let target = memoryTarget()
        let foreign = KeychainItem(
            attributes: ItemAttributes(service: "app", account: "token", accessGroup: target.device.defaultAccessGroup),
            value: Data("someone-else".utf8))
        try target.database.add(foreign)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Array(Self.records.prefix(1)))]),
            target: target)
        let report = try await migration.run()
        #expect(report.items.first?.action == .conflict)
        #expect(try target.database.value(for: foreign.attributes.primaryKey) == Data("someone-else".utf8))
    }

    @Test("with onConflict fail, a conflict stops the run before anything is written")
    func conflictFailWritesNothing() async throws {
        let target = memoryTarget()
        try target.database.add(
            KeychainItem(
                attributes: ItemAttributes(
                    service: "app", account: "token", accessGroup: target.device.defaultAccessGroup),
                value: Data("someone-else".utf8)))
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target,
            policy: MigrationPolicy(onConflict: .fail))
        await #expect(throws: MigrationError.conflicts(1)) { try await migration.run() }
        #expect(try target.database.attributes(matching: ItemQuery(creator: apexCreator)).isEmpty)
    }

    @Test("two sources that map to one target key are both conflicts, never last-wins")
    func twoSourcesOneKey() async throws {
        let target = memoryTarget()
        let first = dump([("app", "token", "sample-a", "ck", [])], path: "a.plist")
        let second = dump([("legacy", "token", "sample-b", "ck", [])], path: "b.plist")
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([first, second]), target: target,
            policy: MigrationPolicy(importOptions: ImportOptions(serviceMap: ["legacy": "app"])))
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.conflict, .conflict])
        #expect(try await target.keychain(service: "app").hasItem("token") == false)
    }

    @Test("services that differ only in Unicode normalisation are two keychains, as the keychain sees them")
    func servicesCompareByteForByte() async throws {
        let records: [(service: String, account: String, value: String, pdmn: String, flags: AccessControlFlags)] = [
            ("caf\u{E9}", "token", "sample-composed", "ck", []),
            ("cafe\u{301}", "token", "sample-decomposed", "ck", []),
        ]
        let target = memoryTarget()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target)
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.create, .create], "not two sources mapping to one key")
        #expect(report.summary.verified == 2)
        #expect(try await target.keychain(service: "caf\u{E9}").getItem("token") == "sample-composed")
        #expect(try await target.keychain(service: "cafe\u{301}").getItem("token") == "sample-decomposed")
        #expect(try await migration.plan().actions.map(\.action) == [.exists, .exists])
    }

    @Test("a package item with another value under the target key is a conflict; with the same value it exists")
    func ownItemComparedByValue() async throws {
        let target = memoryTarget()
        let app = try target.keychain(service: "app")
        try await app.setItem("token", "sample-token-0001", SetOptions(accessible: .afterFirstUnlock))
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Array(Self.records.prefix(1)))]),
            target: target)
        #expect(try await migration.plan().actions.first?.action == .exists)
        try await app.setItem("token", "another-value", SetOptions(accessible: .afterFirstUnlock))
        #expect(try await migration.plan().actions.first?.action == .conflict)
    }

    @Test("a locked device is 'try later': nothing written, nothing marked")
    func lockedIsTryLater() async throws {
        let device = SimulatedDevice()
        let target = memoryTarget(device: device)
        device.lock()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        await #expect {
            try await migration.run()
        } throws: { error in
            if case MigrationError.tryLater = error { return true }
            return false
        }
        #expect(try target.database.attributes(matching: ItemQuery()).isEmpty)
        device.unlock()
        #expect(try await migration.isComplete() == false)
    }
}
