import ApexKeychain
import Foundation
import Synchronization

/// A database that passes every call to `base`, counts renames, and reads the package's items back other than
/// they were written while told to: with another value (a write that did not store what it was given), or with a
/// weaker class (`ck`, an item that lost its protection).
final class MisreadingDatabase: ForwardingDatabase, Sendable {
    let base: any KeychainDatabase
    private let state = Mutex((value: false, protection: false, renames: 0))

    init(_ base: any KeychainDatabase) { self.base = base }

    /// Whether a read of a package item's value gets another value.
    var misreadPackageValues: Bool {
        get { state.withLock { $0.value } }
        set { state.withLock { $0.value = newValue } }
    }
    /// Whether a read of a package item with its attributes finds the class `ck`.
    var misreadPackageProtection: Bool {
        get { state.withLock { $0.protection } }
        set { state.withLock { $0.protection = newValue } }
    }
    /// How many renames were asked for.
    var renames: Int { state.withLock { $0.renames } }

    private func misread(_ item: KeychainItem) -> KeychainItem {
        guard item.attributes.isApexItem else { return item }
        var read = item
        if misreadPackageValues { read.value += Data("-misread".utf8) }
        if misreadPackageProtection { read.attributes.protectionDomain = .ck }
        return read
    }

    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        state.withLock { $0.renames += 1 }
        try base.rename(key, toAccount: account)
    }
    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        try value(for: key, authentication: nil)
    }
    func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data {
        let value = try base.value(for: key, authentication: authentication)
        guard misreadPackageValues, try base.item(for: key)?.attributes.isApexItem == true else { return value }
        return value + Data("-misread".utf8)
    }
    func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        try item(for: key, authentication: nil)
    }
    func item(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> KeychainItem? {
        try base.item(for: key, authentication: authentication).map { misread($0) }
    }
    func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem] {
        try base.itemsWithValues(matching: query)
    }
    func exclusively<T>(_ body: () throws -> T) throws -> T { try base.exclusively(body) }
    func atomically<T>(_ body: () throws -> T) throws -> T { try base.atomically(body) }
    func problem(with device: any Device) -> String? { base.problem(with: device) }
}
