import Foundation

/// A ``KeychainDatabase`` in memory, for tests: the package's own tests and an app's.
///
/// Tests can load other libraries' items into it with ``add(_:)``, look at everything it holds with
/// ``allItems()``, make the Nth write from now fail with ``failWrite(number:status:)`` to prove that a
/// write interrupted at any step leaves the old item or the new one, never neither, and lock an item away with
/// ``setLockedAway(_:_:)`` as a locked device locks away the items of a class whose key it has dropped.
///
/// ``atomically(_:)`` is a real transaction here too: a scope that throws puts back every item as it was when
/// the scope began, and ``committedScopes`` counts the outermost scopes that returned (a store's commits). Made
/// with `groupsWrites: false`, it stands for a device's keychain instead, which can't group writes: each call is
/// atomic on its own and a scope that throws undoes nothing.
public final class InMemoryKeychainDatabase: KeychainDatabase {
    private struct State {
        var items: [ItemAttributes.PrimaryKey: KeychainItem] = [:]
        var writes = 0
        var faults: [Int: KeychainDatabaseError.Status] = [:]
        var lockedAway: Set<ItemAttributes.PrimaryKey> = []
        var depth = 0
        var committed = 0
    }

    private let state = Locked(State())
    private let writer = NSRecursiveLock()

    /// Whether ``atomically(_:)`` groups writes into one transaction (a store), or runs them one by one, as a
    /// device's keychain does.
    public let groupsWrites: Bool

    /// Creates an empty database; with `groupsWrites` false, one that models a device's keychain (see
    /// ``groupsWrites``).
    public init(groupsWrites: Bool = true) {
        self.groupsWrites = groupsWrites
    }

    /// Every item, sorted by service, account and class: what a test inspects after the fact.
    public func allItems() -> [KeychainItem] {
        state.withLock { state in
            state.items.values.sorted {
                ($0.attributes.service, $0.attributes.account, $0.attributes.itemClass.rawValue)
                    < ($1.attributes.service, $1.attributes.account, $1.attributes.itemClass.rawValue)
            }
        }
    }

    /// How many writes (add, replace, rename, delete) have been attempted so far.
    public var writeCount: Int { state.withLock { $0.writes } }

    /// How many outermost ``atomically(_:)`` scopes have returned: what a store would have committed.
    public var committedScopes: Int { state.withLock { $0.committed } }

    /// Makes the `n`th write from now (1 = the next one) fail with `status` and change nothing.
    public func failWrite(number n: Int, status: KeychainDatabaseError.Status = .io) {
        precondition(n >= 1, "the first write from now is number 1")
        state.withLock { $0.faults[$0.writes + n] = status }
    }

    /// Locks the item under `key` away, or brings it back, as a device locks away an item whose class key is
    /// unavailable (a `whenUnlocked` item while the device is locked).
    ///
    /// While it is locked away, ``replace(_:with:)``, ``rename(_:toAccount:)`` and ``value(for:)`` of it fail with
    /// `interactionNotAllowed` and change nothing; its attributes are still found and it can still be deleted, as
    /// on a device. Deleting it ends the state. The ``Keychain`` checks the lock itself before it reads or writes a
    /// class that needs the device unlocked; this stands for what only the database can answer: that the item a
    /// write replaces is locked away (`errSecInteractionNotAllowed` from SecItemUpdate).
    /// - Parameters:
    ///   - key: the item's primary key.
    ///   - lockedAway: true to lock it away, false to bring it back.
    public func setLockedAway(_ key: ItemAttributes.PrimaryKey, _ lockedAway: Bool = true) {
        state.withLock { state in
            if lockedAway { state.lockedAway.insert(key) } else { state.lockedAway.remove(key) }
        }
    }

