import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import Testing

/// The on-device case: other libraries' items in the very keychain the package writes to. Source items are
/// removed only when asked, only after their target was read back, and only the exact items migrated.
@Suite("On-device migration")
struct OnDeviceMigrationTests {
    /// A database of `kind` on `device` holding foreign items "loaded from a dump": the records of a dump, written
    /// as other libraries' items.
    static func store(
        _ records: [(service: String, account: String, value: String)], kind: DatabaseKind = .sqlite,
        device: SimulatedDevice = SimulatedDevice()
    ) throws -> (any KeychainDatabase, SimulatedDevice) {
        let database = try kind.make(device: device)
        for record in records {
            try database.add(
                KeychainItem(
                    attributes: ItemAttributes(
                        service: record.service, account: record.account, accessGroup: device.defaultAccessGroup,
                        creator: nil, protectionDomain: .ck),
                    value: Data(record.value.utf8)))
        }
        return (database, device)
    }

    static func foreign(_ database: any KeychainDatabase) throws -> [ItemAttributes] {
        try database.attributes(matching: ItemQuery()).filter { !$0.isApexItem }
    }

    @Test(
        "without removeSource the source items stay, and a source item holding its own target key is a conflict",
        arguments: DatabaseKind.allCases)
    func sourceStaysByDefault(kind: DatabaseKind) async throws {
        let (database, device) = try Self.store(
            [("app", "token", "sample-token-0001"), ("other", "name", "sample-name")], kind: kind)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device))
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.conflict, .conflict])
        #expect(try Self.foreign(database).count == 2)
    }

    @Test(
        "with removeSource each source item is journalled, removed, replaced by its target and verified",
        arguments: DatabaseKind.allCases)
    func removeSourceReplacesInPlace(kind: DatabaseKind) async throws {
        let (database, device) = try Self.store(
            [("app", "token", "sample-token-0001"), ("other", "name", "sample-name")], kind: kind)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        let report = try await migration.run()
        #expect(report.items.map(\.action) == [.create, .create])
        #expect(report.summary.verified == 2)
        #expect(try Self.foreign(database).isEmpty)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        #expect(try await app.getItem("token") == "sample-token-0001")
        let ledgerKeys = try await Keychain(
            KeychainOptions(service: "apex-keychain.migration"), database: database, device: device
        ).getAllKeys()
        #expect(!ledgerKeys.contains { $0.hasPrefix("journal:") }, "the journal is dropped once the target is verified")
    }

    @Test(
        "a migration id as long as the journal's key allows runs with removeSource; MigrationID refuses one longer, an empty one and one with U+0000",
        arguments: DatabaseKind.allCases)
    func migrationIDLength(kind: DatabaseKind) async throws {
        let longest = String(repeating: "x", count: MigrationID.maxLength)
        #expect(MigrationID.maxLength == 215)
        let id = try #require(MigrationID(longest))
        #expect(id.rawValue == longest && id.description == longest)
        let (database, device) = try Self.store([("app", "token", "sample-token-0001")], kind: kind)
        let migration = Migration(
            id: id, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        let report = try await migration.run()
        #expect(report.summary.verified == 1 && report.isComplete)
        #expect(try await migration.isComplete())

        // An id that can't name a migration can't be made: no run is ever refused for its id.
        for invalid in ["", longest + "x", "a\u{0}b"] {
            #expect(MigrationID(invalid) == nil, "\(invalid.utf16.count) code units")
            let problem = try #require(MigrationID.problem(of: invalid))
            #expect(problem.contains("a migration id must be 1 to 215 characters (UTF-16 code units) without U+0000"))
        }
        #expect(MigrationID.problem(of: "legacy-v1") == nil && MigrationID("legacy-v1")?.rawValue == "legacy-v1")
    }

    /// The expo sample dump's records, written into `database` as expo-secure-store's own items; returns a device
    /// whose default access group is theirs.
    @discardableResult
    static func loadExpoSample(into database: any KeychainDatabase) throws -> SimulatedDevice {
        try load("expo-secure-store/ios/keychain.plist", into: database)
        return expoDevice
    }

    /// The policy of the runs over expo's sample: one prompt. The iOS keychain doesn't disclose another library's
    /// access control, so on it the app names the one expo gives `requireAuthentication` items
    /// (`biometryCurrentSet`, `apple-secitem.md` §4.2).
    static func expoPrompt(_ kind: DatabaseKind) -> MigrationPolicy.ProtectedSourceItems {
        .readWithPrompt(
            Prompt(title: "Move your saved sign-in"), accessControl: kind == .secItem ? .biometryCurrentSet : nil)
    }

    /// A device whose default access group is that of expo's sample.
    static var expoDevice: SimulatedDevice {
        SimulatedDevice(bundleIdentifier: "com.example.expoapp", teamIdentifier: "A1B2C3D4E5")
    }

    /// The records of `samples/<path>`, written into `database` as the library's own items.
    static func load(_ path: String, into database: any KeychainDatabase) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let dump = try DumpReader.read(path: root.appendingPathComponent("samples/\(path)").path)
        guard case .keychain(let records) = dump.content else {
            Issue.record("\(path) is not a keychain dump")
            return
        }
        for record in records {
            let service = try #require(record.service?.text)
            let account = try #require(record.account?.text)
            let domain = try #require(record.protection.flatMap(ProtectionDomain.init(rawValue:)))
            guard case .data(let value) = record.value else { continue }
            try database.add(
                KeychainItem(
                    attributes: ItemAttributes(
                        service: service, account: account, accessGroup: try #require(record.accessGroup),
                        generic: record.generic?.bytes, protectionDomain: domain,
                        accessControl: record.accessControl?.flags ?? [], synchronizable: record.synchronizable),
                    value: value))
        }
    }

    @Test(
        "expo's sample on the device: with removeSource every key moves in place, and the stale copy that holds a target key is journalled and removed too",
        arguments: DatabaseKind.allCases)
    func expoSampleInPlace(kind: DatabaseKind) async throws {
        let device = Self.expoDevice
        let (database, _) = try Self.store([], kind: kind, device: device)
        try Self.loadExpoSample(into: database)
        let before = try Self.foreign(database)
        let migration = Migration(
            id: .forTests, importers: [ExpoSecureStoreImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(removeSource: true, protectedSourceItems: Self.expoPrompt(kind)))
        let report = try await migration.run()
        let actions = Dictionary(
            report.items.map {
                ("\($0.source.service ?? "")/\($0.target?.key ?? $0.source.location)", $0.action?.rawValue ?? "")
            },
            uniquingKeysWith: { a, _ in a })
        #expect(actions["app:no-auth/authToken"] == "create")
        #expect(actions["app/authToken"] == "shadowed")
        #expect(actions["app:auth/authToken"] == "shadowed")
        #expect(actions["app/deviceSecret"] == "create")
        #expect(report.summary.conflict == 0 && report.summary.failed == 0)
        #expect(
            try await migration.isComplete(),
            "\(report.items.filter { $0.state == .pending }.map { [$0.source.service, $0.source.account, $0.reason] })")
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        #expect(try await app.getItem("authToken") == "sample-token-0203", "the copy expo reads first")
        #expect(try await app.getItem("deviceSecret") == "sample-secret-0201")
        let left = Set(try Self.foreign(database).map { "\($0.service)/\($0.account)" })
        #expect(left.contains("app:auth/authToken"), "a shadowed copy that holds no target key is left alone")
        #expect(!left.contains("app/authToken"), "the stale copy under the target key is gone")
        #expect(!left.contains("app:no-auth/authToken") && !left.contains("app/deviceSecret"))
        #expect(left.count < before.count)
        let ledgerKeys = try await Keychain(
            KeychainOptions(service: "apex-keychain.migration"), database: database, device: device
        ).getAllKeys()
        #expect(!ledgerKeys.contains { $0.hasPrefix("journal:") })
    }

    @Test(
        "a run stopped after it removed the sources and before its completion marker is finished by the next, which leaves the stale copy shadowed",
        arguments: DatabaseKind.allCases)
    func staleCopyStaysShadowedAfterAnInterruptedRun(kind: DatabaseKind) async throws {
        let device = Self.expoDevice
        let (database, _) = try Self.store([], kind: kind, device: device)
        try Self.loadExpoSample(into: database)
        let migration = Migration(
            id: .forTests, importers: [ExpoSecureStoreImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(removeSource: true, protectedSourceItems: Self.expoPrompt(kind)))
        _ = try await migration.run()
        // As a process killed between its last batch and the completion marker leaves it.
        let ledger = try Keychain(
            KeychainOptions(service: "apex-keychain.migration"), database: database, device: device)
        try await ledger.removeItem("done:default")
        let left = try Self.foreign(database)

        let next = try await migration.runIfNeeded()
        guard case .ran(let report) = next else { throw CancellationError() }
        #expect(
            report.summary.conflict == 0,
            "the copy expo never read is not taken for the item once its newer copy is gone")
        let stale = report.items.first { $0.source.service == "app:auth" && $0.source.account == "authToken" }
        #expect(stale?.action == .shadowed)
        #expect(try Self.foreign(database) == left)
        #expect(try await migration.isComplete())
    }

    @Test("a stale copy moved aside to make room is put back in the same run when the write fails")
    func staleCopyRestored() async throws {
        let database = FaultyDatabase()
        let device = try Self.loadExpoSample(into: database)
        let before = Set(try Self.foreign(database).map { "\($0.service)/\($0.account)" })
        database.failPackageWrites(service: "app")
        let migration = Migration(
            id: .forTests, importers: [ExpoSecureStoreImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(
                removeSource: true, protectedSourceItems: .readWithPrompt(Prompt(title: "Move your saved sign-in"))))
        let failed = try await migration.run()
        #expect(failed.summary.failed >= 2, "authToken and deviceSecret go to service app")
        let kept = Set(try Self.foreign(database).map { "\($0.service)/\($0.account)" })
        let migrated = Set(
            failed.items.filter { $0.result == .verified }.map {
                "\($0.source.service ?? "")/\($0.source.account ?? "")"
            })
        #expect(
            migrated == ["secrets:no-auth/api-key"],
            "only the item outside the failing service was migrated, and its source removed")
        #expect(kept == before.subtracting(migrated), "every item moved aside for a failed write is back where it was")
        #expect(try await Self.journalKeys(database, device).isEmpty)
    }

    /// Another library's item `app`/`token` holding "sample-token-0001", added to `database`.
    static func addToken(
        to database: any KeychainDatabase, _ device: SimulatedDevice, protection: ProtectionDomain,
        accessControl: AccessControlFlags = []
    ) throws -> KeychainItem {
        let item = KeychainItem(
            attributes: ItemAttributes(
                service: "app", account: "token", accessGroup: device.defaultAccessGroup, protectionDomain: protection,
                accessControl: accessControl),
            value: Data("sample-token-0001".utf8))
        try database.add(item)
        return item
    }

    /// The keys of the migration ledger's journal records.
    static func journalKeys(_ database: any KeychainDatabase, _ device: SimulatedDevice) async throws -> [String] {
        try await Keychain(KeychainOptions(service: "apex-keychain.migration"), database: database, device: device)
            .getAllKeys().filter { $0.hasPrefix("journal:") }
    }

    @Test("removeSource never touches another library's item it did not migrate", arguments: DatabaseKind.allCases)
    func removesOnlyMigratedItems(kind: DatabaseKind) async throws {
        let (database, device) = try Self.store(
            [("app", "token", "sample-token-0001"), ("app", "skip-this", "sample-keep")], kind: kind)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        _ = try await migration.run()
        #expect(try Self.foreign(database).map(\.account) == ["skip-this"])
    }

    @Test("a source item moved aside keeps its value and protection untouched, and a failed write puts it back at once")
    func failedWritePutsBack() async throws {
        let device = SimulatedDevice()
        let database = FaultyDatabase()
        let source = try Self.addToken(to: database, device, protection: .aku)
        database.failPackageWrites(service: "app")
        let removing = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        let failed = try await removing.run()
        #expect(failed.summary.failed == 1)
        #expect(failed.items.first?.resultReason?.contains("injected fault") == true)
        #expect(try Self.foreign(database) == [source.attributes], "back under its own key, attributes unchanged")
        #expect(try database.value(for: source.attributes.primaryKey) == Data("sample-token-0001".utf8))
        #expect(try await Self.journalKeys(database, device).isEmpty)
        #expect(try await removing.isComplete() == false)
    }

    @Test("a verified item stays when its parked source can't be deleted; the next run deletes it")
    func failedCleanupKeepsTheTarget() async throws {
        let device = SimulatedDevice()
        let database = FaultyDatabase()
        _ = try Self.addToken(to: database, device, protection: .ck)
        database.failForeignDeletes(true)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter(targetAccessControl: .passcode)],
            source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        let first = try await migration.run()
        #expect(first.items.first?.result == .verified)
        #expect(first.items.first?.resultReason?.contains("could not be removed now") == true)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        #expect(try await app.getItem("token") == "sample-token-0001", "the verified item is not taken back")
        #expect(try Self.foreign(database).map(\.account) == ["token\u{0}apex-parked"])

        #expect(try await migration.isComplete() == false, "a source left to remove is work for the next launch")

        database.failForeignDeletes(false)
        guard case .ran(let second) = try await migration.runIfNeeded() else {
            Issue.record("the next launch must run")
            return
        }
        #expect(second.items.isEmpty, "the parked source is deleted before planning: nothing is left to migrate")
        #expect(try await migration.isComplete())
        #expect(try Self.foreign(database).isEmpty)
        #expect(try await app.getItem("token") == "sample-token-0001")
        #expect(try await Self.journalKeys(database, device).isEmpty)
    }

    @Test("a run stopped between moving a source aside and verifying its target is mended by the next run")
    func interruptedParkingIsMended() async throws {
        let device = SimulatedDevice()
        let database = FaultyDatabase()
        let source = try Self.addToken(to: database, device, protection: .ck)
        // The write fails and so does renaming the source back: as if the process had died in between.
        database.failPackageWrites(service: "app")
        database.failRenames(true)
        let removing = Migration(
            id: .forTests, importers: [PlainImporter(targetAccessControl: .passcode)],
            source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(removeSource: true))
        _ = try await removing.run()
        #expect(try Self.foreign(database).map(\.account) == ["token\u{0}apex-parked"], "left aside, not deleted")
        #expect(try await Self.journalKeys(database, device).count == 1)

        database.failPackageWrites(service: nil)
        database.failRenames(false)
        let keeping = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device))
        let next = try await keeping.run()
        #expect(next.items.map(\.action) == [.conflict], "the source item is back, holding its key")
        #expect(try Self.foreign(database) == [source.attributes])
        #expect(try database.value(for: source.attributes.primaryKey) == Data("sample-token-0001".utf8))
        #expect(try await Self.journalKeys(database, device).isEmpty)
    }

    @Test(
        "a cancelled prompt for a protected source item writes nothing and leaves the source where it was, pending",
        arguments: DatabaseKind.allCases)
    func cancelledVerifyPutsBack(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(defaultAnswer: .canceled)
        let (database, _) = try Self.store([], kind: kind, device: device)
        let source = try Self.addToken(to: database, device, protection: .aku, accessControl: .biometryAny)
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(
                removeSource: true,
                // The iOS keychain doesn't disclose another library's access control: the app names it.
                protectedSourceItems: .readWithPrompt(
                    Prompt(title: "Move your saved sign-in"), accessControl: kind == .secItem ? .biometryAny : nil)))
        let report = try await migration.run()
        #expect(report.items.first?.result == nil)
        #expect(report.items.first?.action == .blocked && report.items.first?.state == .pending)
        #expect(report.items.first?.reason?.hasPrefix("USER_CANCELED") == true, "\(report.items.first?.reason ?? "")")
        #expect(try Self.foreign(database).map(\.primaryKey) == [source.attributes.primaryKey])
        #expect(
            try database.attributes(matching: ItemQuery()).filter(\.isApexItem).allSatisfy {
                $0.service == "apex-keychain.migration"
            })
        #expect(try await Self.journalKeys(database, device).isEmpty)
    }

    @Test(
        "with removeSource, items already migrated by an earlier run have their sources removed",
        arguments: DatabaseKind.allCases)
    func existingItemsLoseTheirSources(kind: DatabaseKind) async throws {
        let (database, device) = try Self.store(
            [("app", "token", "sample-token-0001"), ("app", "skip-this", "sample-keep")], kind: kind)
        let options = ImportOptions(serviceMap: ["app": "moved"])
        let first = try await Migration(
            id: .forTests, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device), policy: MigrationPolicy(importOptions: options)
        ).run()
        #expect(first.summary.verified == 1)
        #expect(try Self.foreign(database).count == 2, "without removeSource the sources stay")
        let second = try await Migration(
            id: MigrationID("cleanup")!, importers: [PlainImporter()], source: .database(database, device: device),
            target: MigrationTarget(database: database, device: device),
            policy: MigrationPolicy(removeSource: true, importOptions: options)
        ).run()
        #expect(
            second.items.map(\.action).sorted { ($0?.rawValue ?? "") < ($1?.rawValue ?? "") } == [.exists, .skipped])
        #expect(try Self.foreign(database).map(\.account) == ["skip-this"])
        let moved = try Keychain(KeychainOptions(service: "moved"), database: database, device: device)
        #expect(try await moved.getItem("token") == "sample-token-0001")
    }
}

