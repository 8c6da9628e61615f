import ApexKeychain
import Foundation
import Synchronization

/// A database that counts every call a migration makes, by kind, and forwards it to the one it wraps: each call
/// stands for one keychain round trip on a device (`apple-secitem.md` §8.3), so that tests can hold a run to a
/// number of them. It also counts the values of other libraries' items it hands out, and can run something once
/// after its Nth `add` (the user locks the phone in the middle of a run, say).
final class CountingDatabase: KeychainDatabase, Sendable {
    /// The kinds of calls.
    enum Kind: String, CaseIterable, Sendable {
        case add, replace, rename, attributes, attributesOrAccount, accounts, value, item, authenticatedValue
        case itemsWithValues, deleteMatching, deleteKey
    }

    let base: any KeychainDatabase
    private let counts = Mutex<[Kind: Int]>([:])
    /// The queries of every `itemsWithValues` call, in order.
    private let listings = Mutex<[ItemQuery]>([])
    private let watch = Mutex(Watch())

    private struct Watch {
        /// The keys the calls so far showed holding another library's item: listed so, or written so through
        /// this database, and not written or removed since.
        var foreignKeys: Set<ItemAttributes.PrimaryKey> = []
        var foreignValueReads = 0
        var adds = 0
        var afterAdd: (at: Int, action: @Sendable () -> Void)?

        mutating func saw(_ items: [ItemAttributes]) {
            for a in items { saw(a.primaryKey, foreign: !a.isApexItem) }
        }

        mutating func saw(_ key: ItemAttributes.PrimaryKey, foreign: Bool) {
            if foreign { foreignKeys.insert(key) } else { foreignKeys.remove(key) }
        }

        mutating func read(_ key: ItemAttributes.PrimaryKey) {
            if foreignKeys.contains(key) { foreignValueReads += 1 }
        }
    }

    init(_ base: any KeychainDatabase) { self.base = base }

    /// The calls so far, by kind.
    var calls: [Kind: Int] { counts.withLock { $0 } }
    /// Every call so far.
    var total: Int { calls.values.reduce(0, +) }
    /// The queries of the `itemsWithValues` calls so far.
    var listingQueries: [ItemQuery] { listings.withLock { $0 } }
    /// How many calls of `kind` so far.
    func count(_ kind: Kind) -> Int { calls[kind] ?? 0 }
    /// How many calls so far read the database (listings, look-ups, values).
    var reads: Int {
        let writes: Set<Kind> = [.add, .replace, .rename, .deleteMatching, .deleteKey]
        return calls.filter { !writes.contains($0.key) }.values.reduce(0, +)
    }
    /// How many values of other libraries' items were handed out so far: read one by one (the item listed as
    /// another library's before), or listed with their values.
    var foreignValueReads: Int { watch.withLock { $0.foreignValueReads } }
    /// Forgets the calls so far.
    func reset() {
        counts.withLock { $0 = [:] }
        listings.withLock { $0 = [] }
    }
    /// Runs `action` once, right after the `n`th `add` from now.
    func after(adds n: Int, _ action: @escaping @Sendable () -> Void) {
        watch.withLock { $0.afterAdd = ($0.adds + n, action) }
    }

    /// The calls so far, as `kind=n` sorted by kind (for a test's message).
    var summary: String {
        calls.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }
            .joined(separator: " ")
    }

    private func tick(_ kind: Kind) { counts.withLock { $0[kind, default: 0] += 1 } }

    func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        tick(.add)
        try base.add(item)
        let action: (@Sendable () -> Void)? = watch.withLock { w in
            w.saw(item.attributes.primaryKey, foreign: !item.attributes.isApexItem)
            w.adds += 1
            guard let (at, action) = w.afterAdd, w.adds == at else { return nil }
            w.afterAdd = nil
            return action
        }
        action?()
    }

    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        tick(.replace)
        try base.replace(key, with: item)
        watch.withLock {
            $0.foreignKeys.remove(key)
            $0.saw(item.attributes.primaryKey, foreign: !item.attributes.isApexItem)
        }
    }

    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        tick(.rename)
        try base.rename(key, toAccount: account)
        watch.withLock {
            var renamed = key
            renamed.account = account
            $0.saw(renamed, foreign: $0.foreignKeys.remove(key) != nil)
        }
    }

    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        tick(.attributes)
        let listed = try base.attributes(matching: query)
        watch.withLock { $0.saw(listed) }
        return listed
    }

    func attributes(
        matching query: ItemQuery, orAccount account: String
    ) throws(KeychainDatabaseError) -> [ItemAttributes] {
        tick(.attributesOrAccount)
        let listed = try base.attributes(matching: query, orAccount: account)
        watch.withLock { $0.saw(listed) }
        return listed
    }

    func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String] {
        tick(.accounts)
        return try base.accounts(matching: query)
    }

    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        tick(.value)
        let value = try base.value(for: key)
        watch.withLock { $0.read(key) }
        return value
    }

    func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        tick(.item)
        let item = try base.item(for: key)
        if let item {
            watch.withLock {
                $0.saw(key, foreign: !item.attributes.isApexItem)
                $0.read(key)
            }
        }
        return item
    }

    func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data {
        tick(.authenticatedValue)
        let value = try base.value(for: key, authentication: authentication)
        watch.withLock { $0.read(key) }
        return value
    }

    func item(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> KeychainItem? {
        tick(authentication == nil ? .item : .authenticatedValue)
        return try base.item(for: key, authentication: authentication)
    }

    func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem] {
        tick(.itemsWithValues)
        listings.withLock { $0.append(query) }
        let listed = try base.itemsWithValues(matching: query)
        watch.withLock { w in
            w.saw(listed.map(\.attributes))
            for item in listed { if case .data = item.value { w.read(item.attributes.primaryKey) } }
        }
        return listed
    }

    @discardableResult
    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int {
        tick(.deleteMatching)
        return try base.delete(matching: query)
    }

    @discardableResult
    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        tick(.deleteKey)
        let deleted = try base.delete(key)
        watch.withLock { _ = $0.foreignKeys.remove(key) }
        return deleted
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T { try base.exclusively(body) }

    func atomically<T>(_ body: () throws -> T) throws -> T { try base.atomically(body) }

    func problem(with device: any Device) -> String? { base.problem(with: device) }
}
