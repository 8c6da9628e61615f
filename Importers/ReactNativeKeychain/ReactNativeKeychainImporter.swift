import ApexDumpModel
import ApexKeychain
import ApexMigration

/// Imports react-native-keychain's credentials from iOS keychain dumps and Android preference files.
///
/// ### iOS
/// A generic password (service S, account U, data P) becomes credentials (U, P) under the key `credentials` of
/// target service S (after `ImportOptions.serviceMap`). An internet password (server X) becomes the key
/// `credentials:<X>` of the app's default service: `ImportOptions.bundleID`, else the bundle id inferred from
/// the access groups of the dump (the team prefix removed), with a note saying which.
///
/// react-native-keychain writes no marker, so the importer recognises the items it knows to be another SDK's
/// (Firebase's marker item, items with attributes react-native-keychain never sets, Apple's and other teams'
/// access groups) and reports them as skipped. expo-secure-store's items (account and generic attribute holding
/// the same key bytes), react-native-sensitive-info's
/// (`RecordClaims.sensitiveInfoShape(_:options:)`: its JSON metadata in the generic attribute, or no
/// generic attribute under its classic default service `app`) and classes other than `genp` / `inet` are left out
/// entirely.
///
/// ### Android
/// ``sharedPreferencesFileName`` and ``dataStoreFileName`` hold the entries `<service>:u`, `<service>:p` and
/// `<service>:c` (username, password, cipher name); a copy under another name is recognised by those entries
/// (``recognises(_:)``), with a note. Where both files exist the DataStore wins key by key, as
/// androidx's SharedPreferences migration does, and the XML copy is reported as shadowed. `FacebookConceal`
/// values are decrypted with the key of ``concealKeyFileName`` (AES-256-GCM through libsodium); the Keystore
/// ciphers' values are sealed on the device, and their protection is still mapped. The Android default service
/// `""` is written to the app's bundle id, so it needs `ImportOptions.bundleID`.
///
/// ### Options
/// `ImportOptions.includeServices` and `ImportOptions.excludeServices` match the service as found (an
/// internet password's server; `""` for the Android default service); a filtered item is skipped but keeps its
/// target for the report. `ImportOptions.serviceMap` renames services as found (an internet password's
/// service is the default service, so mapping the bundle id moves it too; mapping `""` names the Android default
/// service without a bundle id).
///
/// Protection is never mapped to anything weaker than the source's; every lossy or inferred step is a note. No
/// note, reason or description holds a password, a username or a key (the username appears only in
/// `SourceDescription.account`).
public struct ReactNativeKeychainImporter: Importer {
    /// The SharedPreferences file of react-native-keychain up to 9.1.x (`shared_prefs/RN_KEYCHAIN.xml`).
    public static let sharedPreferencesFileName = "RN_KEYCHAIN.xml"
    /// The DataStore file of react-native-keychain 9.2.0 and later (`files/datastore/RN_KEYCHAIN.preferences_pb`).
    public static let dataStoreFileName = "RN_KEYCHAIN.preferences_pb"
    /// Facebook Conceal's key file (`shared_prefs/crypto.KEY_256.xml`, entry `cipher_key`).
    public static let concealKeyFileName = "crypto.KEY_256.xml"

    /// `SourceLibrary.reactNativeKeychain`.
    public var library: SourceLibrary { .reactNativeKeychain }

    /// Creates the importer.
    public init() {}

    /// Whether an Android preferences dump holds react-native-keychain's data, whatever the file's name: an
    /// `RN_KEYCHAIN` file (its name, or `<service>:c` entries holding the cipher names react-native-keychain
    /// writes, or only `<service>:u` / `:p` / `:c` entries) or Facebook Conceal's key file (its name, or only a
    /// `cipher_key` that is a Base64 32-byte key, and perhaps a `mac_key`). False for an iOS dump.
    public static func recognises(_ dump: Dump) -> Bool {
        AndroidEntries.recognition(dump) != nil || ConcealKeyring.isKeyFile(dump)
    }

    /// Whether `dump` is Facebook Conceal's key file (its name, or only a `cipher_key` that is a Base64 32-byte key,
    /// and perhaps a `mac_key`): it holds no items of its own, only the key of react-native-keychain's
    /// FacebookConceal entries, which are in its `RN_KEYCHAIN` file.
    public static func isConcealKeyFile(_ dump: Dump) -> Bool {
        ConcealKeyring.isKeyFile(dump)
    }

    /// The react-native-keychain items of `dumps`: the iOS items in dump and record order, then the Android
    /// services in file and entry order.
    ///
    /// - Throws: `ImportError` when a ``concealKeyFileName`` holds a `cipher_key` that is not a Base64 32-byte
    ///   key (the file is not Conceal's, or damaged).
    public func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
        let ios = IOSImport(dumps: dumps, options: options).items()
        let keyring = try ConcealKeyring(dumps: dumps)
        let android = AndroidImport(dumps: dumps, options: options, keyring: keyring).items()
        return ios + android
    }
}
