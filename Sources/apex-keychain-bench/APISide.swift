import ApexKeychain
import ApexKeychainStore
import Foundation

/// The measured side: a ``Keychain`` on an ``SQLiteKeychainDatabase`` store (device profile `linux`, key file).
final class APISide {
    let database: SQLiteKeychainDatabase
    let keychain: Keychain
    let storeURL: URL
    private(set) var count = 0
    /// Keeps results alive so that the optimiser can't drop a call.
    private(set) var sink = 0

    init(directory: URL) throws {
        storeURL = directory.appendingPathComponent("api.store")
        let keyFile = SQLiteKeychainDatabase.defaultKeyFile(for: storeURL)
        database = try SQLiteKeychainDatabase.create(at: storeURL, key: .keyFile(keyFile), device: .linux)
        keychain = try Keychain(
            KeychainOptions(service: Names.service, accessGroup: Names.accessGroup), database: database,
            device: database.makeDevice(passcode: .none))
    }

    /// Grows the store to `target` items (keys `item-000000` …).
    ///
    /// The first item is written by `setItem`. The others are that item's attributes (creator mark, metadata,
    /// protection) under other accounts, added by the store's own `add` (which seals each value with its
    /// associated data) in transactions of `batch` items — the same rows `setItem` writes, without an fsync per
    /// item. A sample of them is then read back through the API.
    func populate(to target: Int, values: [String], batch: Int = 5_000) async throws {
        if count == 0 {
            try await keychain.setItem(Names.key(0), values[0])
            count = 1
        }
        guard count < target else { return }
        let query = ItemQuery(
            itemClass: .genericPassword, service: Names.service, account: Names.key(0), accessGroup: Names.accessGroup)
        guard let template = try database.attributes(matching: query).first else {
            throw BenchError("the item written by setItem is not in the store")
        }
        var next = count
        while next < target {
            let end = min(target, next + batch)
            try database.exclusively {
                for index in next..<end {
                    var attributes = template
                    attributes.account = Names.key(index)
                    try database.add(
                        KeychainItem(attributes: attributes, value: Data(values[index % values.count].utf8)))
                }
            }
            next = end
        }
        for index in [count, (count + target) / 2, target - 1] {
            guard try await keychain.getItem(Names.key(index)) == values[index % values.count] else {
                throw BenchError("populated item \(Names.key(index)) does not read back through getItem")
            }
        }
        count = target
    }

    // MARK: Timed operations (each returns nanoseconds for the whole slice)

    func set(_ keys: ArraySlice<String>, values: [String]) async throws -> UInt64 {
        let start = Clock.nanoseconds()
        var v = 0
        for key in keys {
            try await keychain.setItem(key, values[v])
            v = v + 1 == values.count ? 0 : v + 1
        }
        return Clock.nanoseconds() - start
    }

    func get(_ keys: ArraySlice<String>) async throws -> UInt64 {
        var total = 0
        let start = Clock.nanoseconds()
        for key in keys {
            guard let value = try await keychain.getItem(key) else { throw BenchError("getItem(\(key)) found nothing") }
            total &+= value.utf8.count
        }
        let elapsed = Clock.nanoseconds() - start
        sink &+= total
        return elapsed
    }

    func info(_ keys: ArraySlice<String>) async throws -> UInt64 {
        var total = 0
        let start = Clock.nanoseconds()
        for key in keys {
            guard let info = try await keychain.getItemInfo(key) else {
                throw BenchError("getItemInfo(\(key)) found nothing")
            }
            total &+= Int(truncatingIfNeeded: info.modifiedAt)
        }
        let elapsed = Clock.nanoseconds() - start
        sink &+= total
        return elapsed
    }

    /// One getAllKeys; the nanoseconds and how many keys it listed.
    func listAll() async throws -> (nanoseconds: UInt64, keys: Int) {
        let start = Clock.nanoseconds()
        let keys = try await keychain.getAllKeys()
        let elapsed = Clock.nanoseconds() - start
        guard keys.count == count else {
            throw BenchError("getAllKeys listed \(keys.count) keys; the store holds \(count)")
        }
        sink &+= keys.count
        return (elapsed, keys.count)
    }
}
