import ApexDumps
import ApexKeychain
import ApexMigration
import Testing

/// A migration that stops says which thing failed: a failure of the target is `.target`, with the keychain's error
/// (it was a `.source` whose text began with "target:"), and a locked target is still `tryLater`.
@Suite("MigrationError: which thing failed")
struct MigrationErrorTests {
    static let records: [(String, String, String, String, AccessControlFlags)] = [
        ("app", "token", "sample-a", "ck", []), ("app", "refresh", "sample-b", "ck", []),
    ]

    @Test("a write of the target that fails stops the run with .target and the keychain error's code", arguments: 1...3)
    func failedTargetWrite(number: Int) async throws {
        let database = InMemoryKeychainDatabase()
        let target = MigrationTarget(database: database, device: SimulatedDevice())
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        database.failWrite(number: number, status: .io)
        do {
            let report = try await migration.run()
            // A fault in an item's own write fails that item, not the run.
            #expect(report.summary.failed == 1, "write \(number) failed neither the run nor an item")
        } catch {
            guard case .target(let failure) = error else {
                Issue.record("write \(number): \(error) is not a target failure")
                return
            }
            #expect(failure.code == .INTERNAL, "write \(number)")
            #expect(error.description == "target: \(failure)")
        }
    }

    @Test("the first write of a run, the ledger's, failing stops it with .target(INTERNAL)")
    func failedLedgerWrite() async throws {
        let database = InMemoryKeychainDatabase()
        let target = MigrationTarget(database: database, device: SimulatedDevice())
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        database.failWrite(number: 1, status: .io)
        let error = await #expect(throws: MigrationError.self) { _ = try await migration.run() }
        guard case .target(let failure)? = error else {
            Issue.record("\(String(describing: error)) is not a target failure")
            return
        }
        #expect(failure.code == .INTERNAL)
    }

    @Test("a locked target is tryLater, not a target failure")
    func lockedTarget() async throws {
        let database = InMemoryKeychainDatabase()
        let target = MigrationTarget(database: database, device: SimulatedDevice())
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(Self.records)]), target: target)
        database.failWrite(number: 1, status: .interactionNotAllowed)
        let error = await #expect(throws: MigrationError.self) { _ = try await migration.run() }
        guard case .tryLater? = error else {
            Issue.record("\(String(describing: error)) is not tryLater")
            return
        }
    }

    @Test(
        "source items an interrupted run moved aside that can't be put back stop the next run with restoringParkedItems"
    )
    func parkedItemsNotPutBack() async throws {
        let device = SimulatedDevice()
        let database = FaultyDatabase()
        _ = try OnDeviceMigrationTests.addToken(to: database, device, protection: .ck)
        // The write fails and so does renaming the source back: as if the process had died in between.
        database.failPackageWrites(service: "app")
        database.failRenames(true)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter(targetAccessControl: .passcode)],
            source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        _ = try await migration.run()
        #expect(try await OnDeviceMigrationTests.journalKeys(database, device).count == 1)

        // Renames still fail: the next run can't put the item back, and says so.
        database.failPackageWrites(service: nil)
        let error = await #expect(throws: MigrationError.self) { _ = try await migration.run() }
        guard case .restoringParkedItems? = error else {
            Issue.record("\(String(describing: error)) is not restoringParkedItems")
            return
        }
        #expect(error?.description.hasPrefix("can't put back the source items an interrupted run moved aside") == true)
        #expect(try OnDeviceMigrationTests.foreign(database).map(\.account) == ["token\u{0}apex-parked"], "still aside")
        #expect(try await OnDeviceMigrationTests.journalKeys(database, device).count == 1, "the journal is kept")
    }

    @Test("a source item that can't be removed stops the run with .source, not .target")
    func sourceRemovalFails() async throws {
        let device = SimulatedDevice()
        // The old library's keychain, whose deletes fail, and a keychain of the package's own.
        let database = FaultyDatabase()
        _ = try OnDeviceMigrationTests.addToken(to: database, device, protection: .ck)
        database.failForeignDeletes(true)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: InMemoryKeychainDatabase(), device: device),
            policy: MigrationPolicy(removeSource: true))
        // The first run migrates the item; removing its source fails, which the item's notes say.
        _ = try await migration.run()
        // The next run finds the item in place and removes its source in a batch: that removal fails.
        let error = await #expect(throws: MigrationError.self) { _ = try await migration.run() }
        guard case .source? = error else {
            Issue.record("\(String(reflecting: error)) is not a source failure")
            return
        }
        #expect(error?.description.contains("can't remove the migrated source item of service 'app'") == true)
    }
}
