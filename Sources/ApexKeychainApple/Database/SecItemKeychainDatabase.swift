import ApexKeychain
import Foundation

/// The iOS keychain as a `KeychainDatabase`: every operation is one or two ``SecItemCalls`` over attribute
/// dictionaries keyed by the Security framework's own strings.
///
/// The binding makes the calls with the real `SecItem*` functions on a device; ``SecItemEmulator`` makes them here.
/// What each dictionary holds is the same everywhere (seed 000, `apple-secitem.md` §2): `nleg` on every query, the
/// creator mark `'ApxK'` on every query of the package's own items, an explicit `sync` on writes and `syna` on
/// reads, removes and listings, a non-interactive `LAContext` on reads that must not prompt, `accc` instead of
/// `pdmn` for an item with access control, and no match or return key on an update or a delete.
///
/// A failed call's `OSStatus` becomes a `KeychainDatabaseError` that keeps the number and names the call, never a
/// value. The keychain has no reader of an item's access-control constraints: the package's own items report
/// theirs from their metadata, other libraries' items report none (their values are still listed as needing
/// authentication by ``itemsWithValues(matching:)``).
///
/// A device's keychain can't group writes: ``atomically(_:)`` is the protocol's default, ``exclusively(_:)``, so
/// each call is atomic on its own. ``exclusively(_:)`` keeps this process's other writers through this database
/// out; other processes (an app extension) are not held.
public final class SecItemKeychainDatabase: KeychainDatabase {
    private let calls: any SecItemCalls
    private let writer = NSRecursiveLock()

    /// A database whose every operation is made of `calls`.
    public init(calls: any SecItemCalls) {
        self.calls = calls
    }

    // MARK: Writes

    /// `SecItemAdd` of the item's attributes and value.
    public func add(_ item: KeychainItem) throws(KeychainDatabaseError) {
        try locked { () throws(KeychainDatabaseError) in
            try check(calls.add(SecItemQueries.addition(item)), from: .add)
        }
    }

    /// `SecItemUpdate` of the item under `key` with every attribute of `item` and its value, under the
    /// non-interactive context: an item that would need the user answers `interactionNotAllowed` rather than
    /// prompting. Whether an item with access control may be replaced in place is the core's decision (it stages
    /// such writes); this maps statuses.
    public func replace(_ key: ItemAttributes.PrimaryKey, with item: KeychainItem) throws(KeychainDatabaseError) {
        try locked { () throws(KeychainDatabaseError) in
            try check(calls.update(SecItemQueries.updating(key), SecItemQueries.replacement(item)), from: .update)
        }
    }

    /// `SecItemUpdate` of the item under `key` with its new account, under the non-interactive context.
    public func rename(_ key: ItemAttributes.PrimaryKey, toAccount account: String) throws(KeychainDatabaseError) {
        try locked { () throws(KeychainDatabaseError) in
            try check(
                calls.update(SecItemQueries.updating(key), SecItemQueries.rename(toAccount: account)), from: .update)
        }
    }

    /// Every match's attributes, `m_LimitAll` and `r_Attributes`, one listing per class; none found is empty.
    public func attributes(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ItemAttributes] {
        var found: [ItemAttributes] = []
        for itemClass in SecItemQueries.classes(of: query) {
            for entry in try list(SecItemQueries.listing(query, in: itemClass)) {
                if let attributes = SecItemAttributeConversion.attributes(entry, of: itemClass) {
                    found.append(attributes)
                }
            }
        }
        return found
    }

    /// Both accounts in one listing: the service's items are listed without an account, and those under either
    /// account, byte for byte, are kept. A keychain query can't match one of two values.
    public func attributes(
        matching query: ItemQuery, orAccount account: String
    ) throws(KeychainDatabaseError) -> [ItemAttributes] {
        guard let first = query.account, !ExactText.equal(first, account) else {
            return try attributes(matching: query)
        }
        var everyAccount = query
        everyAccount.account = nil
        return try attributes(matching: everyAccount).filter {
            ExactText.equal($0.account, first) || ExactText.equal($0.account, account)
        }
    }

    /// The accounts of the listing of ``attributes(matching:)``: the same one call per class, and the same items
    /// (one that can't be described is left out here too).
    public func accounts(matching query: ItemQuery) throws(KeychainDatabaseError) -> [String] {
        try attributes(matching: query).map(\.account)
    }

    // MARK: Reads of values

