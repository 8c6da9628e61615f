import ApexKeychain
import Foundation
import Testing

@testable import ApexMigration

/// A batch's time budget is `TimeInterval` seconds, measured with the package's monotonic clock (no `Duration` or
/// `ContinuousClock`, which need iOS 16: the package's floor is iOS 15.1).
@Suite("Batching: the time budget in seconds, on the package's monotonic clock")
struct BatchTimeBudgetTests {
    static let records: [(service: String, account: String, value: String, pdmn: String, flags: AccessControlFlags)] =
        (0..<5).map { ("app", "key-\($0)", "sample-value-\($0)", "ck", []) }

    /// How many `entries:` records (one per batch) a run with `batching` leaves.
    static func batches(_ batching: MigrationPolicy.Batching) async throws -> Int {
        let target = memoryTarget()
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target,
            policy: MigrationPolicy(batching: batching))
        let report = try await migration.run()
        #expect(report.summary.verified == records.count)
        return try target.database.attributes(matching: ItemQuery()).filter { $0.account.hasPrefix("entries:") }.count
    }

    @Test("the default budget is 0.05 s; a budget of 0 s closes each batch after one item, one of an hour never")
    func budgetInSeconds() async throws {
        #expect(MigrationPolicy.Batching().duration == 0.05)
        #expect(MigrationPolicy.Batching.standard == MigrationPolicy.Batching(items: 512, duration: 0.05))
        #expect(try await Self.batches(.init(items: 512, duration: 0)) == Self.records.count)
        #expect(try await Self.batches(.init(items: 512, duration: 3600)) == 1)
    }

    @Test("the monotonic clock never goes back and measures a pause in seconds")
    func clockMeasures() async throws {
        let clock = MonotonicClock()
        let wall = Date()
        let start = clock.now
        try await Task.sleep(nanoseconds: 20_000_000)
        let end = clock.now
        let wallSeconds = Date().timeIntervalSince(wall)
        #expect(end > start)
        // At least the pause, and no more than the wall clock saw (the machine may be slow, never the clock).
        #expect(end - start >= 0.019 && end - start <= wallSeconds + 0.01, "\(end - start) s, \(wallSeconds) s")
        #expect(start - end == -(end - start))
        let early = MonotonicClock.Instant(nanoseconds: 1_500_000_000)
        let late = MonotonicClock.Instant(nanoseconds: 4_000_000_000)
        #expect(late - early == 2.5 && early - late == -2.5)
    }
}
