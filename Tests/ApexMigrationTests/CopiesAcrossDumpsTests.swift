import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// One keychain read twice (a folder holding its XML plist and its binary or SQLite export, or two copies of a
/// file) gives each item twice, from two dumps. Writing either copy leaves the same item, so the first is
/// migrated and the others are `shadowed`, naming it; before, every such item was a `conflict` and nothing was
/// migrated. Items under one key that differ in value or protection stay conflicts.
@Suite("The same item in two dumps")
struct CopiesAcrossDumpsTests {
    @Test("two copies of a dump: the first copy's items are created, the second's shadowed, nothing conflicts")
    func copiesAreShadowed() async throws {
        let target = memoryTarget()
        let records: [(String, String, String, String, AccessControlFlags)] = [
            ("app", "token", "sample-a", "ck", []), ("app", "pin", "sample-b", "aku", [.biometryCurrentSet]),
        ]
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()],
            source: .dumps([dump(records, path: "a.plist"), dump(records, path: "copy/a.plist")]), target: target)
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.create, .create, .shadowed, .shadowed])
        #expect(report.items.map(\.cause) == [nil, nil, .shadowed, .shadowed])
        let reason = try #require(report.items[2].reason)
        #expect(
            reason.hasPrefix("the same item as a.plist item 1,"), "the shadowed copy names the item that stands for it")
        #expect(report.summary.conflict == 0)
        #expect(try await target.keychain(service: "app").getItem("token") == "sample-a")
        #expect(report.isComplete)
    }

    /// The plan of a migration of `dumps` into an empty target.
    func plan(_ dumps: [Dump]) async throws -> MigrationPlan {
        try await Migration(id: .forTests, importers: [PlainImporter()], source: .dumps(dumps), target: memoryTarget())
            .plan()
    }

    /// A dump at `path` of one item, `app`/`token`, with `value` and protection class `pdmn`.
    func token(_ value: String, _ pdmn: String = "ck", path: String) -> Dump {
        dump([("app", "token", value, pdmn, [])], path: path)
    }

    @Test("a different value, or a different protection, under one key is still a conflict")
    func differentItemsStillConflict() async throws {
        let value = try await plan([token("sample-a", path: "a.plist"), token("sample-b", path: "b.plist")])
        #expect(value.actions.map(\.action) == [.conflict, .conflict])
        let protection = try await plan([token("sample-a", path: "a.plist"), token("sample-a", "aku", path: "b.plist")])
        #expect(protection.actions.map(\.action) == [.conflict, .conflict])
    }

    @Test("values equal as text but not byte for byte (NFC and NFD) are no copies: a conflict")
    func canonicalEquivalentIsNoCopy() async throws {
        let plan = try await plan([token("caf\u{E9}", path: "a.plist"), token("cafe\u{301}", path: "b.plist")])
        #expect(plan.actions.map(\.action) == [.conflict, .conflict])
    }

    @Test("three dumps, two alike: the copy is shadowed, the two that differ conflict")
    func copyBesideAConflict() async throws {
        let plan = try await plan([
            token("sample-a", path: "a.plist"), token("sample-b", path: "b.plist"), token("sample-a", path: "c.plist"),
        ])
        #expect(plan.actions.map(\.action) == [.conflict, .conflict, .shadowed])
        // The conflict names only the item that differs, not the copy.
        let reason = try #require(plan.actions[0].reason)
        #expect(reason.contains("b.plist") && !reason.contains("c.plist"))
    }

    @Test("two alike items of one dump are not taken for copies: the importer's business, a conflict")
    func sameDumpIsNoCopy() async throws {
        let plan = try await plan([
            dump([("app", "token", "sample-a", "ck", []), ("app", "token", "sample-a", "ck", [])], path: "a.plist")
        ])
        #expect(plan.actions.map(\.action) == [.conflict, .conflict])
    }
}
