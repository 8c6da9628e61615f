import ApexKeychain
import ApexMigration

extension ReactNativeEncryptedStorageImporter {
    /// One value as react-native-encrypted-storage's `setItem` (1.0.0–4.0.3) writes it on iOS
    /// (`react-native-encrypted-storage.md` §"iOS"), for ``seed(_:into:device:)``: what an app's test puts into an
    /// `InMemoryKeychainDatabase` to stand for the items the old library left on the phone.
    public struct Seed: Sendable, Equatable {
        /// The key: the account (`acct`), as a string.
        public var key: String
        /// The value, as UTF-8. A test value: never print it.
        public var value: String

        /// A value of `setItem(key, value)`: the library has no options.
        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }

        /// The item the library's `SecItemAdd` leaves on `device`: a generic password with no service, the
        /// keychain's default class `ak`, the app's default access group, and nothing else.
        func item(on device: any Device) -> KeychainItem {
            Seeding.item(
                ItemAttributes(service: "", account: key, accessGroup: device.defaultAccessGroup), value: value,
                on: device)
        }
    }

    /// Puts `seeds` into `database` as react-native-encrypted-storage writes them on iOS, in order; the importer's
    /// on-device source (`MigrationSource.database`) reads them back as the library's items.
    ///
    /// As the library's set (a delete by account alone, then an add), a seed first removes every generic password
    /// of its key in `database`, whatever its service or access group: another library's, or the package's own.
    /// The device gives the default access group only: its state is not checked.
    /// - Throws: the database's error, as its `add(_:)` and `delete(matching:)` throw it.
    public static func seed(
        _ seeds: [Seed], into database: any KeychainDatabase, device: any Device
    ) throws(KeychainDatabaseError) {
        for seed in seeds {
            try database.delete(matching: ItemQuery(itemClass: .genericPassword, account: seed.key))
            try database.add(seed.item(on: device))
        }
    }
}
