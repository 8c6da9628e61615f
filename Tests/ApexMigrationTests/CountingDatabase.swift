import ApexKeychain
import Foundation
import Synchronization

/// A database that counts every call a migration makes, by kind, and forwards it to the one it wraps: each call
/// stands for one keychain round trip on a device (`apple-secitem.md` §8.3), so that tests can hold a run to a
/// number of them.
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

    init(_ base: any KeychainDatabase) { self.base = base }

    /// The calls so far, by kind.
    var calls: [Kind: Int] { counts.withLock { $0 } }
    /// Every call so far.
    var total: Int { calls.values.reduce(0, +) }
    /// The queries of the `itemsWithValues` calls so far.
    var listingQueries: [ItemQuery] { listings.withLock { $0 } }
    /// How many calls of `kind` so far.
    func count(_ kind: Kind) -> Int { calls[kind] ?? 0 }
    /// Forgets the calls so far.
    func reset() {
        counts.withLock { $0 = [:] }
        listings.withLock { $0 = [] }
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
    }

    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        tick(.replace)
        try base.replace(key, with: item)
    }

    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        tick(.rename)
        try base.rename(key, toAccount: account)
    }

    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        tick(.attributes)
        return try base.attributes(matching: query)
    }

    func attributes(
        matching query: ItemQuery, orAccount account: String
    ) throws(KeychainDatabaseError) -> [ItemAttributes] {
        tick(.attributesOrAccount)
        return try base.attributes(matching: query, orAccount: account)
    }

    func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String] {
        tick(.accounts)
        return try base.accounts(matching: query)
    }

    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        tick(.value)
        return try base.value(for: key)
    }

    func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        tick(.item)
        return try base.item(for: key)
    }

    func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data {
        tick(.authenticatedValue)
        return try base.value(for: key, authentication: authentication)
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
        return try base.itemsWithValues(matching: query)
    }

    @discardableResult
    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int {
        tick(.deleteMatching)
        return try base.delete(matching: query)
    }

    @discardableResult
    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        tick(.deleteKey)
        return try base.delete(key)
    }

    func exclusively<T>(_ body: () throws -> T) throws -> T { try base.exclusively(body) }

    func atomically<T>(_ body: () throws -> T) throws -> T { try base.atomically(body) }

    func problem(with device: any Device) -> String? { base.problem(with: device) }
}
