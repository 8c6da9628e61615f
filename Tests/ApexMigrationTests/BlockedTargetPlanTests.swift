import ApexDumps
import ApexKeychain
import ApexMigration
import Foundation
import Testing

/// Issue 14, item 2: `blocked` items keep their intended target. They are never written, and they share a target
/// key with no one: a blocked item and a `create` under one key are no conflict (the create is the only writer),
/// nor are two blocked items. A target whose protection is unknown is never written, whatever the verdict says.
@Suite("Blocked items with a target")
struct BlockedTargetPlanTests {
    /// ``PlainImporter``'s items; those of the dumps named in `blocked` are blocked with their target and no
    /// protection, those of `unprotected` keep a `migrate` verdict with a target of unknown protection (an
    /// importer that forgot to block them).
    struct BlockingImporter: Importer {
        var blocked: Set<String> = []
        var unprotected: Set<String> = []
        var library: SourceLibrary { .expoSecureStore }

        func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
            try PlainImporter().importItems(from: dumps, options: options).map { found in
                var item = found
                guard let target = item.target,
                    blocked.contains(item.origin.path) || unprotected.contains(item.origin.path)
                else { return item }
                item.target = .unknownProtection(service: target.service, key: target.key, kind: target.kind)
                if blocked.contains(item.origin.path) { item.verdict = .blocked("an and-combination") }
                return item
            }
        }
    }

    @Test(
        "a blocked item and a create with the same target key: the create is written, the blocked item is not, no conflict"
    )
    func blockedAndCreateShareAKey() async throws {
        let target = memoryTarget()
        let good = dump([("app", "token", "sample-a", "ck", [])], path: "a.plist")
        let bad = dump([("app", "token", "sample-b", "ck", [])], path: "b.plist")
        let migration = Migration(
            id: .forTests, importers: [BlockingImporter(blocked: ["b.plist"])], source: .dumps([good, bad]),
            target: target)
        let plan = try await migration.plan()
        #expect(plan.actions.map(\.action) == [.create, .blocked])
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.create, .blocked])
        #expect(report.items.map(\.result) == [.verified, nil])
        #expect(try await target.keychain(service: "app").getItem("token") == "sample-a")
        // The blocked item's report shows where it was meant to go, with no protection.
        let blocked = try #require(report.items[1].target)
        #expect((blocked.service, blocked.key, blocked.kind) == ("app", "token", TargetKind.string))
        #expect(blocked.accessible == nil && blocked.accessControl == nil && blocked.synchronizable == nil)
        #expect(report.isComplete)
    }

    @Test("two blocked items with the same target key are both blocked, not conflicts")
    func twoBlockedShareAKey() async throws {
        let target = memoryTarget()
        let first = dump([("app", "token", "sample-a", "ck", [])], path: "a.plist")
        let second = dump([("app", "token", "sample-b", "ck", [])], path: "b.plist")
        let migration = Migration(
            id: .forTests, importers: [BlockingImporter(blocked: ["a.plist", "b.plist"])],
            source: .dumps([first, second]),
            target: target)
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.blocked, .blocked])
        #expect(report.items.map(\.cause) == [.noEquivalent, .noEquivalent])
        #expect(try await target.keychain(service: "app").hasItem("token") == false)
    }

    @Test("a target whose protection is unknown is never written, even with a migrate verdict")
    func unknownProtectionIsNeverWritten() async throws {
        let target = memoryTarget()
        let records = dump(
            [("app", "token", "sample-a", "ck", []), ("app", "other", "sample-b", "ck", [])], path: "a.plist")
        let migration = Migration(
            id: .forTests, importers: [BlockingImporter(unprotected: ["a.plist"])], source: .dumps([records]),
            target: target)
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.blocked, .blocked])
        #expect(report.items.map(\.cause) == [.noEquivalent, .noEquivalent])
        #expect(try await target.keychain(service: "app").getAllKeys().isEmpty)
    }
}
