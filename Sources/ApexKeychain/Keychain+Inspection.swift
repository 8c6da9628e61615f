/// Questions a migration asks before it writes: who holds a key, and would a write succeed. Neither reads a
/// value nor prompts.
extension Keychain {
    /// What holds a key in this keychain's service and access group.
    public enum KeyState: Sendable, Equatable {
        /// Nothing.
        case absent
        /// One of the package's items, described.
        case own(ItemInfo)
        /// Another library's item (no `'ApxK'` creator mark): a write under the key would be refused.
        case foreign
    }

    /// Who holds `key`, without reading a value or prompting.
    /// - Throws: `INVALID_ARGUMENT` for a bad key; `INTERNAL` for a database fault.
    public func keyState(_ key: String) async throws(KeychainError) -> KeyState {
        try Validation.name(key, "key")
        try prepare()
        let found = try run { () throws(DatabaseError) in
            try database.attributes(
                matching: ItemQuery(itemClass: .genericPassword, service: service, account: key, accessGroup: accessGroup))
        }
        if found.contains(where: { !$0.isApexItem }) { return .foreign }
        guard let info = try await getItemInfo(key) else { return .absent }
        return .own(info)
    }

    /// Checks everything a write of `key` with `options` would check — the key, the options and their
    /// combinations, what the device can give, the lock state, and that no other library holds the key —
    /// without writing or prompting.
    /// - Throws: the error the write would throw.
    public func checkWrite(_ key: String, _ options: SetOptions = SetOptions()) async throws(KeychainError) {
        try Validation.name(key, "key")
        if let label = options.label { try Validation.storedString(label, "label") }
        let protection = try protection(for: options)
        try prepare()
        let state = device.state()
        let outcome = ProtectionPolicy.check(
            accessible: protection.accessible, accessControl: protection.accessControl,
            authValidity: protection.authValidity, keyStorage: protection.keyStorage, state: state)
        if let failure = outcome.failure { throw failure }
        try checkUnlocked(protection.accessible, state, key: key)
        if try await keyState(key) == .foreign {
            throw KeychainError.invalid("key '\(key)' of service '\(service)' is held by another library's item")
        }
    }
}