/// An in-memory database whose writes of package items in one service fail, as a full disk would.
final class FaultyDatabase: KeychainDatabase, @unchecked Sendable {
    private let base = InMemoryKeychainDatabase()
    private let lock = NSLock()
    private var failingService: String?

    func failPackageWrites(service: String?) {
        lock.withLock { failingService = service }
    }

    private var renamesFail = false
    private var deletesFail = false

    /// Makes every delete of another library's item fail.
    func failForeignDeletes(_ fail: Bool) {
        lock.withLock { deletesFail = fail }
    }

    /// Makes every rename fail but the one that moves a source item aside: a source parked before a failed write
    /// then stays parked, as a process that died in between would leave it.
    func failRenames(_ fail: Bool) {
        lock.withLock { renamesFail = fail }
    }

    private func check(_ item: KeychainItem) throws(KeychainDatabaseError) {
        let failing = lock.withLock { failingService }
        if item.attributes.isApexItem, item.attributes.service == failing {
            throw KeychainDatabaseError(.io, "injected fault")
        }
    }

    func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        try check(item)
        try base.add(item)
    }

    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        try check(item)
        try base.replace(key, with: item)
    }

    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        if lock.withLock({ renamesFail }), !account.hasSuffix("\u{0}apex-parked") {
            throw KeychainDatabaseError(.io, "injected fault")
        }
        try base.rename(key, toAccount: account)
    }

    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        try base.attributes(matching: query)
    }

    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data { try base.value(for: key) }

    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int { try base.delete(matching: query) }

    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        if lock.withLock({ deletesFail }),
            try base.attributes(matching: ItemQuery(service: key.service, account: key.account)).contains(where: {
                !$0.isApexItem
            })
        {
            throw KeychainDatabaseError(.io, "injected fault")
        }
        return try base.delete(key)
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T { try base.exclusively(body) }
}
