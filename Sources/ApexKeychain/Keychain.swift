import Foundation

/// One service's items in a ``KeychainDatabase``, protected as the ``Device`` can protect them.
///
/// Rules every call holds:
/// - **Only its own items.** Every item it writes carries the creator mark `'ApxK'`; every query is limited to
///   that mark, so another library's item in the same service is never read, listed, replaced or removed.
/// - **Never weaker.** A write asks the device whether it can give the protection asked for and fails with the
///   reason when it can't; it never writes a weaker item. A failed write leaves the old item as it was.
/// - **Atomic writes.** At no step of a write is the old value lost: a write interrupted anywhere leaves the
///   old item or the new one.
/// - **Prompts only to read a protected value.** Writes, ``hasItem(_:)``, ``getItemInfo(_:)``,
///   ``getAllKeys()`` and ``clear()`` never prompt.
/// - **A read uses the protection the item was written with**, not this keychain's current defaults.
///
/// Two keychains of the same service (and access group) see the same items; services never meet.
public final class Keychain: Sendable {
    /// The resolved service: the options' service, or the device's default service.
    public let service: String
    /// The resolved access group: the options' group, or the device's default group (always the default on Android).
    public let accessGroup: String
    let options: KeychainOptions
    let database: any KeychainDatabase
    let device: any Device
    /// The device's prompts, windows, install check and warnings, shared with every keychain on it.
    let context: DeviceContext
    /// Whether the app may use ``accessGroup`` (iOS entitlement); when not, every call fails.
    let entitled: Bool

    /// Opens the keychain of a service.
    /// - Parameters:
    ///   - options: the service and the defaults of every call.
    ///   - database: where items are stored.
    ///   - device: what decides which protection can be given, and shows prompts.
    /// - Throws: `INVALID_ARGUMENT` for a bad service or access group, or an impossible combination of defaults.
    public init(
        _ options: KeychainOptions = KeychainOptions(), database: any KeychainDatabase, device: any Device
    ) throws(KeychainError) {
        let service = options.service ?? device.defaultService
        try Validation.name(service, "service")
        if options.accessGroup?.isEmpty == true { throw .invalid("accessGroup must not be empty") }
        try Validation.protection(
            accessible: options.accessible ?? Self.defaultAccessible, accessControl: options.accessControl ?? .none,
            authValidity: options.authValidity ?? 0, synchronizable: options.synchronizable ?? false)
        self.options = options
        self.database = database
        self.device = device
        self.context = DeviceContext.of(device)
        self.service = service
        let platform = device.state().platform
        self.accessGroup =
            platform.isAndroid ? device.defaultAccessGroup : (options.accessGroup ?? device.defaultAccessGroup)
        self.entitled = !platform.isIOS || device.isEntitled(toAccessGroup: accessGroup)
        if platform.isAndroid, options.synchronizable == true { warnSynchronizableIgnored() }
    }

    /// The accessible class of a write that names none: readable from the first unlock after a restart, so
    /// that background work (a silent push, a refresh timer) can read tokens while the device is locked.
    public static let defaultAccessible = Accessible.afterFirstUnlock

    /// Stores a string under a key, replacing the item and all its attributes.
    /// - Parameters:
    ///   - key: non-empty, at most 256 characters, no U+0000.
    ///   - value: any string without U+0000, stored as UTF-8; the empty string is a value.
    ///   - options: protection and label; unset fields take the keychain's defaults. No label removes the label.
    /// - Throws: `INVALID_ARGUMENT`, or what the device can't give (`PASSCODE_NOT_SET`, `BIOMETRY_NOT_ENROLLED`,
    ///   …), or `INTERACTION_NOT_ALLOWED` while locked. The keychain is not modified if an error is thrown.
    public func setItem(
        _ key: String, _ value: String, _ options: SetOptions = SetOptions()
    ) async throws(KeychainError) {
        try Validation.storedString(value, "value")
        try write(key, Self.utf8(value), encoding: .string, label: options.label, options)
    }

    /// Reads the string stored under a key, prompting if the item's protection asks for it.
    /// - Returns: the value, or nil when there is no item.
    /// - Throws: `USER_CANCELED`, `USER_FALLBACK`, `KEY_INVALIDATED` (the item is then removed),
    ///   `INTERACTION_NOT_ALLOWED`, `INVALID_ARGUMENT` for bytes that are not UTF-8, and the like.
    public func getItem(_ key: String, _ options: GetOptions = GetOptions()) async throws(KeychainError) -> String? {
        guard let value = try await read(key, prompt: options.prompt)?.value else { return nil }
        guard let string = String(validUTF8: value) else {
            throw .invalid("item '\(key)' holds bytes that are not UTF-8; read it with getBytes")
        }
        return string
    }

    /// Stores bytes under a key; they round-trip exactly. Same rules as ``setItem(_:_:_:)``.
    public func setBytes(_ key: String, _ value: Data, _ options: SetOptions = SetOptions()) async throws(KeychainError)
    {
        try setBytesSynchronously(key, value, options)
    }

