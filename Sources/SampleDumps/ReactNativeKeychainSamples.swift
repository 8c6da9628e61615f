import ApexDumps
import Foundation

/// react-native-keychain's storage, made up: iOS keychain items (formats/react-native-keychain.md §1–§3) and the
/// Android prefs of §5–§6.
enum ReactNativeKeychainSamples {
    static let bundleID = "com.example.sampleapp"
    static let accessGroup = "A1B2C3D4E5.com.example.sampleapp"

    // MARK: iOS

    /// Generic passwords in several services (the bundle-id default among them, with a Firebase `_pfo` item
    /// beside RNK's), internet credentials, a `cloudSync` item, access-controlled items and a service with `:`.
    static var iosItems: [SampleItem] {
        var items: [SampleItem] = []
        func add(
            _ itemClass: String = "genp", service: String? = nil, server: String? = nil, account: String, value: String,
            protection: String = "ck", accessControl: SampleAccessControl? = nil, synchronizable: Bool = false
        ) {
            let index = items.count
            items.append(
                SampleItem(
                    itemClass: itemClass, service: service.map { .string($0) }, server: server,
                    account: .string(account), value: Data(value.utf8), protection: protection,
                    accessControl: accessControl, accessGroup: accessGroup, synchronizable: synchronizable,
                    created: SampleDates.at(hours: index * 5),
                    modified: SampleDates.at(hours: index * 5, seconds: index * 97)))
        }
        // setGenericPassword without a service: the service is the bundle id.
        add(service: bundleID, account: "sample-user@example.com", value: "sample-password-0001")
        // Firebase's item under the same service (issues #363, #648): not react-native-keychain's.
        add(service: bundleID, account: "_pfo", value: "1")
        add(service: "auth", account: "sample-user", value: "sample-token-0001", protection: "aku")
        add(
            service: "vault", account: "vault", value: "sample-vault-key-0001", protection: "aku",
            accessControl: .biometryCurrentSet)
        add(
            service: "pin", account: "sample-user", value: "sample-pin-0001",
            accessControl: .biometryAnyOrDevicePasscode)
        add(
            service: "passcode-only", account: "sample-user", value: "sample-secret-0001", protection: "akpu",
            accessControl: .devicePasscode)
        // `cloudSync: false` on v9.1+ still writes a synchronizable item (issue #800).
        add(service: "cloud", account: "sample-user", value: "sample-token-0002", synchronizable: true)
        add(service: "session:v2", account: "sample-user", value: "sample-session-0001")
        // ACCESSIBLE.ALWAYS_THIS_DEVICE_ONLY, removed in v8.1.0.
        add(service: "legacy", account: "legacy-user", value: "sample-password-0003", protection: "dku")
        add("inet", server: "https://example.com", account: "sample-user@example.com", value: "sample-password-0002")
        add(
            "inet", server: "https://api.example.com:8443", account: "api-user", value: "sample-api-key-0001",
            protection: "ak", accessControl: .userPresence)
        return items
    }

    static func iosFiles() throws -> [SampleFile] {
        let items = iosItems
        let folder = "react-native-keychain/ios"
        return [
            SampleFile(
                path: "\(folder)/keychain.plist", data: XMLPlistWriter.write(KeychainDumpWriter.plistByClass(items)),
                format: .iosPlist,
                about:
                    "XML plist, items by class (`genp`, `inet`): default bundle-id service with a Firebase `_pfo` item, "
                    + "access control in DER (`accc`), a `cloudSync` item, a service with `:`, internet credentials"),
            SampleFile(
                path: "\(folder)/keychain-binary.plist",
                data: BinaryPlistWriter.write(KeychainDumpWriter.plistArray(items)),
                format: .iosPlist, about: "the same items as a binary plist: one array, each item with its `class`"),
            SampleFile(
                path: "\(folder)/objection-dump.json", data: KeychainDumpWriter.objectionJSON(items),
                format: .objectionJSON, about: "the same items as objection's `ios keychain dump --json`"),
            SampleFile(
                path: "\(folder)/keychain-export.sqlite", data: try KeychainSQLiteWriter.write(items),
                format: .keychainSQLite,
                about: "the same items as a decrypted keychain export (SQLite `genp`/`inet`, value in `v_Data`)"),
        ]
    }

    // MARK: Android

    /// Ciphertext for a Keystore cipher: random bytes of the cipher's layout (the key never leaves the device,
    /// so nothing can tell them from real ciphertext).
    private static func keystoreBlob(_ cipher: String, plaintext: String, random: inout SampleRandom) -> Data {
        let length = plaintext.utf8.count
        switch cipher {
        case "KeystoreAESCBC": return random.bytes(16 + (length / 16 + 1) * 16)
        case "KeystoreRSAECB": return random.bytes(256)
        default: return random.bytes(12 + length + 16)
        }
    }

    /// One credential: `<service>:u`, `:p` and, unless `withCipher` is false (v1.x), `:c`.
    static func credential(
        service: String, cipher: String, username: String, password: String, random: inout SampleRandom,
        concealKey: Data, spaceBug: Bool = false, withCipher: Bool = true
    ) throws -> [PreferenceEntry] {
        func encrypt(_ text: String, _ suffix: String) throws -> String {
            let blob: Data
            if cipher == "FacebookConceal" {
                let entity = "RN_KEYCHAIN:" + service + (spaceBug ? " " : "") + suffix
                blob = try Conceal.encrypt(Data(text.utf8), entity: entity, key: concealKey, iv: random.bytes(12))
            } else {
                blob = keystoreBlob(cipher, plaintext: text, random: &random)
            }
            return AndroidBase64.defaultFlags(blob)
        }
        var entries = [
            PreferenceEntry(name: service + ":u", value: .string(try encrypt(username, "user"))),
            PreferenceEntry(name: service + ":p", value: .string(try encrypt(password, "pass"))),
        ]
        if withCipher { entries.append(PreferenceEntry(name: service + ":c", value: .string(cipher))) }
        return entries
    }

