import ApexKeychain

/// Where items go: the package's keychains on one database and device, one `Keychain` per service (and
/// access group), opened as needed.
public final class MigrationTarget: Sendable {
    /// The database the keychains write to.
    public let database: any KeychainDatabase
    /// The device that decides what protection can be given.
    public let device: any Device
    private let keychains = Locked<[ExactName: Keychain]>([:])

    /// Creates a target.
    public init(database: any KeychainDatabase, device: any Device) {
        self.database = database
        self.device = device
    }

    /// The keychain of a service (and access group; nil is the app's default group).
    public func keychain(service: String, accessGroup: String? = nil) throws(KeychainError) -> Keychain {
        let name = ExactName(service, accessGroup ?? "")
        if let open = keychains.withLock({ $0[name] }) { return open }
        let keychain = try Keychain(
            KeychainOptions(service: service, accessGroup: accessGroup), database: database, device: device)
        keychains.withLock { $0[name] = keychain }
        return keychain
    }
}