    /// Adds an item; `duplicateItem` when its primary key is taken.
    public func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        try write { state throws(KeychainDatabaseError) in
            let key = item.attributes.primaryKey
            guard state.items[key] == nil else {
                throw KeychainDatabaseError(.duplicateItem, "the item already exists")
            }
            state.items[key] = item
        }
    }

    /// Replaces the attributes and value of the item under `key`.
    public func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        try write { state throws(KeychainDatabaseError) in
            guard state.items[key] != nil else { throw KeychainDatabaseError(.itemNotFound, "no such item") }
            try Self.checkNotLockedAway(key, state)
            let newKey = item.attributes.primaryKey
            if newKey != key, state.items[newKey] != nil {
                throw KeychainDatabaseError(.duplicateItem, "the item already exists")
            }
            state.items[key] = nil
            state.items[newKey] = item
        }
    }

    /// Moves the item under `key` to another account.
    public func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        try write { state throws(KeychainDatabaseError) in
            guard var item = state.items[key] else { throw KeychainDatabaseError(.itemNotFound, "no such item") }
            try Self.checkNotLockedAway(key, state)
            item.attributes.account = account
            let newKey = item.attributes.primaryKey
            if newKey != key, state.items[newKey] != nil {
                throw KeychainDatabaseError(.duplicateItem, "the item already exists")
            }
            state.items[key] = nil
            state.items[newKey] = item
        }
    }

    /// The attributes of every matching item; never reads a value.
    public func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        state.withLock { state in state.items.values.lazy.map(\.attributes).filter(query.matches) }
    }

    /// The value of the item under `key`.
    public func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        try state.withLock { state throws(KeychainDatabaseError) -> Data in
            guard let item = state.items[key] else { throw KeychainDatabaseError(.itemNotFound, "no such item") }
            try Self.checkNotLockedAway(key, state)
            return item.value
        }
    }

    /// The item under `key` with its value.
    public func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        try state.withLock { state throws(KeychainDatabaseError) -> KeychainItem? in
            guard let item = state.items[key] else { return nil }
            try Self.checkNotLockedAway(key, state)
            return item
        }
    }

    /// Deletes every matching item and returns how many there were.
    public func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int {
        try write { state throws(KeychainDatabaseError) in
            let keys = state.items.filter { query.matches($0.value.attributes) }.map(\.key)
            for key in keys {
                state.items[key] = nil
                state.lockedAway.remove(key)
            }
            return keys.count
        }
    }

    /// Deletes the item under `key`; returns whether there was one.
    public func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        try write { state throws(KeychainDatabaseError) in
            state.lockedAway.remove(key)
            return state.items.removeValue(forKey: key) != nil
        }
    }

    /// Runs `body` with no other writer in between (not atomic: each call may fail on its own).
    public func exclusively<T>(_ body: () throws -> T) throws -> T {
        writer.lock()
        defer { writer.unlock() }
        return try body()
    }

    /// Runs `body` as one transaction: when it throws, the items (and which are locked away) are put back as
    /// they were when it began; writes counted and faults planted are not. Nested scopes undo only their own.
    /// Without ``groupsWrites``, as ``exclusively(_:)``: nothing is undone.
    public func atomically<T>(_ body: () throws -> T) throws -> T {
        guard groupsWrites else { return try exclusively(body) }
        writer.lock()
        defer { writer.unlock() }
        let saved = state.withLock { state in
            state.depth += 1
            return (state.items, state.lockedAway)
        }
        do {
            let result = try body()
            state.withLock { state in
                state.depth -= 1
                if state.depth == 0 { state.committed += 1 }
            }
            return result
        } catch {
            state.withLock { state in
                state.depth -= 1
                (state.items, state.lockedAway) = saved
            }
            throw error
        }
    }

    private static func checkNotLockedAway(
        _ key: ItemAttributes.PrimaryKey, _ state: State
    ) throws(KeychainDatabaseError) {
        if state.lockedAway.contains(key) {
            throw KeychainDatabaseError(.interactionNotAllowed, "the item is locked away")
        }
    }

    /// Counts the write, fails it if a fault was planted for it, else runs it under the state lock.
    private func write<T>(_ body: (inout State) throws(KeychainDatabaseError) -> T) throws(KeychainDatabaseError) -> T {
        writer.lock()
        defer { writer.unlock() }
        return try state.withLock { state throws(KeychainDatabaseError) -> T in
            state.writes += 1
            if let fault = state.faults.removeValue(forKey: state.writes) {
                throw KeychainDatabaseError(fault, "injected fault on write \(state.writes)")
            }
            return try body(&state)
        }
    }
}
