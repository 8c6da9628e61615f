import ApexKeychain
import ApexMigration

extension ReactNativeSensitiveInfoImporter {
    /// One value as react-native-sensitive-info's classic `setItem` (4.x–5.5.8, 6.0.0-alpha) writes it on iOS
    /// (`react-native-sensitive-info.md` §2.1), for ``seed(_:into:device:)``: what an app's test puts into an
    /// `InMemoryKeychainDatabase` to stand for the items the old library left on the phone.
    public struct Seed: Sendable, Equatable {
        /// The key: the account (`acct`), as a string.
        public var key: String
        /// The value, as UTF-8. A test value: never print it.
        public var value: String
        /// `keychainService`; the library's default is ``ReactNativeSensitiveInfoImporter/classicService``
        /// (`app`). The importer takes an item of another service for the library's only when
        /// `ImportOptions.libraries` is `[.reactNativeSensitiveInfo]` (react-native-keychain's items look the same).
        public var keychainService: String
        /// `kSecAttrAccessible` as the keychain's code; nil when the option is absent and nothing is written (the
        /// keychain's default, `ak`). Ignored with ``touchID``.
        public var accessible: ProtectionDomain?
        /// `touchID: true` with `kSecAccessControl`: the access control's flags (the library's default is
        /// `.userPresence`), always of class `akpu`; nil without `touchID`.
        public var touchID: AccessControlFlags?
        /// `kSecAttrSynchronizable: true` (`sync`); absent, the library passes `kSecAttrSynchronizableAny`, which an
        /// add leaves out (not synchronizable).
        public var synchronizable: Bool

        /// A value of `setItem(key, value, options)`.
        public init(
            key: String, value: String, keychainService: String = ReactNativeSensitiveInfoImporter.classicService,
            accessible: ProtectionDomain? = nil, touchID: AccessControlFlags? = nil, synchronizable: Bool = false
        ) {
            self.key = key
            self.value = value
            self.keychainService = keychainService
            self.accessible = accessible
            self.touchID = touchID
            self.synchronizable = synchronizable
        }

        /// The item the library's `SecItemAdd` leaves on `device`: no creator mark, no label, no generic attribute,
        /// the app's default access group (the library never names one).
        func item(on device: any Device) -> KeychainItem {
            let attributes = ItemAttributes(
                service: keychainService, account: key, accessGroup: device.defaultAccessGroup,
                protectionDomain: touchID == nil ? accessible ?? .ak : .akpu, accessControl: touchID ?? [],
                synchronizable: synchronizable)
            return Seeding.item(attributes, value: value, on: device)
        }
    }

    /// Puts `seeds` into `database` as react-native-sensitive-info writes them on iOS, in order; the importer's
    /// on-device source (`MigrationSource.database`) reads them back as the library's items.
    ///
    /// As the library's set since 5.5.6: a key already in the service keeps its attributes and protection and takes
    /// the new value (`SecItemUpdate` after `errSecDuplicateItem`); otherwise the item is added. The device gives
    /// the default access group only: its state is not checked.
    /// - Throws: the database's error, as its `add(_:)` and `replace(_:with:)` throw it.
    public static func seed(
        _ seeds: [Seed], into database: any KeychainDatabase, device: any Device
    ) throws(KeychainDatabaseError) {
        for seed in seeds {
            let item = seed.item(on: device)
            guard try !Seeding.updateValue(of: item, in: database) else { continue }
            try database.add(item)
        }
    }
}
