import Foundation

/// Writes that happen only if the key still holds what the caller saw: a migration plans against the keychain as
/// it was, and must not replace what another writer put under a key in between. The check and the write are
/// one database transaction.
///
/// These writes, and ``setBytesSynchronously(_:_:_:)`` and ``removeItemSynchronously(_:)``, are synchronous
/// (a write never prompts, so it never waits), so that a migration can make many of them inside one
/// ``KeychainDatabase/atomically(_:)`` scope; the rules of the public calls hold unchanged.
extension Keychain {
    /// What a conditional write expects under its key.
    package enum ExpectedHolder: Sendable, Equatable {
        /// No item of the package (and none of another library: that one fails the write as usual).
        case absent
        /// The package's item as ``getItemInfo(_:)`` described it: the same dates and label.
        case own(ItemInfo)

        func matches(_ current: ItemAttributes?) -> Bool {
            switch self {
            case .absent: return current == nil
            case .own(let info):
                guard let current, let metadata = ItemMetadata(current.generic) else { return false }
                let sameLabel: Bool
                switch (metadata.hasLabel ? (current.label ?? "") : nil, info.label) {
                case (nil, nil): sameLabel = true
                case (let found?, let seen?): sameLabel = ExactText.equal(found, seen)
                default: sameLabel = false
                }
                return sameLabel && Keychain.milliseconds(current.createdAt) == info.createdAt
                    && Keychain.milliseconds(current.modifiedAt) == info.modifiedAt
                    && metadata.accessControl == info.accessControl
                    && current.protectionDomain.accessible == info.accessible
            }
        }
    }

    /// ``setItem(_:_:_:)`` if the key still holds `expecting`; false, with nothing written, when it does not.
    package func setItem(
        _ key: String, _ value: String, _ options: SetOptions, expecting: ExpectedHolder
    ) throws(KeychainError) -> Bool {
        try Validation.storedString(value, "value")
        return try write(key, Self.utf8(value), encoding: .string, label: options.label, options, expecting: expecting)
    }

    /// ``setItem(_:_:_:expecting:)`` of a string given as its UTF-8 bytes (as a dump holds it), without making a
    /// String of it: refused as that call refuses a string, and when the bytes are not UTF-8.
    package func setItem(
        _ key: String, utf8 value: Data, _ options: SetOptions, expecting: ExpectedHolder
    ) throws(KeychainError) -> Bool {
        try Validation.storedText(value, "value")
        return try write(key, value, encoding: .string, label: options.label, options, expecting: expecting)
    }

    /// ``setBytes(_:_:_:)`` if the key still holds `expecting`; false, with nothing written, when it does not.
    package func setBytes(
        _ key: String, _ value: Data, _ options: SetOptions, expecting: ExpectedHolder
    ) throws(KeychainError) -> Bool {
        try write(key, value, encoding: .bytes, label: options.label, options, expecting: expecting)
    }

    /// ``setCredentials(_:_:)`` if the key still holds `expecting`; false, with nothing written, when it does not.
    package func setCredentials(
        _ credentials: Credentials, _ options: CredentialsOptions, expecting: ExpectedHolder
    ) throws(KeychainError) -> Bool {
        let key = try Self.credentialsKey(options.server)
        try Self.validate(credentials)
        return try write(
            key, Self.utf8(credentials.password), encoding: .credentials, label: credentials.username,
            options.setOptions, expecting: expecting)
    }

    /// ``setBytes(_:_:_:)``, whatever the key holds.
    package func setBytesSynchronously(_ key: String, _ value: Data, _ options: SetOptions) throws(KeychainError) {
        try write(key, value, encoding: .bytes, label: options.label, options)
    }

    /// ``removeItem(_:)``.
    package func removeItemSynchronously(_ key: String) throws(KeychainError) {
        try Validation.name(key, "key")
        try prepare()
        try run {
            // Together where the database can; else the staged write first: left alone, it would become the item
            // again when next found.
            try database.atomically {
                try database.delete(matching: ownQuery(account: Self.stagingAccount(key)))
                try database.delete(matching: ownQuery(account: key))
            }
        }
    }

    /// What ``readBack(_:)`` found.
    package enum ReadBack: Sendable, Equatable {
        /// No item under the key.
        case absent
        /// The item has access control: its value is read only through a prompt (``getBytes(_:_:)``).
        case needsPrompt(ItemInfo)
        /// The item's description, its value and its label (the username of credentials).
        case read(ItemInfo, value: Data, label: String?)
    }

