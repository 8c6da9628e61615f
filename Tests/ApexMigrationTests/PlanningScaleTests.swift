import ApexDumps
import ApexKeychain
import Foundation
import Testing

@testable import ApexMigration

/// Issue 28: planning was quadratic when many items of one dump share a target key and value (each was compared
/// with every earlier one to find a copy of another dump): a 16 KB file took 20 s, a 100 KB one 13 minutes.
@Suite("planning many equal items")
struct PlanningScaleTests {
    /// `count` records of one dump (or, with `dumps`, of that many dumps in turn) with the same service, account
    /// and value: one target key, one value.
    static func equalItems(
        _ count: Int, dumps: Int = 1, value: (Int) -> String = { _ in "same" }
    ) throws
        -> [SourceItem]
    {
        let all = (0..<dumps).map { number in
            dump(
                (0..<count / dumps).map { index in ("svc", "key", value(index), "ck", []) },
                path: "dump-\(number).plist")
        }
        return try PlainImporter().importItems(from: all, options: ImportOptions())
    }

    @Test("20,000 equal items of one dump: one comparison per item, all of them one group of conflicts")
    func equalItemsOfOneDump() throws {
        let items = try Self.equalItems(20_000)
        var comparisons = 0
        let (duplicates, copies) = Planner.sharedTargets(items, comparisons: &comparisons)
        #expect(comparisons <= items.count, "\(comparisons) comparisons for \(items.count) items")
        #expect(copies.isEmpty, "items of one dump are never copies of each other")
        #expect(duplicates.count == 20_000)
        #expect(duplicates[0]?.count == 20_000)
    }

    @Test("the same items in two dumps: each of the second is a copy of the first dump's first item")
    func equalItemsOfTwoDumps() throws {
        let items = try Self.equalItems(20_000, dumps: 2)
        var comparisons = 0
        let (duplicates, copies) = Planner.sharedTargets(items, comparisons: &comparisons)
        #expect(comparisons <= items.count)
        #expect(copies.count == 10_000)
        #expect(copies.values.allSatisfy { $0 == 0 })
        #expect(duplicates.count == 10_000, "the first dump's items conflict with each other")
    }

    @Test("items of one key with values that all differ: still one comparison at most per item")
    func distinctValues() throws {
        let items = try Self.equalItems(20_000, value: { "value-\($0)" })
        var comparisons = 0
        let (duplicates, copies) = Planner.sharedTargets(items, comparisons: &comparisons)
        #expect(comparisons <= items.count)
        #expect(copies.isEmpty)
        #expect(duplicates.count == 20_000)
    }

    @Test("a plan of 20,000 equal items: every one a conflict with a short reason")
    func planShape() async throws {
        let records = (0..<20_000).map { _ in
            (service: "svc", account: "key", value: "same", pdmn: "ck", flags: AccessControlFlags())
        }
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: memoryTarget())
        let plan = try await migration.plan()
        #expect(plan.count(.conflict) == 20_000)
        #expect(plan.actions.allSatisfy { $0.cause == .sharedTargetKey && ($0.reason?.utf8.count ?? 0) < 200 })
        #expect(plan.actions.first?.reason?.hasSuffix("(--service-map, ImportOptions.serviceMap)") == true)
    }
}
