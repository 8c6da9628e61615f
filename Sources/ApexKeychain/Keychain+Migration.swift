import Foundation

/// What a start-up migration on the device needs of a keychain beyond the public calls, to keep its round trips
/// per item to the add, the read-back and the source's removal (`apple-secitem.md` §8.3): who holds each key, from
/// a listing the migration made anyway; a write of a key it saw absent as one add; and the read-back of an item
/// with access control through the context the run's one prompt left. The rules of the public calls hold.
extension Keychain {
    /// What a write of a key known to be absent stores.
    package enum AbsentValue: Sendable {
        /// A string, as its UTF-8 bytes.
        case string(Data)
        /// Bytes.
        case bytes(Data)
        /// Credentials, under `credentials` or `credentials:<server>`.
        case credentials(Credentials, server: String?)
    }

    /// Which authentications satisfy `accessControl`: the policy of the prompt a read of such an item shows.
    package static func promptPolicy(for accessControl: AccessControl) -> AuthenticationRequest.Policy {
        policy(accessControl)
    }

    /// Who holds every key of this service and access group, from `listed` (every generic password of the
    /// database, as a listing the caller made found them): what ``keyStates()`` answers, without asking the
    /// database again. Nil when a key has a staged write an interrupted process left: ``keyStates()`` settles it.
    /// - Throws: as ``keyStates()``.
    package func keyStates(listed: [ItemAttributes]) throws(KeychainError) -> KeyStates? {
        try prepare()
        var states = KeyStates()
        for item in listed
        where item.itemClass == .genericPassword && ExactText.equal(item.service, service)
            && ExactText.equal(item.accessGroup, accessGroup)
        {
            if !item.isApexItem {
                states.set(.foreign, for: item.account)
                continue
            }
            let key = Self.key(ofAccount: item.account)
            guard ExactText.equal(key, item.account) else { return nil }
            if states.state(of: key) != .foreign { states.set(.own(try info(key, item)), for: key) }
        }
        return states
    }

    /// Writes `value` under `key`, which the caller saw absent (no item of any library, no staged write): one add,
    /// with every check of a write first. The add is the condition: the keychain refuses a second item under one
    /// primary key, so an item another writer put there since (the package's or another library's) makes it return
    /// false, having written nothing.
    /// - Throws: as ``setItem(_:_:_:)``, ``setBytes(_:_:_:)`` or ``setCredentials(_:_:)``.
    package func addAbsent(_ key: String, _ value: AbsentValue, _ options: SetOptions) throws(KeychainError) -> Bool {
        let item = try migratedItem(key, value, options)
        do {
            try database.add(item)
            return true
        } catch  where error.status == .duplicateItem {
            return false
        } catch {
            throw map(error, key: key)
        }
    }

    /// Turns `holder`, another library's item under `key` of this service and access group (a source item that
    /// holds its own target key), into the package's item holding `value`: one replacement of the item, with
    /// every check of a write first, so that the item is never absent and its value is never in two items. Neither
    /// item may have access control: the keychain changes such an item only through the user (seed 000), and an
    /// item with access control is always added. Returns the new item's primary key, or nil, having written
    /// nothing, when `holder` is no longer there (or the new primary key is taken).
    /// - Throws: as ``addAbsent(_:_:_:)``; `INVALID_ARGUMENT` when the item would have access control, or `holder` is
    ///   not under `key`.
    package func convert(
        _ holder: ItemAttributes.PrimaryKey, to key: String, _ value: AbsentValue, _ options: SetOptions
    ) throws(KeychainError) -> ItemAttributes.PrimaryKey? {
        guard holder.itemClass == .genericPassword, ExactText.equal(holder.service, service),
            ExactText.equal(holder.accessGroup, accessGroup), ExactText.equal(holder.account, key)
        else { throw .invalid("the item to replace is not under key '\(key)' of service '\(service)'") }
        let item = try migratedItem(key, value, options)
        guard item.attributes.accessControl.isEmpty else {
            throw .invalid("an item with access control is never made in place of another")
        }
        do {
            try database.replace(holder, with: item)
            return item.attributes.primaryKey
        } catch  where error.status == .itemNotFound || error.status == .duplicateItem {
            return nil
        } catch {
            throw map(error, key: key)
        }
    }

    /// The item a migration writes under `key`, after every check of a write.
    private func migratedItem(
        _ key: String, _ value: AbsentValue, _ options: SetOptions
    ) throws(KeychainError)
        -> KeychainItem
    {
        let data: Data
        let encoding: ItemMetadata.Encoding
        var label = options.label
        var set = options
        switch value {
        case .string(let bytes):
            try Validation.storedText(bytes, "value")
            (data, encoding) = (bytes, .string)
        case .bytes(let bytes):
            (data, encoding) = (bytes, .bytes)
        case .credentials(let credentials, let server):
            guard ExactText.equal(try Self.credentialsKey(server), key) else {
                throw .invalid("credentials of another server can't be written under key '\(key)'")
            }
            try Self.validate(credentials)
            (data, encoding, label) = (Self.utf8(credentials.password), .credentials, credentials.username)
            set.label = credentials.username
        }
        return newItem(key, data, encoding: encoding, label: label, try preflight(key, label: label, set))
    }
}