    /// The item under `key` read back after a write with `options`, never with a prompt: what a migration
    /// compares with what it wrote, inside a batch. The checks of a read hold (the device unlocked as the item's
    /// class needs, an invalidated item removed). For an item written without access control: it is read with
    /// its value in one look-up (``KeychainDatabase/item(for:)``). An item written with access control is found
    /// by its attributes and described, its value never read: on a device the keychain would need the user for it
    /// (`apple-secitem.md` §2.7).
    package func readBack(_ key: String, writtenWith options: SetOptions) throws(KeychainError) -> ReadBack {
        try Validation.name(key, "key")
        let state = try prepare()
        let protection = try protection(for: options)
        guard protection.accessControl == .none else { return try readBackFound(key) }
        let primaryKey = primaryKey(of: key, synchronizable: protection.synchronizable)
        let item: KeychainItem?
        do {
            item = try database.item(for: primaryKey)
        } catch  where error.status == .interactionNotAllowed {
            // The keychain can't open it without the user or the device unlocked (another writer put an item
            // with access control there, or its class is locked away): found as a read finds it, which says which.
            return try readBackFound(key)
        } catch {
            throw map(error, key: key)
        }
        guard let item, item.attributes.isApexItem else { return try readBackFound(key) }
        let metadata = try metadata(of: item.attributes)
        try checkUnlocked(item.attributes.protectionDomain.accessible ?? Self.defaultAccessible, state, key: key)
        try checkStillValid(item.attributes, metadata, state, key: key)
        let info = info(key, item.attributes, metadata)
        guard metadata.accessControl == .none else { return .needsPrompt(info) }
        return .read(info, value: item.value, label: label(of: item.attributes, metadata))
    }

    /// The item under `key` written with `options` a moment ago, read back with the context a passed prompt left
    /// (``Authentication/context``): its description, value and label in one read by its primary key
    /// (``KeychainDatabase/item(for:authentication:)``), no prompt of its own. What a migration that prompted once
    /// for the run compares with what it wrote to an item with access control: its protection as well as its
    /// value. The checks of a read hold (the device unlocked as the item's class needs, an invalidated item
    /// removed). `absent` when the package holds no item there.
    /// - Throws: the read's refusal (`INTERACTION_NOT_ALLOWED`, `AUTHENTICATION_FAILED` when the context doesn't
    ///   open the item: the caller then reads it through a prompt of its own).
    package func readBack(
        _ key: String, writtenWith options: SetOptions, authentication: any AuthenticationContext
    ) throws(KeychainError) -> ReadBack {
        try Validation.name(key, "key")
        let state = try prepare()
        let protection = try protection(for: options)
        try checkUnlocked(protection.accessible, state, key: key)
        let primaryKey = primaryKey(of: key, synchronizable: protection.synchronizable)
        let item: KeychainItem?
        do {
            item = try database.item(for: primaryKey, authentication: authentication)
        } catch {
            throw map(error, key: key)
        }
        guard let item, item.attributes.isApexItem else { return .absent }
        let metadata = try metadata(of: item.attributes)
        try checkStillValid(item.attributes, metadata, state, key: key)
        return .read(
            info(key, item.attributes, metadata), value: item.value, label: label(of: item.attributes, metadata))
    }

    /// The primary key of the package's item under `key` in this service and access group.
    private func primaryKey(of key: String, synchronizable: Bool) -> ItemAttributes.PrimaryKey {
        ItemAttributes.PrimaryKey(
            itemClass: .genericPassword, service: service, account: key, accessGroup: accessGroup,
            synchronizable: synchronizable, server: "", securityDomain: "", protocolCode: "", authenticationType: "",
            port: 0, path: "")
    }

    /// ``readBack(_:writtenWith:)`` of an item found as every read finds it (a staged write settled, another
    /// synchronizable).
    private func readBackFound(_ key: String) throws(KeychainError) -> ReadBack {
        guard let found = try findForRead(key) else { return .absent }
        let info = info(key, found.item, found.metadata)
        guard found.metadata.accessControl == .none else { return .needsPrompt(info) }
        guard let value = try value(of: found, key: key) else { return .absent }
        return .read(info, value: value, label: found.label)
    }
}
