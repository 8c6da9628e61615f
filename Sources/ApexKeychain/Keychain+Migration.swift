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
        let item = newItem(key, data, encoding: encoding, label: label, try preflight(key, label: label, set))
        do {
            try database.add(item)
            return true
        } catch  where error.status == .duplicateItem {
            return false
        } catch {
            throw map(error, key: key)
        }
    }

    /// The value of the package's item under `key`, written with `options` by the caller a moment ago, read with
    /// the context a passed prompt left (``Authentication/context``): no prompt of its own, one read by the item's
    /// primary key. What a migration that prompted once for the run compares with what it wrote to an item with
    /// access control. Nil when there is no item.
    /// - Throws: the read's refusal (`INTERACTION_NOT_ALLOWED`, `AUTHENTICATION_FAILED` when the context doesn't
    ///   open the item: the caller then reads it through a prompt of its own).
    package func readBackValue(
        _ key: String, writtenWith options: SetOptions, authentication: any AuthenticationContext
    ) throws(KeychainError) -> Data? {
        try Validation.name(key, "key")
        let state = try prepare()
        try checkUnlocked(options.accessible ?? self.options.accessible ?? Self.defaultAccessible, state, key: key)
        let primaryKey = ItemAttributes.PrimaryKey(
            itemClass: .genericPassword, service: service, account: key, accessGroup: accessGroup,
            synchronizable: try protection(for: options).synchronizable, server: "", securityDomain: "",
            protocolCode: "", authenticationType: "", port: 0, path: "")
        do {
            return try database.value(for: primaryKey, authentication: authentication)
        } catch  where error.status == .itemNotFound {
            return nil
        } catch {
            throw map(error, key: key)
        }
    }
}