    /// `m_LimitOne` and `r_Data` under a non-interactive context: an item that needs the user answers
    /// `interactionNotAllowed` (it exists) instead of prompting.
    public func value(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Data {
        try value(for: key, authentication: nil)
    }

    /// The read of ``value(for:)`` with `authentication`, the context a prompt that passed left: the keychain
    /// takes it without a second prompt (`kSecUseAuthenticationContext`, `apple-secitem.md` §2.7). Without one, the
    /// non-interactive context.
    public func value(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> Data {
        let context = authentication.map(SecItemAuthentication.evaluated) ?? .nonInteractive
        let (status, result) = calls.copyMatching(SecItemQueries.valueRead(key, context))
        try check(status, from: .copyMatching)
        return try Self.value(of: result)
    }

    /// The attributes and value in one call (`r_Attributes` and `r_Data`), under the non-interactive context; nil
    /// when there is no item. An item that needs the user fails with `interactionNotAllowed`.
    public func item(for key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> KeychainItem? {
        try item(for: key, authentication: nil)
    }

    /// ``item(for:)`` with `authentication`, the context a prompt that passed left, in one call
    /// (`kSecUseAuthenticationContext`, `apple-secitem.md` §2.7); without one, the non-interactive context.
    public func item(
        for key: ItemAttributes.PrimaryKey, authentication: (any AuthenticationContext)?
    ) throws(KeychainDatabaseError) -> KeychainItem? {
        let context = authentication.map(SecItemAuthentication.evaluated) ?? .nonInteractive
        let (status, result) = calls.copyMatching(SecItemQueries.itemRead(key, context))
        if status == .itemNotFound { return nil }
        try check(status, from: .copyMatching)
        guard case .attributes(let entry) = result,
            let attributes = SecItemAttributeConversion.attributes(entry, of: key.itemClass)
        else { throw Self.unexpectedResult }
        return KeychainItem(attributes: attributes, value: try Self.value(of: result))
    }

    /// The read plan of `apple-secitem.md` §8.2, two listings per class whatever the item count: the attributes of
    /// every match (no prompt; items with access control are listed too), then every value that needs no user
    /// (`u_AuthUIS` skips the others). An item of the first listing that the second lacks was skipped, or went in
    /// between; the first listing's attributes tell which:
    /// - the package's own item, whose metadata names no access control, needs no user, so it went:
    ///   `ListedItem.Value.gone`;
    /// - one with access control, or one whose constraints the keychain doesn't disclose (another library's), is
    ///   `ListedItem.Value.needsAuthentication` (for the latter, the read with the user tells whether it is there).
    ///
    /// A locked device (`errSecInteractionNotAllowed`) fails the call.
    public func itemsWithValues(matching query: ItemQuery) throws(KeychainDatabaseError) -> [ListedItem] {
        var listed: [ListedItem] = []
        for itemClass in SecItemQueries.classes(of: query) {
            let found = try list(SecItemQueries.attributesListing(query, in: itemClass)).compactMap { entry in
                SecItemAttributeConversion.attributes(entry, of: itemClass).map {
                    (attributes: $0, reference: Self.reference(entry))
                }
            }
            guard !found.isEmpty else { continue }
            let values: ListedValues
            do {
                values = ListedValues(try list(SecItemQueries.dataListing(query, in: itemClass)), of: itemClass)
            } catch  where error.status == .invalidQuery {
                // §8.2: Apple's documentation says password items can't combine `r_Data` with `m_LimitAll`, and a
                // keychain has answered that with errSecParam; then each listed item is read on its own, by its
                // persistent reference, skipping it too if it needs the user.
                for item in found {
                    listed.append(ListedItem(attributes: item.attributes, value: try readSkipping(item, itemClass)))
                }
                continue
            }
            for item in found {
                let value = values.value(of: item.attributes, reference: item.reference)
                let found = value.map { ListedItem.Value.data($0) } ?? Self.missing(item.attributes)
                listed.append(ListedItem(attributes: item.attributes, value: found))
            }
        }
        return listed
    }

    // MARK: Removal

    /// Deletes every match and returns how many there were: a listing, then one `SecItemDelete` per class.
    public func delete(matching query: ItemQuery) throws(KeychainDatabaseError) -> Int {
        try locked { () throws(KeychainDatabaseError) in
            var count = 0
            for itemClass in SecItemQueries.classes(of: query) {
                // Two calls: SecItemDelete answers a status only, never how many items it removed (§2.6), so the
                // count comes from a listing made first, under the writer lock (no writer of this process in
                // between). A delete with a match limit is errSecParam on iOS, so the delete can't return them.
                let found = try list(SecItemQueries.listing(query, in: itemClass)).count
                guard found > 0 else { continue }
                let status = calls.delete(SecItemQueries.matching(query, in: itemClass))
                if status == .itemNotFound { continue }
                try check(status, from: .delete)
                count += found
            }
            return count
        }
    }

    /// `SecItemDelete` of the item under `key`; false when there was none.
    public func delete(_ key: ItemAttributes.PrimaryKey) throws(KeychainDatabaseError) -> Bool {
        try locked { () throws(KeychainDatabaseError) in
            let status = calls.delete(SecItemQueries.matching(key))
            if status == .itemNotFound { return false }
            try check(status, from: .delete)
            return true
        }
    }

    /// Runs `body` under a process-local recursive lock that every write of this database takes too.
    public func exclusively<T>(_ body: () throws -> T) throws -> T {
        writer.lock()
        defer { writer.unlock() }
        return try body()
    }

    // MARK: Calls

    private func locked<T>(_ body: () throws(KeychainDatabaseError) -> T) throws(KeychainDatabaseError) -> T {
        writer.lock()
        defer { writer.unlock() }
        return try body()
    }

    private func check(_ status: SecItemStatus, from call: SecItemStatusTable.Call) throws(KeychainDatabaseError) {
        guard status == .success else { throw SecItemStatusTable.error(status, from: call) }
    }

    /// The entries of a listing; none found is empty.
    private func list(_ query: SecItemDictionary) throws(KeychainDatabaseError) -> [SecItemDictionary] {
        let (status, result) = calls.copyMatching(query)
        if status == .itemNotFound { return [] }
        try check(status, from: .copyMatching)
        switch result {
        case .none: return []
        case .attributes(let entry): return [entry]
        case .list(let results):
            var entries: [SecItemDictionary] = []
            entries.reserveCapacity(results.count)
            for result in results {
                guard case .attributes(let entry) = result else { throw Self.unexpectedResult }
                entries.append(entry)
            }
            return entries
        case .data: throw Self.unexpectedResult
        }
    }

    /// The fallback read of one listed item: its value, or, when the keychain skipped it, ``missing(_:)``. A locked
    /// device fails.
    private func readSkipping(
        _ item: (attributes: ItemAttributes, reference: Data?), _ itemClass: ItemClass
    ) throws(KeychainDatabaseError) -> ListedItem.Value {
        let query =
            item.reference.map { SecItemQueries.persistentReferenceRead($0, in: itemClass) }
            ?? SecItemQueries.skippingValueRead(item.attributes.primaryKey)
        let (status, result) = calls.copyMatching(query)
        if status == .itemNotFound { return Self.missing(item.attributes) }
        do {
            try check(status, from: .copyMatching)
            return .data(try Self.value(of: result))
        } catch  where error.status == .interactionNotAllowed {
            throw error
        } catch {
            return .failed(error)
        }
    }

    /// What became of a listed item that a read skipping the items that need the user did not return: gone when its
    /// attributes say it has no access control (the package's own item, by its metadata), else needing
    /// authentication (its access control, or constraints the keychain doesn't disclose, `apple-secitem.md` §8.2).
    private static func missing(_ attributes: ItemAttributes) -> ListedItem.Value {
        let saysNone =
            attributes.isApexItem && attributes.accessControl.isEmpty
            && ItemMetadata(attributes.generic)?.accessControl == AccessControl.none
        return saysNone ? .gone : .needsAuthentication
    }

    private static let unexpectedResult = KeychainDatabaseError(
        .other, "SecItemCopyMatching returned a result of another shape than the query asked for")

    /// The value of a read's result: the data, or the `v_Data` of an attributes dictionary.
    private static func value(of result: SecItemResult) throws(KeychainDatabaseError) -> Data {
        switch result {
        case .data(let data): return data
        case .attributes(let entry):
            guard case .data(let data) = entry[.valueData] else { throw unexpectedResult }
            return data
        case .none, .list: throw unexpectedResult
        }
    }

    private static func reference(_ entry: SecItemDictionary) -> Data? {
        guard case .data(let reference) = entry[.valuePersistentRef] else { return nil }
        return reference
    }
}

/// The values of a data listing, found by persistent reference, else by primary key.
private struct ListedValues {
    var byReference: [Data: Data] = [:]
    var byKey: [ItemAttributes.PrimaryKey: Data] = [:]

    init(_ entries: [SecItemDictionary], of itemClass: ItemClass) {
        for entry in entries {
            // r_Data on an item without data gives empty data (§2.4); a value of another type is none.
            var value = Data()
            switch entry[.valueData] {
            case .data(let data): value = data
            case nil: break
            default: continue
            }
            if case .data(let reference) = entry[.valuePersistentRef] { byReference[reference] = value }
            if let attributes = SecItemAttributeConversion.attributes(entry, of: itemClass) {
                byKey[attributes.primaryKey] = value
            }
        }
    }

    func value(of attributes: ItemAttributes, reference: Data?) -> Data? {
        if let reference, let value = byReference[reference] { return value }
        return byKey[attributes.primaryKey]
    }
}
