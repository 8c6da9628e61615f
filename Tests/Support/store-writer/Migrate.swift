import ApexDumps
import ApexKeychain
import ApexKeychainStore
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import Synchronization

/// A store that counts events and kills this process with SIGKILL at one of them: the start of every write call
/// (before it runs), and the commit of every outermost ``atomically(_:)`` scope (after it returns). Reads and
/// everything else pass straight through.
final class KillSwitchDatabase: KeychainDatabase {
    let base: SQLiteKeychainDatabase
    let killAt: Int?
    private let counts = Mutex((events: 0, depth: 0))

    init(_ base: SQLiteKeychainDatabase, killAt: Int?) {
        self.base = base
        self.killAt = killAt
    }

    /// How many events so far.
    var events: Int { counts.withLock { $0.events } }

    private func event() {
        let number = counts.withLock { counts in
            counts.events += 1
            return counts.events
        }
        if number == killAt { kill(getpid(), SIGKILL) }
    }

    func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        event()
        try base.add(item)
    }

    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        event()
        try base.replace(key, with: item)
    }

    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        event()
        try base.rename(key, toAccount: account)
    }

    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        try base.attributes(matching: query)
    }

    func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String] {
        try base.accounts(matching: query)
    }

    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        try base.value(for: key)
    }

    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int {
        event()
        return try base.delete(matching: query)
    }

    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        event()
        return try base.delete(key)
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T {
        try base.exclusively(body)
    }

    func atomically<T>(_ body: () throws -> T) throws -> T {
        let outermost = counts.withLock { counts in
            counts.depth += 1
            return counts.depth == 1
        }
        defer { counts.withLock { $0.depth -= 1 } }
        let result = try base.atomically(body)
        if outermost { event() }
        return result
    }
}

/// The `--migrate` mode: one migration run into the store, in batches of `batch` items.
func migrate(store: String, keyFile: String, source: String, batch: Int, killAt: Int?) async {
    let database: SQLiteKeychainDatabase
    do {
        database = try SQLiteKeychainDatabase(
            opening: URL(fileURLWithPath: store), key: .keyFile(URL(fileURLWithPath: keyFile)))
    } catch {
        fail(2, "\(error)")
    }
    let counting = KillSwitchDatabase(database, killAt: killAt)
    // expo's items carry its app's access group: the device is that app's.
    let device = SimulatedDevice(bundleIdentifier: "com.example.expoapp", teamIdentifier: "A1B2C3D4E5")
    let from: MigrationSource
    var policy = MigrationPolicy(batching: .init(items: batch, duration: 3600))
    if source == "store" {
        from = .database(counting, device: device)
        policy.removeSource = true
    } else {
        do {
            from = .dumps(try DumpReader.readAll(paths: [source]))
        } catch {
            fail(1, "can't read \(source): \(error)")
        }
    }
    let migration = Migration(
        id: .forTests, importers: [ExpoSecureStoreImporter(), ReactNativeEncryptedStorageImporter()], source: from,
        target: MigrationTarget(database: counting, device: device),
        policy: policy)
    do {
        let report = try await migration.run()
        say("events \(counting.events)")
        say("verified \(report.summary.verified)")
    } catch {
        fail(4, "the migration failed: \(error)")
    }
}

extension MigrationID {
    /// The id of the tests' migrations: the `migrate` command's when it is given none, whose ledger the tests read
    /// as `Ledger(target:id: "default")`.
    static let forTests = MigrationID("default")!
}
