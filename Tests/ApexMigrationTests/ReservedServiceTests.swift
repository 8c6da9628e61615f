import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// Issue 28: a dump's item or a service map could write into the ledger's service, `apex-keychain.migration`:
/// one item there stopped every later migration of the target, another marked a migration complete before it
/// ever ran. A migration now never writes there, and an item under a ledger key that is not a record is no record.
@Suite("the ledger's service is reserved")
struct ReservedServiceTests {
    static let expo = CompletionMarkerTests.expo

    @Test("an item whose target is the ledger's service is blocked (reservedService, final) and never written")
    func dumpItemIntoLedgerService() async throws {
        let target = memoryTarget()
        let source = MigrationSource.dumps([
            dump([
                (Migration.ledgerService, "expo-done:startup", "1", "cku", []), ("svc", "expo-1", "v1", "ck", []),
            ])
        ])
        let migration = Migration(id: .forTests, importers: [Self.expo], source: source, target: target)
        let plan = try await migration.plan()
        let blocked = try #require(plan.actions.first)
        #expect(blocked.action == .blocked)
        #expect(blocked.cause == .reservedService)
        #expect(blocked.reason?.contains("holds the migration's own records") == true)
        #expect(plan.actions.last?.action == .create)

        let report = try await migration.run()
        #expect(report.items.first?.state == .final)
        #expect(report.items.first?.result == nil, "never written")
        #expect(report.summary.verified == 1)
        let ledger = try target.keychain(service: Migration.ledgerService)
        #expect(try await !ledger.hasItem("expo-done:startup"))
        #expect(try await migration.isComplete())

        // A run with a service map that moves it out of the reserved service migrates it.
        var policy = MigrationPolicy()
        policy.importOptions.serviceMap = [Migration.ledgerService: "moved"]
        let next = try await Migration(
            id: .forTests, importers: [Self.expo], source: source, target: target, policy: policy
        ).run()
        #expect(next.items.first?.result == .verified)
        #expect(try await target.keychain(service: "moved").getItem("expo-done:startup") == "1")
    }

    @Test("a service map into the ledger's service is blocked too, and can't mark another migration complete")
    func serviceMapIntoLedgerService() async throws {
        let target = memoryTarget()
        var policy = MigrationPolicy()
        policy.importOptions.serviceMap = ["svc": Migration.ledgerService]
        let source = MigrationSource.dumps([dump([("svc", "expo-done:startup", "1", "cku", [])])])
        let report = try await Migration(
            id: MigrationID("dumps")!, importers: [Self.expo], source: source, target: target, policy: policy
        ).run()
        #expect(report.items.map(\.action) == [.blocked])
        #expect(report.items.map(\.cause) == [.reservedService])
        let startup = Migration(
            id: MigrationID("expo-startup")!, importers: [Self.expo], source: .dumps([]), target: target)
        #expect(try await !startup.isComplete())
    }

    @Test("the reserved service, byte for byte")
    func reservedServiceName() {
        #expect(Migration.isReservedService("apex-keychain.migration"))
        #expect(!Migration.isReservedService("apex-keychain.migration "))
        #expect(!Migration.isReservedService("Apex-keychain.migration"))
        #expect(!Migration.isReservedService("apex-keychain"))
    }

    /// A store on the device holding one source item, and the journal key a planted item goes under.
    static func onDevice() throws -> (InMemoryKeychainDatabase, SimulatedDevice, MigrationTarget, String) {
        let database = InMemoryKeychainDatabase()
        let device = SimulatedDevice()
        try database.add(
            KeychainItem(
                attributes: ItemAttributes(
                    service: "svc", account: "expo-1", accessGroup: device.defaultAccessGroup, creator: nil,
                    protectionDomain: .ck),
                value: Data("v1".utf8)))
        let target = MigrationTarget(database: database, device: device)
        return (database, device, target, "journal:default:" + String(repeating: "0", count: 32))
    }

