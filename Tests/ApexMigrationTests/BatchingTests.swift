import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexTestSupport
import Foundation
import Testing

@testable import ApexMigration

/// Writes in batches (``MigrationPolicy/Batching``) change how many commits a run makes, never what it leaves:
/// the unbatched path (one item per batch, or a database whose calls each commit on their own) is the oracle of
/// the batched one, and a batch that can't be committed is undone as a whole.
@Suite("Batched writes")
struct BatchingTests {
    /// 40 items of every kind: protections with and without access control, skipped, sealed and blocked ones, and
    /// two keys the target already holds (one with the same value, one with another).
    static let records: [(service: String, account: String, value: String, pdmn: String, flags: AccessControlFlags)] =
        (0..<34).map { index in
            let flags: AccessControlFlags = index % 9 == 4 ? [.biometryAny] : index % 9 == 7 ? [.devicePasscode] : []
            return (
                index % 3 == 0 ? "vault" : "app", "key-\(index)", "sample-value-\(index)",
                ["ck", "aku", "akpu"][index % 3], flags
            )
        } + [
            ("app", "skip-one", "sample-skip", "ck", []), ("app", "sealed-one", "sample-sealed", "ck", []),
            ("app", "blocked-one", "sample-blocked", "ck", []), ("app", "same", "sample-same", "ck", []),
            ("app", "other", "sample-other", "ck", []), ("vault", "key-last", "sample-last", "ck", []),
        ]

    /// The fingerprint key every target starts with, so that their ledgers can be compared byte for byte.
    static let fingerprintKey = Data(repeating: 7, count: 32)

    /// Prepares `database` as every run here finds it, and returns the target.
    static func target(_ database: any KeychainDatabase) async throws -> MigrationTarget {
        let target = MigrationTarget(database: database, device: SimulatedDevice())
        let ledger = try target.keychain(service: Ledger.service)
        try await ledger.setBytes(
            "key:default", fingerprintKey, SetOptions(accessible: .afterFirstUnlockThisDeviceOnly))
        let app = try target.keychain(service: "app")
        try await app.setItem("same", "sample-same", SetOptions(accessible: .afterFirstUnlock))
        try await app.setItem("other", "someone-else's", SetOptions(accessible: .afterFirstUnlock))
        return target
    }

    static func migration(_ target: MigrationTarget, _ batching: MigrationPolicy.Batching) -> Migration {
        Migration(
            id: .forTests, importers: [PlainImporter()], source: .dumps([dump(records)]), target: target,
            policy: MigrationPolicy(batching: batching))
    }

    /// Everything the target holds but the names of the ledger's entry records (how many there are depends on
    /// the batches): every item with its value, and the ledger's entry of every item of the dump.
    static func state(_ target: MigrationTarget) async throws -> (items: [String], entries: [String]) {
        let items = try target.database.attributes(matching: ItemQuery()).filter { !$0.account.hasPrefix("entries:") }
            .map { attributes in
                let value = try target.database.value(for: attributes.primaryKey)
                // The record of pending items is JSON whose keys come in no fixed order: compared decoded.
                guard attributes.account.hasPrefix("pending:") else {
                    return "\(attributes) = \(value.base64EncodedString())"
                }
                let pending = try JSONDecoder().decode(Ledger.Pending.self, from: value)
                return "\(attributes) = \(pending.runs.sorted { $0.key < $1.key }) \(pending.sources)"
            }.sorted()
        let ledger = try Ledger(target: target, id: "default")
        var entries: [String] = []
        for item in try PlainImporter().importItems(from: [dump(records)], options: ImportOptions()) {
            guard let place = item.target else { continue }
            entries.append("\(place.service)/\(place.key): \(String(describing: try await ledger.entry(for: place)))")
        }
        return (items, entries)
    }

    static func store() throws -> SQLiteKeychainDatabase {
        let folder = try ScratchFolder.perProcess()
        let url = folder.appendingPathComponent("store.db")
        return try SQLiteKeychainDatabase.create(
            at: url, key: .keyFile(SQLiteKeychainDatabase.defaultKeyFile(for: url)), device: .ios)
    }

    @Test(
        "batches of 512, of 7 and of 1, on a store, in memory and on a database that commits each call, leave the same items, ledger and report"
    )
    func batchedMatchesUnbatched() async throws {
        let oracle = try await Self.target(Self.store())
        let expected = try await Self.migration(oracle, .oneByOne).run()
        #expect(expected.summary.verified == 35 && expected.summary.exists == 1 && expected.summary.conflict == 1)
        let oracleState = try await Self.state(oracle)
        let runs: [(String, any KeychainDatabase, MigrationPolicy.Batching)] = [
            ("store, batches of 512", try Self.store(), .standard),
            ("store, batches of 7", try Self.store(), .init(items: 7, duration: 3600)),
            (
                "a database that commits each call, batches of 7", CallByCallDatabase(try Self.store()),
                .init(items: 7, duration: 3600)
            ),
            ("in memory, batches of 7", InMemoryKeychainDatabase(), .init(items: 7, duration: 3600)),
        ]
        for (name, database, batching) in runs {
            let target = try await Self.target(database)
            let report = try await Self.migration(target, batching).run()
            #expect(report.items == expected.items, "\(name): the report")
            let state = try await Self.state(target)
            #expect(state.items == oracleState.items, "\(name): the items")
            #expect(state.entries == oracleState.entries, "\(name): the ledger")
        }
    }

