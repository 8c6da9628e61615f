import ApexDumps
import ApexMigration
import Foundation
import Synchronization
import Testing

@testable import ApexKeychain

/// A database that lets another writer in at the worst moment: just before a write of `key` looks at what the key
/// holds (inside the write's own transaction), it adds `intruder` once, as a writer that committed a moment
/// earlier would have.
private final class IntrudedDatabase: KeychainDatabase {
    let inner = InMemoryKeychainDatabase()
    private let pending: Mutex<KeychainItem?>
    private let key: String

    init(key: String, intruder: KeychainItem) {
        self.key = key
        pending = Mutex(intruder)
    }

    func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        // A write of the key that adds without a look-up first (the plan saw it absent) meets the intruder too.
        if item.attributes.isApexItem, item.attributes.account == key, let intruder = takeIntruder() {
            try inner.add(intruder)
        }
        try inner.add(item)
    }
    private func takeIntruder() -> KeychainItem? {
        pending.withLock { item -> KeychainItem? in
            defer { item = nil }
            return item
        }
    }
    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        try inner.replace(key, with: item)
    }
    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        try inner.rename(key, toAccount: account)
    }
    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        if query.account == key,
            let intruder = pending.withLock({ item -> KeychainItem? in
                defer { item = nil }
                return item
            })
        {
            try inner.add(intruder)
        }
        return try inner.attributes(matching: query)
    }
    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data { try inner.value(for: key) }
    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int { try inner.delete(matching: query) }
    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool { try inner.delete(key) }
    func exclusively<T>(_ body: () throws -> T) throws -> T { try inner.exclusively(body) }
}

/// Review, "Concurrent migrations overwrite each other": two runs into one store both wrote the same keys and
/// both said verified. A migration's write now happens only if the target key still holds what the plan saw,
/// checked in the write's own transaction; otherwise nothing is written and the item is a `conflict`.
@Suite("Concurrent writers")
struct ConcurrentWriterTests {
    /// The package item another writer puts under `app/token`: made by a keychain of its own, then lifted out.
    static func othersItem(device: SimulatedDevice) async throws -> KeychainItem {
        let scratch = InMemoryKeychainDatabase()
        try await Keychain(KeychainOptions(service: "app"), database: scratch, device: device)
            .setItem("token", "someone-else's-token", SetOptions(accessible: .afterFirstUnlock))
        return try #require(scratch.allItems().first)
    }

    @Test("a key taken between the plan and the write is a conflict: nothing written over it, nothing verified")
    func keyTakenAfterThePlan() async throws {
        let device = SimulatedDevice()
        let database = IntrudedDatabase(key: "token", intruder: try await Self.othersItem(device: device))
        let target = MigrationTarget(database: database, device: device)
        let records: [(service: String, account: String, value: String, pdmn: String, flags: AccessControlFlags)] = [
            ("app", "token", "sample-token-0001", "ck", []), ("app", "other", "sample-other-0002", "ck", []),
        ]
        let migration = Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target)
        let report = try await migration.run()

        let token = try #require(report.items.first { $0.source.account == "token" })
        #expect(token.action == .conflict)
        #expect(token.result == nil)
        #expect(token.reason?.contains("changed after the plan") == true)
        #expect(report.items.first { $0.source.account == "other" }?.result == .verified)
        #expect(report.summary.conflict == 1 && report.summary.create == 1 && report.summary.verified == 1)
        let app = try Keychain(KeychainOptions(service: "app"), database: database, device: device)
        #expect(try await app.getItem("token") == "someone-else's-token")

        // The next run finds the other writer's item where the plan looks, and says the same.
        let again = try await migration.run()
        #expect(again.items.first { $0.source.account == "token" }?.action == .conflict)
        #expect(try await app.getItem("token") == "someone-else's-token")
    }

    @Test("a conditional write checks in its own transaction: absent, or the very item that was seen")
    func conditionalWrite() async throws {
        let device = SimulatedDevice()
        let keychain = try Keychain(database: InMemoryKeychainDatabase(), device: device)
        #expect(try keychain.setItem("k", "first", SetOptions(), expecting: .absent))
        #expect(try !keychain.setItem("k", "second", SetOptions(), expecting: .absent))
        #expect(try await keychain.getItem("k") == "first")
        let seen = try #require(try await keychain.getItemInfo("k"))
        device.advanceClock(by: 1)
        #expect(try keychain.setBytes("k", Data("third".utf8), SetOptions(), expecting: .own(seen)))
        // The item changed since `seen` was taken: its modified date moved.
        device.advanceClock(by: 1)
        #expect(try !keychain.setItem("k", "fourth", SetOptions(), expecting: .own(seen)))
        #expect(try await keychain.getBytes("k") == Data("third".utf8))
        #expect(
            try keychain.setCredentials(
                Credentials(username: "u", password: "p"), CredentialsOptions(), expecting: .absent))
        #expect(
            try !keychain.setCredentials(
                Credentials(username: "u", password: "p2"), CredentialsOptions(), expecting: .absent))
    }
}
