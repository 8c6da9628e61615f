import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// Issue 31: a run's report was awkward to assert on, every item's `action` and `state` optional although a plan
/// or a run always has them. `entries` gives them typed, with the item's other fields through the entry.
@Suite("Report entries")
struct ReportEntriesTests {
    @Test("a plan's entries have their action and state, not optional, and the item's fields; an inventory has none")
    func entries() throws {
        let report = MigrationReport(plan: ReportTests.plan(), device: "ios", includeLabels: false)
        let entry = try #require(report.entries.first)
        let action: MigrationAction = entry.action
        let state: ItemState = entry.state
        #expect(action == .create && state == .pending, "a plan's create is a write to come")
        #expect(entry.source.service == "app" && entry.target?.key == "token" && entry.cause == nil)
        #expect(report.entry(forKey: "token") == entry)
        #expect(report.entry(forKey: "other") == nil)
        let items = ReportTests.plan().actions.map(\.item)
        let inventory = MigrationReport(inventory: items, dumps: [], includeLabels: false)
        #expect(inventory.items.count == 1 && inventory.entries.isEmpty)
    }

    @Test("runIfNeeded's report: each entry's action and state as the run left them")
    func runEntries() async throws {
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(PendingItemsTests.records)]),
            target: MigrationTarget(database: InMemoryKeychainDatabase(), device: SimulatedDevice(passcodeSet: false)))
        guard case .ran(let report) = try await migration.runIfNeeded() else {
            Issue.record("did not run")
            return
        }
        #expect(report.entries.map(\.action) == [.create, .blocked, .create])
        #expect(report.entries.map(\.state) == [.final, .pending, .final])
        #expect(report.entry(forKey: "pin")?.cause == .keychain(.PASSCODE_NOT_SET))
    }
}
