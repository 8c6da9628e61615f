import Foundation

/// The status of a failed database call, as the keychain's `OSStatus` codes name them.
public struct KeychainDatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
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
        /// `errSecAuthFailed`: the user failed to authenticate, or the item can't be used as asked.
        case authFailed
        /// `errSecUserCanceled`: the user dismissed the prompt.
        case userCanceled
        /// `errSecMissingEntitlement`: the access group is not one of the app's.
        case missingEntitlement
        /// `errSecNotAvailable`: no keychain, or no key for the item's class (a `whenPasscodeSetThisDeviceOnly`
        /// item without a passcode).
        case notAvailable
        /// `errSecParam`: the database refused the query itself.
        case invalidQuery
        /// Any other status; ``KeychainDatabaseError/osStatus`` holds its number.
        case other
    }

    /// Which failure.
    public let status: Status
    /// A description for people; never contains a value.
    public let message: String
    /// The platform's own status number (an `OSStatus`), when the error came from one.
    public let osStatus: Int32?

    /// Creates an error.
    public init(_ status: Status, _ message: String, osStatus: Int32? = nil) {
        self.status = status
        self.message = message
        self.osStatus = osStatus
    }

    /// `status: message`.
    public var description: String { "\(status.rawValue): \(message)" }
}

/// The storage under a ``Keychain``: the keychain's SecItem surface over typed attributes.
///
/// A database holds the package's own items and may hold other libraries' items too (loaded from a dump).
/// It enforces the primary key and nothing else: who may see or change which item is the ``Keychain``'s
/// business. Each call is atomic on its own; ``exclusively(_:)`` keeps other writers out of a sequence of
/// calls but does not make the sequence atomic, as on a device. ``atomically(_:)`` makes a sequence one
/// transaction where the database can: many writes, one durable commit.
public protocol KeychainDatabase: AnyObject, Sendable {
    /// Adds an item.
    /// - Throws: ``KeychainDatabaseError`` `duplicateItem` when an item with the same primary key exists.
    func add(_ item: KeychainItem) throws(KeychainDatabaseError)

    /// Replaces the attributes and value of the one item whose primary key is `key`.
    /// - Throws: `itemNotFound`, or `duplicateItem` when the new primary key is taken by another item.
    func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError)

    /// Changes only the account of the item whose primary key is `key` (moves it to another key).
    /// - Throws: `itemNotFound`, or `duplicateItem` when the new primary key is taken.
    func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError)

    /// The attributes of every item that matches, in no particular order. Never reads a value.
    func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes]

    /// The attributes of every item that matches `query`, or matches it with `account` as its account: a key and
    /// another key of the same service in one look-up where the database can (the default makes two).
    func attributes(
        matching query: ItemQuery, orAccount account: String
    ) throws(KeychainDatabaseError) -> [ItemAttributes]

    /// The accounts of every item that matches, in no particular order (a listing that needs nothing else).
    func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String]

    /// The value of the item whose primary key is `key`.
    /// - Throws: `itemNotFound`, `interactionNotAllowed`, or `damaged` when the value can't be opened.
    func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data

    /// The attributes and value of the item whose primary key is `key`, or nil when there is none: a read of its
    /// value, as ``value(for:)`` is, with one look-up where the database can (the default reads the attributes,
    /// then the value).
    /// - Throws: `interactionNotAllowed`, or `damaged` when the value can't be opened.
    func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem?

    /// The value of the item whose primary key is `key`, read with the context a prompt that passed left
    /// (``Authentication/context``): on iOS the keychain takes it, so that the read needs no second prompt.
    /// Without a context, a read that would need the user fails with `interactionNotAllowed`. The default
    /// ignores the context and calls ``value(for:)``.
    func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data

    /// The attributes and value of the item whose primary key is `key`, read with the context a prompt that passed
    /// left, or nil when there is none: ``item(for:)`` as ``value(for:authentication:)`` reads, in one look-up where
    /// the database can. What a read-back that must check the item's protection as well as its value needs. The
    /// default, without a context, is ``item(for:)``; with one, it reads the attributes, then the value with it.
    /// - Throws: `interactionNotAllowed` (no context, or one that doesn't open the item), or `damaged`.
    func item(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> KeychainItem?

    /// Every item that matches, with its value where it can be read without the user: the items with access
    /// control are listed with ``ListedItem/Value-swift.enum/needsAuthentication`` and their value is not read. One listing with
    /// values per class where the database can (a device's keychain: `apple-secitem.md` §8.2); the default lists
    /// the attributes and reads each value.
    func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem]

    /// Deletes every item that matches and returns how many there were.
    @discardableResult
    func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int

    /// Deletes the item whose primary key is `key`, if there is one; returns whether there was.
    @discardableResult
    func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool

    /// Runs `body` with no other writer of this database in between. Calls inside may still fail one by one.
    func exclusively<T>(_ body: () throws -> T) throws -> T

    /// Runs `body` as one transaction: no other writer in between, and its writes are kept together or undone
    /// together. When `body` returns, all of them are kept (on a store, with one durable commit: a batch of
    /// writes costs one commit, not one per write); when it throws, every write it made is undone and the error
    /// passes through unchanged. A process that dies inside `body` leaves none of its writes.
    ///
    /// - A call inside that fails changes nothing, as outside, and the transaction goes on: `body` may catch the
    ///   error and continue.
    /// - Inside another `atomically`, `body` is a nested scope: when it throws, only its own writes are undone.
    ///   Code that needs a sequence undone when it fails part-way uses `atomically`, never ``exclusively(_:)``.
    /// - `body` is synchronous: nothing inside may wait for a user (a write never prompts), so that other
    ///   writers wait for a batch no longer than its writes take.
    ///
    /// The default, for a database that can't group writes, runs `body` under ``exclusively(_:)``: each call is
    /// atomic and durable on its own, and a failure part-way leaves the calls before it done. Code that uses it
    /// must then order its writes as it would without a batch.
    func atomically<T>(_ body: () throws -> T) throws -> T

    /// Why `device` can't be the device of this database's items, or nil when it can. A database that models one
    /// device (a store records its device profile) answers for a device whose state its own doesn't share: an
    /// item written through such a device (a `biometryCurrentSet` item bound to another enrolled set, one that
    /// needs a passcode the database's device doesn't have) would be invalidated, and removed, at the first read
    /// through the database's own device. A migration refuses such a pair before it reads or writes anything.
    /// The default accepts any device (an in-memory database has none of its own). A database that wraps another
    /// (one that counts, delays or fails calls, say) must forward this to the database it wraps: with the
    /// default, a wrapper around a `SQLiteKeychainDatabase` accepts every device, and the store's check is skipped.
    func problem(with device: any Device) -> String?
}

