import ApexKeychain
import ApexMigration
import Foundation

extension ExpoSecureStoreImporter {
    /// One value as expo-secure-store's `setItemAsync` writes it on iOS (`apple-secitem.md` §4.2), for
    /// ``seed(_:into:device:)``: what an app's test puts into an `InMemoryKeychainDatabase` to stand for the items
    /// the old library left on the phone.
    public struct Seed: Sendable, Equatable {
        /// The key: the account (`acct`) and the generic attribute (`gena`), both its UTF-8 bytes.
        public var key: String
        /// The value, as UTF-8. A test value: never print it.
        public var value: String
        /// `keychainService`, without the suffix the library adds; the library's default is `app`.
        public var keychainService: String
        /// `keychainAccessible` as the keychain's code; the library's default is `ak` (`WHEN_UNLOCKED`).
        public var keychainAccessible: ProtectionDomain
        /// `requireAuthentication`: an access control of `biometryCurrentSet`, and the service's `:auth` suffix.
        public var requireAuthentication: Bool
        /// Whether the item is the legacy layout of the versions before 12.8.0, whose service has no suffix.
        public var legacy: Bool
        /// The access group option of 14.2.0 and later (`agrp`); nil for the app's default group
        /// (`Device.defaultAccessGroup`).
        public var accessGroup: String?

        /// A value of `setItemAsync(key, value, options)`.
        public init(
            key: String, value: String, keychainService: String = "app", keychainAccessible: ProtectionDomain = .ak,
            requireAuthentication: Bool = false, legacy: Bool = false, accessGroup: String? = nil
        ) {
            self.key = key
            self.value = value
            self.keychainService = keychainService
            self.keychainAccessible = keychainAccessible
            self.requireAuthentication = requireAuthentication
            self.legacy = legacy
            self.accessGroup = accessGroup
        }

        /// The service as the library spells it: `<keychainService>:no-auth` or `:auth`; bare for `legacy`.
        var service: String {
            legacy ? keychainService : keychainService + (requireAuthentication ? ":auth" : ":no-auth")
        }

        /// The item the library's `SecItemAdd` leaves on `device`: no creator mark, no label, never synchronizable.
        func item(on device: any Device) -> KeychainItem {
            let attributes = ItemAttributes(
                service: service, account: key, accessGroup: accessGroup ?? device.defaultAccessGroup,
                generic: Data(key.utf8), protectionDomain: keychainAccessible,
                accessControl: requireAuthentication ? .biometryCurrentSet : [])
            return Seeding.item(attributes, value: value, on: device)
        }
    }

    /// Puts `seeds` into `database` as expo-secure-store writes them on iOS, in order; the importer's on-device
    /// source (`MigrationSource.database`) reads them back as the library's items.
    ///
    /// As the library's set: a key already under the seed's spelling of the service keeps its attributes and
    /// protection and takes the new value (`SecItemUpdate` after `errSecDuplicateItem`); otherwise the item is
    /// added and, since 12.8.0 (not `legacy`), the key's copies under the other two spellings are removed. The
    /// device gives the default access group only: its state is not checked.
    /// - Throws: the database's error, as its `add(_:)`, `replace(_:with:)` and `delete(_:)` throw it.
    public static func seed(
        _ seeds: [Seed], into database: any KeychainDatabase, device: any Device
    ) throws(KeychainDatabaseError) {
        for seed in seeds {
            let item = seed.item(on: device)
            guard try !Seeding.updateValue(of: item, in: database) else { continue }
            try database.add(item)
            guard !seed.legacy else { continue }
            let other = seed.keychainService + (seed.requireAuthentication ? ":no-auth" : ":auth")
            for service in [seed.keychainService, other] {
                var copy = item.attributes
                copy.service = service
                try database.delete(copy.primaryKey)
            }
        }
    }
}
