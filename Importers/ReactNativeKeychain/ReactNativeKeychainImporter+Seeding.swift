import ApexKeychain
import ApexMigration

extension ReactNativeKeychainImporter {
    /// One credential as react-native-keychain 10's `setGenericPassword` or `setInternetCredentials` writes it on
    /// iOS (`apple-secitem.md` §4.1), for ``seed(_:into:device:)``: what an app's test puts into an
    /// `InMemoryKeychainDatabase` to stand for the items the old library left on the phone.
    public struct Seed: Sendable, Equatable {
        /// `username`: the account (`acct`), as a string.
        public var username: String
        /// `password`: the value, as UTF-8. A test value: never print it.
        public var password: String
        /// `options.service` (a generic password); nil for the library's default, the app's bundle id
        /// (`Device.defaultService`).
        public var service: String?
        /// The server of an internet password (`srvr`); nil for a generic password.
        public var server: String?
        /// `options.accessible` as the keychain's code; the library's default is `ck` (`AfterFirstUnlock`).
        public var accessible: ProtectionDomain
        /// `options.accessControl` as the keychain's flags (`BiometryCurrentSetOrDevicePasscode` is
        /// `[.biometryCurrentSet, .or, .devicePasscode]`); empty for none, the library's default.
        public var accessControl: AccessControlFlags
        /// `options.cloudSync` (`sync`).
        public var cloudSync: Bool
        /// `options.accessGroup` (`agrp`); nil for the app's default group (`Device.defaultAccessGroup`).
        public var accessGroup: String?

        /// A generic password (`setGenericPassword(username, password, options)`).
        public init(
            username: String, password: String, service: String? = nil, accessible: ProtectionDomain = .ck,
            accessControl: AccessControlFlags = [], cloudSync: Bool = false, accessGroup: String? = nil
        ) {
            self.username = username
            self.password = password
            self.service = service
            self.accessible = accessible
            self.accessControl = accessControl
            self.cloudSync = cloudSync
            self.accessGroup = accessGroup
        }

        /// An internet password (`setInternetCredentials(server, username, password, options)`).
        public static func internetCredentials(
            server: String, username: String, password: String, accessible: ProtectionDomain = .ck,
            accessControl: AccessControlFlags = [], cloudSync: Bool = false, accessGroup: String? = nil
        ) -> Seed {
            var seed = Seed(
                username: username, password: password, accessible: accessible, accessControl: accessControl,
                cloudSync: cloudSync, accessGroup: accessGroup)
            seed.server = server
            return seed
        }

        /// The item the library's `SecItemAdd` leaves on `device`: no creator mark, no label, no generic
        /// attribute; the access control's class is `accessible`, as the keychain keeps it.
        func item(on device: any Device) -> KeychainItem {
            let attributes = ItemAttributes(
                itemClass: server == nil ? .genericPassword : .internetPassword,
                service: server == nil ? service ?? device.defaultService : "", account: username,
                accessGroup: accessGroup ?? device.defaultAccessGroup, protectionDomain: accessible,
                accessControl: accessControl, synchronizable: cloudSync, server: server)
            return Seeding.item(attributes, value: password, on: device)
        }
    }

    /// Puts `seeds` into `database` as react-native-keychain writes them on iOS, in order; the importer's on-device
    /// source (`MigrationSource.database`) reads them back as the library's items.
    ///
    /// As the library's set (a delete of the service's credentials, then an add), a seed replaces the credentials
    /// of the same service (or server), access group and `cloudSync` already in `database`, whatever their
    /// username. The device gives the defaults only (its bundle id and access group): its state is not checked.
    /// - Throws: the database's error, as its `add(_:)` and `delete(_:)` throw it.
    public static func seed(
        _ seeds: [Seed], into database: any KeychainDatabase, device: any Device
    ) throws(KeychainDatabaseError) {
        for seed in seeds {
            let item = seed.item(on: device)
            let a = item.attributes
            let query = ItemQuery(
                itemClass: a.itemClass, service: a.service, accessGroup: a.accessGroup, synchronizable: a.synchronizable
            )
            for old in try database.attributes(matching: query) where ExactText.equal(old.server, a.server) {
                try database.delete(old.primaryKey)
            }
            try database.add(item)
        }
    }
}