extension KeychainDatabase {
    /// ``value(for:)``: a database that needs no context ignores it.
    public func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data {
        try value(for: key)
    }

    /// ``attributes(matching:)``, then ``value(for:)`` of each item without access control.
    public func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem] {
        var listed: [ListedItem] = []
        for attributes in try self.attributes(matching: query) {
            guard attributes.accessControl.isEmpty else {
                listed.append(ListedItem(attributes: attributes, value: .needsAuthentication))
                continue
            }
            do {
                listed.append(ListedItem(attributes: attributes, value: .data(try value(for: attributes.primaryKey))))
            } catch  where error.status == .itemNotFound {
                listed.append(ListedItem(attributes: attributes, value: .gone))
            } catch  where error.status == .interactionNotAllowed {
                throw error
            } catch {
                listed.append(ListedItem(attributes: attributes, value: .failed(error)))
            }
        }
        return listed
    }

    /// Nil: any device. A database that wraps another must forward the call instead (see the requirement).
    public func problem(with device: any Device) -> String? { nil }

    /// ``exclusively(_:)``: each call inside is atomic and durable on its own (see the requirement).
    public func atomically<T>(_ body: () throws -> T) throws -> T {
        try exclusively(body)
    }

    /// Without a context, ``item(for:)``; with one, the attributes of the item under `key`, then its value read
    /// with the context.
    public func item(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> KeychainItem? {
        guard let authentication else { return try item(for: key) }
        return try attributesThenValue(key) { () throws(KeychainDatabaseError) in
            try value(for: key, authentication: authentication)
        }
    }

    /// The attributes of the item under `key`, then its value.
    public func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        try attributesThenValue(key) { () throws(KeychainDatabaseError) in try value(for: key) }
    }

    /// The attributes of the item under `key`, then its value as `read` reads it; nil when there is none, or it
    /// went in between.
    private func attributesThenValue(
        _ key: ItemAttributes.PrimaryKey, _ read: () throws(KeychainDatabaseError) -> Data
    ) throws(KeychainDatabaseError) -> KeychainItem? {
        let query = ItemQuery(
            itemClass: key.itemClass, service: key.service, account: key.account, accessGroup: key.accessGroup)
        guard let attributes = try attributes(matching: query).first(where: { $0.primaryKey == key }) else {
            return nil
        }
        do {
            return KeychainItem(attributes: attributes, value: try read())
        } catch  where error.status == .itemNotFound {
            return nil
        }
    }

    /// ``attributes(matching:)`` of `query`, then of `query` with `account` (nothing more when they are the same).
    public func attributes(
        matching query: ItemQuery, orAccount account: String
    ) throws(KeychainDatabaseError)
        -> [ItemAttributes]
    {
        let found = try attributes(matching: query)
        guard let first = query.account, !ExactText.equal(first, account) else { return found }
        var other = query
        other.account = account
        return found + (try attributes(matching: other))
    }

    /// The accounts of the matching items, from their attributes. Databases that can answer from an index
    /// implement it themselves.
    public func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String] {
        try attributes(matching: query).map(\.account)
    }
}

/// One item of ``KeychainDatabase/itemsWithValues(matching:)``: its attributes and what became of its value.
public struct ListedItem: Sendable, Equatable {
    /// What became of the value.
    public enum Value: Sendable, Equatable {
        /// The value.
        case data(Data)
        /// The item has access control: its value needs the user, and was not read.
        case needsAuthentication
        /// The item went between the listing and the read of its value.
        case gone
        /// The value can't be read (a damaged item).
        case failed(KeychainDatabaseError)
    }

    /// Everything but the value.
    public var attributes: ItemAttributes
    /// The value, or why there is none.
    public var value: Value

    /// Creates a listed item.
    public init(attributes: ItemAttributes, value: Value) {
        self.attributes = attributes
        self.value = value
    }
}
