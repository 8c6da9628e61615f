import Foundation

/// The status of a failed database call, as the keychain's `OSStatus` codes name them.
public struct DatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which failure.
    public enum Status: String, Sendable, Equatable {
        /// `errSecDuplicateItem`: an item with the same primary key exists.
        case duplicateItem
        /// `errSecItemNotFound`: no item matches.
        case itemNotFound
        /// `errSecInteractionNotAllowed`: the item's class key is not available now (device locked).
        case interactionNotAllowed
        /// `errSecDecode`: the stored item is damaged or was tampered with.
        case damaged
        /// An I/O fault: the database could not be read or written.
        case io
    }

    /// Which failure.
    public let status: Status
    /// A description for people; never contains a value.
    public let message: String

    /// Creates an error.
    public init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// `status: message`.
    public var description: String { "\(status.rawValue): \(message)" }
}

/// The storage under a ``Keychain``: the keychain's SecItem surface over typed attributes.
///
/// A database holds the package's own items and may hold other libraries' items too (loaded from a dump).
/// It enforces the primary key and nothing else: who may see or change which item is the ``Keychain``'s
/// business. Each call is atomic on its own; ``exclusively(_:)`` keeps other writers out of a sequence of
/// calls but does not make the sequence atomic, as on a device.
public protocol KeychainDatabase: AnyObject, Sendable {
    /// Adds an item.
    /// - Throws: ``DatabaseError`` `duplicateItem` when an item with the same primary key exists.
    func add(_ item: KeychainItem) throws(DatabaseError)

    /// Replaces the attributes and value of the one item whose primary key is `key`.
    /// - Throws: `itemNotFound`, or `duplicateItem` when the new primary key is taken by another item.
    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(DatabaseError)

    /// Changes only the account of the item whose primary key is `key` (moves it to another key).
    /// - Throws: `itemNotFound`, or `duplicateItem` when the new primary key is taken.
    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(DatabaseError)

    /// The attributes of every item that matches, in no particular order. Never reads a value.
    func attributes(matching query: ItemQuery) throws(DatabaseError) -> [ItemAttributes]

    /// The accounts of every item that matches, in no particular order (a listing that needs nothing else).
    func accounts(matching query: ItemQuery) throws(DatabaseError) -> [String]

    /// The value of the item whose primary key is `key`.
    /// - Throws: `itemNotFound`, `interactionNotAllowed`, or `damaged` when the value can't be opened.
    func value(for key: ItemAttributes.PrimaryKey) throws(DatabaseError) -> Data

    /// Deletes every item that matches and returns how many there were.
    @discardableResult
    func delete(matching query: ItemQuery) throws(DatabaseError) -> Int

    /// Deletes the item whose primary key is `key`, if there is one; returns whether there was.
    @discardableResult
    func delete(_ key: ItemAttributes.PrimaryKey) throws(DatabaseError) -> Bool

    /// Runs `body` with no other writer of this database in between. Calls inside may still fail one by one.
    func exclusively<T>(_ body: () throws -> T) throws -> T
}

extension KeychainDatabase {
    /// The accounts of the matching items, from their attributes. Databases that can answer from an index
    /// implement it themselves.
    public func accounts(matching query: ItemQuery) throws(DatabaseError) -> [String] {
        try attributes(matching: query).map(\.account)
    }
}
