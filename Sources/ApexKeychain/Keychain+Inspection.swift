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
        let found = try run { () throws(KeychainDatabaseError) in
            try database.attributes(
                matching: ItemQuery(
                    itemClass: .genericPassword, service: service, account: key, accessGroup: accessGroup))
        }
        if found.contains(where: { !$0.isApexItem }) { return .foreign }
        guard let info = try await getItemInfo(key) else { return .absent }
        return .own(info)
    }

    /// Who holds every key of this service and access group, from one query: what ``keyState(_:)`` answers
    /// key by key, for a caller that asks about many keys (a migration plan). Never reads a value or prompts.
    ///
    /// A key whose write an interrupted process left half-done is settled first, as a read settles it: a staged
    /// item alone is the key's item (moved into place when it has no access control; left where it is when it has).
    /// - Throws: `INTERNAL` for a database fault or an item of the package with damaged metadata.
    public func keyStates() async throws(KeychainError) -> KeyStates {
        try prepare()
        let all = try run { () throws(KeychainDatabaseError) in
            try database.attributes(
                matching: ItemQuery(itemClass: .genericPassword, service: service, accessGroup: accessGroup))
        }
        var states = KeyStates()
        var staged: [String] = []
        for item in all {
            if !item.isApexItem {
                states.set(.foreign, for: item.account)
                continue
            }
            let key = Self.key(ofAccount: item.account)
            if !ExactText.equal(key, item.account) {
                staged.append(key)
            } else if states.state(of: key) != .foreign {
                states.set(.own(try info(key, item)), for: key)
            }
        }
        for key in staged where states.state(of: key) == .absent {
            states.set(try await keyState(key), for: key)
        }
        return states
    }

    /// Checks everything a write of `key` with `options` would check — the key, the options and their
    /// combinations, what the device can give, the lock state, and that no other library holds the key —
    /// without writing or prompting. It runs the write's own preflight, so it throws exactly when
    /// ``setItem(_:_:_:)``, ``setBytes(_:_:_:)`` or ``setCredentials(_:_:)`` (whose label is the username) with
    /// these options would, short of a database fault during the write.
    /// - Parameters:
    ///   - key: the key the write would write.
    ///   - options: the write's options, as ``setItem(_:_:_:)`` takes them.
    ///   - states: what ``keyStates()`` returned, to answer "does another library hold the key" without asking
    ///     the database again; nil to ask it (a look-up that settles nothing).
    /// - Throws: the error the write would throw.
    public func checkWrite(
        _ key: String, _ options: SetOptions = SetOptions(), states: KeyStates? = nil
    )
        async throws(KeychainError)
    {
        _ = try preflight(key, label: options.label, options)
        if let states {
            if states.state(of: key) == .foreign { throw Self.heldByAnotherLibrary(key, service) }
            return
        }
        let found = try run { () throws(KeychainDatabaseError) in
            try database.attributes(
                matching: ItemQuery(
                    itemClass: .genericPassword, service: service, account: key, accessGroup: accessGroup))
        }
        try refuseForeignHolder(key, among: found)
    }
}

/// Who holds each key of one service, as ``Keychain/keyStates()`` found it. Keys compare byte for byte, as the
/// keychain compares them (not by Unicode canonical equivalence).
public struct KeyStates: Sendable {
    private var states: [ExactName: Keychain.KeyState] = [:]

    /// No key held: what ``Keychain/keyStates()`` returns for a service that holds no item at all.
    public init() {}

    mutating func set(_ state: Keychain.KeyState, for key: String) { states[ExactName(key)] = state }

    /// What holds `key`: `.absent` for a key no item uses.
    public func state(of key: String) -> Keychain.KeyState { states[ExactName(key)] ?? .absent }

    /// How many keys are held.
    public var count: Int { states.count }
}