    static func androidFiles() throws -> [SampleFile] {
        let folder = "react-native-keychain/android"
        // One generator per part, so that leaving out the Conceal entries changes nothing else.
        var random = SampleRandom(seed: 0x524E_4B41_4E44)
        var concealRandom = SampleRandom(seed: 0x434F_4E43_4541_4C)
        var dataStoreRandom = SampleRandom(seed: 0x4441_5441_5354_4F52)
        let concealKey = concealRandom.bytes(32)

        // v8.x–v9.1.x: SharedPreferences.
        var xml: [PreferenceEntry] = []
        xml += try credential(
            service: "", cipher: "KeystoreAESCBC", username: "sample-user@example.com",
            password: "sample-password-0101",
            random: &random, concealKey: concealKey)
        let vault = try credential(
            service: "vault", cipher: "KeystoreRSAECB", username: "vault", password: "sample-vault-key-0101",
            random: &random, concealKey: concealKey)
        xml += vault
        xml += try credential(
            service: "https://api.example.com:8443", cipher: "KeystoreAESCBC", username: "api-user",
            password: "sample-api-key-0101", random: &random, concealKey: concealKey)
        if Conceal.isAvailable {
            xml += try credential(
                service: "legacy", cipher: "FacebookConceal", username: "legacy-user", password: "sample-password-0102",
                random: &concealRandom, concealKey: concealKey)
            // Written by v9.0.0–v9.2.2, whose entity names have a space (issue #704).
            xml += try credential(
                service: "staging", cipher: "FacebookConceal", username: "staging-user", password: "sample-token-0103",
                random: &concealRandom, concealKey: concealKey, spaceBug: true)
            // v1.x wrote no `:c`; later versions read such an entry as Conceal.
            xml += try credential(
                service: "old", cipher: "FacebookConceal", username: "old-user", password: "sample-password-0104",
                random: &concealRandom, concealKey: concealKey, withCipher: false)
        }

        // v9.2.0+: DataStore. The default service was saved again (a new cipher, a new value), `vault` was
        // migrated from the XML as Android read it (with the serializer's trailing spaces), and `auth` and a chat
        // server are new.
        var dataStore: [PreferenceEntry] = []
        dataStore += try credential(
            service: "", cipher: "KeystoreAESGCM_NoAuth", username: "sample-user@example.com",
            password: "sample-password-0105", random: &dataStoreRandom, concealKey: concealKey)
        dataStore += vault.map { entry in
            guard case .string(let text) = entry.value else { return entry }
            return PreferenceEntry(name: entry.name, value: .string(SharedPreferencesWriter.readBack(text)))
        }
        dataStore += try credential(
            service: "auth", cipher: "KeystoreAESGCM", username: "sample-user", password: "sample-token-0106",
            random: &dataStoreRandom, concealKey: concealKey)
        dataStore += try credential(
            service: "http://100.64.0.7:8065", cipher: "KeystoreAESGCM_NoAuth", username: "chat-user",
            password: "sample-token-0107", random: &dataStoreRandom, concealKey: concealKey)

        let conceal =
            Conceal.isAvailable
            ? "; `legacy`, `staging` (v9.0–9.2.2 entity with a space) and `old` (no `:c`, v1.x) are FacebookConceal, "
                + "really encrypted with the key in `crypto.KEY_256.xml`"
            : "; no FacebookConceal entries (this build of dump-samples has no AES-GCM)"
        return [
            SampleFile(
                path: "\(folder)/shared_prefs/RN_KEYCHAIN.xml", data: SharedPreferencesWriter.write(xml),
                format: .sharedPreferences,
                about: "v8–v9.1 SharedPreferences: default service `\"\"` (KeystoreAESCBC), `vault` (KeystoreRSAECB), "
                    + "a server URL with a port as the service" + conceal),
            SampleFile(
                path: "\(folder)/shared_prefs/crypto.KEY_256.xml",
                data: SharedPreferencesWriter.write([
                    PreferenceEntry(name: "cipher_key", value: .string(AndroidBase64.defaultFlags(concealKey)))
                ]),
                format: .sharedPreferences, about: "Conceal's key file: `cipher_key`, a Base64 AES-256 key (made up)"),
            SampleFile(
                path: "\(folder)/files/datastore/RN_KEYCHAIN.preferences_pb", data: DataStoreWriter.write(dataStore),
                format: .dataStore,
                about: "v9.2+ DataStore: overlaps the XML (the default service with a newer value, which wins; `vault` "
                    + "unchanged), plus `auth` (KeystoreAESGCM) and `http://100.64.0.7:8065` (KeystoreAESGCM_NoAuth)"),
            SampleFile(
                path: "\(folder)/shared_prefs/\(bundleID)_preferences.xml",
                data: SharedPreferencesWriter.write([
                    PreferenceEntry(name: "onboarding_done", value: .boolean(true)),
                    PreferenceEntry(name: "launch_count", value: .int(12)),
                    PreferenceEntry(name: "theme", value: .string("dark")),
                ]),
                format: .sharedPreferences,
                about:
                    "the app's own preferences: no library's data, so a folder's read skips it with a line on stderr",
                isKeychainDump: false),
        ]
    }
}