    @Test("a ledger record written directly reads back with JSONDecoder as the entries it was made of")
    func recordEncoding() throws {
        let stale = Ledger.SourceKey(
            ItemAttributes(service: "app:auth", account: "token", accessGroup: "G.app").primaryKey)
        var entries: [String: Ledger.Entry] = [
            "0a1b": .init(fingerprint: "q83v+/A=", state: .pending),
            "2c3d": .init(fingerprint: "AAAA", state: .verified, staleCopies: [stale]),
        ]
        for plain in [true, false] {
            if !plain { entries["4e5f"] = .init(fingerprint: "needs \"escaping\"\n", state: .verified) }
            let data = try Ledger.encode(entries)
            #expect(try JSONDecoder().decode([String: Ledger.Entry].self, from: data) == entries)
        }
        #expect(try Ledger.encode([:]) == Data("{}".utf8))
    }

    @Test(
        "a batch whose commit fails is undone as a whole with the end of the batch before, the batches before stay, and the next run completes the rest"
    )
    func failedCommitUndoesTheBatch() async throws {
        let database = CommitFailingDatabase(failing: 3)
        let target = try await Self.target(database)
        let batching = MigrationPolicy.Batching(items: 7, duration: 3600)
        let plan = try await Self.migration(target, batching).plan()
        let creates = plan.actions.filter { $0.action == .create }.compactMap(\.item.target)
        await #expect(throws: MigrationError.self) { try await Self.migration(target, batching).run() }

        // Scope 1 wrote the first batch, scope 2 verified it and wrote the second; scope 3 would have verified the
        // second and written the third: the first batch is verified, the second written and pending, the third
        // not there.
        let ledger = try Ledger(target: target, id: "default")
        for (index, place) in creates.enumerated() {
            let held = try await target.keychain(service: place.service).hasItem(place.key)
            let entry = try await ledger.entry(for: place)
            #expect(held == (index < 14), "\(place.key)")
            #expect(entry?.state == (index < 7 ? .verified : index < 14 ? .pending : nil), "\(place.key)'s entry")
        }

        let resumed = try await Self.migration(target, batching).run()
        #expect(resumed.summary.failed == 0 && resumed.summary.conflict == 1)
        #expect(resumed.summary.verified + resumed.summary.exists == creates.count + 1)
        let oracle = try await Self.target(Self.store())
        _ = try await Self.migration(oracle, .oneByOne).run()
        let state = try await Self.state(target)
        let oracleState = try await Self.state(oracle)
        #expect(state.items == oracleState.items)
        #expect(state.entries == oracleState.entries)
    }
}

/// A database that passes every call to `base` (what the two below change, they implement themselves).
protocol ForwardingDatabase: KeychainDatabase {
    var base: any KeychainDatabase { get }
}

extension ForwardingDatabase {
    func add(_ item: KeychainItem) throws(KeychainDatabaseError) { try base.add(item) }
    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        try base.replace(key, with: item)
    }
    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        try base.rename(key, toAccount: account)
    }
    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        try base.attributes(matching: query)
    }
    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data { try base.value(for: key) }
    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int { try base.delete(matching: query) }
    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool { try base.delete(key) }
}

/// A database whose every call commits on its own: it passes calls to a store, and keeps the protocol's default
/// `atomically` and a non-atomic `exclusively`, as a database that can't group writes.
final class CallByCallDatabase: ForwardingDatabase, @unchecked Sendable {
    let base: any KeychainDatabase
    private let lock = NSRecursiveLock()

    init(_ base: any KeychainDatabase) { self.base = base }

    func exclusively<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// An in-memory database whose `n`th outermost `atomically` scope fails as its commit would (an I/O error):
/// the scope is undone and the error thrown.
final class CommitFailingDatabase: ForwardingDatabase, @unchecked Sendable {
    let base: any KeychainDatabase = InMemoryKeychainDatabase()
    private let lock = NSLock()
    private var scopes = 0
    private var depth = 0
    private let failing: Int

    init(failing n: Int) { failing = n }

    func exclusively<T>(_ body: () throws -> T) throws -> T { try base.exclusively(body) }

    func atomically<T>(_ body: () throws -> T) throws -> T {
        let number = lock.withLock {
            depth += 1
            if depth == 1 { scopes += 1 }
            return depth == 1 ? scopes : 0
        }
        defer { lock.withLock { depth -= 1 } }
        return try base.atomically {
            let result = try body()
            if number == failing { throw KeychainDatabaseError(.io, "injected failure of the commit") }
            return result
        }
    }
}