    @Test(
        "an item under a journal key that is not of a record's form is left alone: the on-device run goes on",
        arguments: [
            SetOptions(accessible: .afterFirstUnlock),
            SetOptions(accessible: .whenUnlocked),
            SetOptions(accessible: .whenUnlockedThisDeviceOnly, accessControl: .biometryAny),
        ])
    func plantedJournalRecord(options: SetOptions) async throws {
        let (database, device, target, journalKey) = try Self.onDevice()
        try await target.keychain(service: Migration.ledgerService).setItem(journalKey, "{}garbage", options)
        let migration = Migration(
            id: .forTests, importers: [Self.expo], source: .database(database, device: device), target: target,
            policy: MigrationPolicy(removeSource: true))
        let report = try await migration.run()
        #expect(report.summary.verified == 1)
        #expect(try await target.keychain(service: Migration.ledgerService).hasItem(journalKey), "left in place")
        #expect(device.promptCount == 0)
    }

    /// Review of issue 28: a damaged journal record of the ledger's own form was passed over, and the next
    /// journal write for its target replaced it, losing the parked items it names.
    @Test("a journal record of the ledger's form that doesn't decode stops the run, and is kept")
    func damagedJournalRecord() async throws {
        let (database, device, target, journalKey) = try Self.onDevice()
        let ledger = try target.keychain(service: Migration.ledgerService)
        try await ledger.setItem(journalKey, "{}garbage", SetOptions(accessible: .afterFirstUnlockThisDeviceOnly))
        let migration = Migration(
            id: .forTests, importers: [Self.expo], source: .database(database, device: device), target: target,
            policy: MigrationPolicy(removeSource: true))
        let error = await #expect(throws: MigrationError.self) { _ = try await migration.run() }
        #expect(error?.description.contains("'\(journalKey)' is damaged") == true)
        #expect(try await ledger.getItem(journalKey) == "{}garbage", "kept for whoever mends it")
        #expect(try await !target.keychain(service: "svc").hasItem("expo-1"), "nothing written")
        #expect(try database.attributes(matching: ItemQuery(service: "svc")).count == 1, "the source is where it was")
    }
}

/// Issue 28: `MISSING_ENTITLEMENT` blocks were final, so a run that migrated nothing was complete; an entitlement
/// is the app's configuration, which an update can fix.
@Suite("a missing entitlement is pending")
struct MissingEntitlementTests {
    @Test("an item of an access group the app isn't entitled to is pending; once an update adds the group, migrated")
    func missingEntitlementIsPending() async throws {
        let database = InMemoryKeychainDatabase()
        let record = KeychainRecord(
            location: "item 1", itemClass: "genp", service: .string("svc"), account: .string("expo-1"),
            value: .data(Data("v1".utf8)), protection: "ck", accessGroup: "ABCDE12345.com.example.shared")
        let source = MigrationSource.dumps([Dump(path: "dump.plist", format: .iosPlist, content: .keychain([record]))])
        let before = MigrationTarget(database: database, device: SimulatedDevice(accessGroups: .defaultOnly))
        let first = Migration(id: .forTests, importers: [CompletionMarkerTests.expo], source: source, target: before)
        guard case .ran(let report) = try await first.runIfNeeded() else { throw CancellationError() }
        #expect(report.items.map(\.cause) == [.keychain(.MISSING_ENTITLEMENT)])
        #expect(report.items.map(\.state) == [.pending])
        #expect(try await !first.isComplete())

        let updated = MigrationTarget(
            database: database, device: SimulatedDevice(accessGroups: .listed(["ABCDE12345.com.example.shared"])))
        let second = Migration(id: .forTests, importers: [CompletionMarkerTests.expo], source: source, target: updated)
        guard case .ran(let next) = try await second.runIfNeeded() else { throw CancellationError() }
        #expect(next.items.map(\.result) == [.verified])
        #expect(try await second.isComplete())
    }
}