    /// Reads the bytes stored under a key (a string item gives its UTF-8). Same rules as ``getItem(_:_:)``.
    public func getBytes(_ key: String, _ options: GetOptions = GetOptions()) async throws(KeychainError) -> Data? {
        try await read(key, prompt: options.prompt)?.value
    }

    /// Whether an item exists under a key. Never prompts, and never reads a value: an item the keychain can't open
    /// now (the device locked) exists all the same.
    public func hasItem(_ key: String) async throws(KeychainError) -> Bool {
        try Validation.name(key, "key")
        try prepare()
        return try exists(key)
    }

    /// The attributes of the item under a key, or nil when there is none. Never prompts.
    public func getItemInfo(_ key: String) async throws(KeychainError) -> ItemInfo? {
        try Validation.name(key, "key")
        try prepare()
        guard let item = try current(key) else { return nil }
        return try info(key, item)
    }

    /// The description of the package's item `item`, stored under `key`.
    func info(_ key: String, _ item: ItemAttributes) throws(KeychainError) -> ItemInfo {
        info(key, item, try metadata(of: item))
    }

    /// The description of `item`, whose metadata is `metadata`.
    func info(_ key: String, _ item: ItemAttributes, _ metadata: ItemMetadata) -> ItemInfo {
        ItemInfo(
            key: key, label: label(of: item, metadata),
            accessible: item.protectionDomain.accessible ?? Self.defaultAccessible,
            accessControl: metadata.accessControl, synchronizable: item.synchronizable,
            createdAt: Self.milliseconds(item.createdAt), modifiedAt: Self.milliseconds(item.modifiedAt),
            android: metadata.securityLevel.map(AndroidItemInfo.init(securityLevel:)))
    }

    /// Every key of this service, sorted by UTF-16 code units (as JavaScript sorts). Never prompts.
    public func getAllKeys() async throws(KeychainError) -> [String] {
        try prepare()
        let accounts = try run { () throws(KeychainDatabaseError) in try database.accounts(matching: ownQuery()) }
        let sorted = accounts.map(Self.key(ofAccount:)).sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
        var keys: [String] = []
        keys.reserveCapacity(sorted.count)
        for key in sorted where keys.last.map({ !ExactText.equal($0, key) }) ?? true {
            keys.append(key)
        }
        return keys
    }

    /// Removes the item under a key; a missing key is not an error. Never prompts.
    public func removeItem(_ key: String) async throws(KeychainError) {
        try removeItemSynchronously(key)
    }

    /// Removes every item of this service (the package's own; never another library's). Never prompts.
    public func clear() async throws(KeychainError) {
        try prepare()
        try run { () throws(KeychainDatabaseError) in try database.delete(matching: ownQuery()) }
    }

    /// Stores credentials: the password is the value and the username the label, under `credentials` or
    /// `credentials:<server>`.
    /// - Throws: `INVALID_ARGUMENT` for an empty username or a U+0000 in either field; as ``setItem(_:_:_:)``.
    public func setCredentials(
        _ credentials: Credentials, _ options: CredentialsOptions = CredentialsOptions()
    ) async throws(KeychainError) {
        let key = try Self.credentialsKey(options.server)
        try Self.validate(credentials)
        try write(
            key, Self.utf8(credentials.password), encoding: .credentials, label: credentials.username,
            options.setOptions)
    }

    /// Reads credentials, or nil when there is no item.
    /// - Throws: `INVALID_ARGUMENT` when the item has no label (no username); as ``getItem(_:_:)``.
    public func getCredentials(
        _ options: CredentialsGetOptions = CredentialsGetOptions()
    ) async throws(KeychainError) -> Credentials? {
        let key = try Self.credentialsKey(options.server)
        guard let found = try await read(key, prompt: options.prompt, requireLabel: true) else { return nil }
        guard let password = String(validUTF8: found.value) else {
            throw .invalid("item '\(key)' holds bytes that are not UTF-8")
        }
        return Credentials(username: found.label ?? "", password: password)
    }

    /// Removes credentials; missing credentials are not an error. Never prompts.
    public func removeCredentials(
        _ options: CredentialsGetOptions = CredentialsGetOptions()
    ) async throws(KeychainError) {
        try await removeItem(try Self.credentialsKey(options.server))
    }

    /// The rules of credentials: a username that is not empty, and no U+0000 in either field.
    static func validate(_ credentials: Credentials) throws(KeychainError) {
        if credentials.username.isEmpty { throw .invalid("username must not be empty") }
        try Validation.storedString(credentials.username, "username")
        try Validation.storedString(credentials.password, "password")
    }

    static func credentialsKey(_ server: String?) throws(KeychainError) -> String {
        guard let server else { return "credentials" }
        if server.isEmpty { throw .invalid("server must not be empty") }
        let key = "credentials:" + server
        try Validation.name(key, "credentials key")
        return key
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
