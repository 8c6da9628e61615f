import ApexDumps
import Foundation

/// expo-secure-store's storage, made up: iOS keychain items (formats/expo-secure-store.md §1) and the Android
/// `SecureStore` prefs of §2.
enum ExpoSecureStoreSamples {
    static let accessGroup = "A1B2C3D4E5.com.example.expoapp"

    // MARK: iOS

    /// Items under `app`, `app:no-auth` and `app:auth` (one key under all three), account and generic as UTF-8
    /// data, an SDK 49 `akpu` item, a custom `keychainService` and an old Expo Go scoped key.
    static var iosItems: [SampleItem] {
        var items: [SampleItem] = []
        func add(
            service: String, key: String, value: String, protection: String,
            accessControl: SampleAccessControl? = nil, createdHours: Int
        ) {
            let encodedKey = Data(key.utf8)
            items.append(
                SampleItem(
                    itemClass: "genp", service: .string(service), account: .data(encodedKey),
                    generic: .data(encodedKey),
                    value: Data(value.utf8), protection: protection, accessControl: accessControl,
                    accessGroup: accessGroup, created: SampleDates.at(hours: createdHours),
                    modified: SampleDates.at(hours: createdHours, seconds: 30)))
        }
        // SDK 47/48 (Obj-C): no suffix, and AfterFirstUnlock when `keychainAccessible` was not given.
        add(service: "app", key: "authToken", value: "sample-token-0200", protection: "ck", createdHours: 0)
        // SDK 49 (Swift, before 12.6.0): WHEN_UNLOCKED_THIS_DEVICE_ONLY was stored as WhenPasscodeSet (`akpu`).
        add(service: "app", key: "deviceSecret", value: "sample-secret-0201", protection: "akpu", createdHours: 10)
        // SDK ≤ 40 standalone apps scoped keys as `@owner/slug-<key>`; never read since, so never migrated.
        add(
            service: "app", key: "@sample-owner/sample-app-legacyKey", value: "sample-token-0202", protection: "ck",
            createdHours: 1)
        // SDK 50+: the suffixed services. `authToken` was written again without and with authentication.
        add(service: "app:no-auth", key: "authToken", value: "sample-token-0203", protection: "ak", createdHours: 200)
        add(
            service: "app:auth", key: "authToken", value: "sample-token-0204", protection: "ak",
            accessControl: .biometryCurrentSet, createdHours: 210)
        add(
            service: "app:auth", key: "biometricSecret", value: "sample-secret-0205", protection: "aku",
            accessControl: .biometryCurrentSet, createdHours: 220)
        add(
            service: "secrets:no-auth", key: "api-key", value: "sample-api-key-0206", protection: "cku",
            createdHours: 230)
        return items
    }

    static func iosFiles() -> [SampleFile] {
        [
            SampleFile(
                path: "expo-secure-store/ios/keychain.plist",
                data: XMLPlistWriter.write(KeychainDumpWriter.plistByClass(iosItems)),
                format: .iosPlist,
                about: "XML plist: `authToken` under `app`, `app:no-auth` and `app:auth`; acct/gena as data; an SDK 49 "
                    + "`akpu` item; `biometryCurrentSet` access control; `secrets:no-auth`; an Expo Go scoped `@owner/slug-` key"
            )
        ]
    }

    // MARK: Android

    /// An encrypted value's JSON: `aes` (or `hybrid`) fields, plus the ≥12.5.0 fields when `keystoreAlias` is set.
    private static func item(
        _ plaintext: String, scheme: String = "aes", keystoreAlias: String?, requireAuthentication: OrgJSON.Member?,
        random: inout SampleRandom
    ) -> String {
        var ciphertext = random.bytes(plaintext.utf8.count + 16)
        // A first byte of 0xFC makes the Base64 start with `/`, which org.json writes as `\/`.
        ciphertext[0] = 0xFC
        var members: [(String, OrgJSON.Member)] = [
            ("ct", .string(AndroidBase64.noWrap(ciphertext))), ("iv", .string(AndroidBase64.noWrap(random.bytes(12)))),
            ("tlen", .integer(128)),
        ]
        if scheme == "hybrid" { members.append(("esk", .string(AndroidBase64.noWrap(random.bytes(256))))) }
        if keystoreAlias == nil, let requireAuthentication {
            members.append(("requireAuthentication", requireAuthentication))
        }
        members.append(("scheme", .string(scheme)))
        if let keystoreAlias {
            members += [("usesKeystoreSuffix", .boolean(true)), ("keystoreAlias", .string(keystoreAlias))]
            members.append(("requireAuthentication", requireAuthentication ?? .boolean(false)))
        }
        return OrgJSON.object(members)
    }

    static func androidFiles() -> [SampleFile] {
        let folder = "expo-secure-store/android/shared_prefs"
        var random = SampleRandom(seed: 0x4558_504F_5353)
        func entry(_ name: String, _ json: String) -> PreferenceEntry {
            PreferenceEntry(name: name, value: .string(json))
        }

        let secureStore = [
            // ≥12.5.0: `<keychainService>-<key>`, default service `key_v1`.
            entry(
                "key_v1-authToken",
                item(
                    "sample-token-0300", keystoreAlias: "key_v1", requireAuthentication: .boolean(false),
                    random: &random)),
            entry(
                "key_v1-biometricSecret",
                item(
                    "sample-secret-0301", keystoreAlias: "key_v1", requireAuthentication: .boolean(true),
                    random: &random)),
            // Service and key both contain `-`: only the JSON's keystoreAlias tells where to cut.
            entry(
                "my-secrets-api-key",
                item(
                    "sample-api-key-0302", keystoreAlias: "my-secrets", requireAuthentication: .boolean(false),
                    random: &random)),
            // The string form of an open pull request (#41409).
            entry(
                "key_v1-pinCode",
                item(
                    "sample-pin-0303", keystoreAlias: "key_v1", requireAuthentication: .string("biometry"),
                    random: &random)),
            // ≤12.4.x: the raw key as the name, no service recorded.
            entry(
                "legacyToken",
                item("sample-token-0304", keystoreAlias: nil, requireAuthentication: nil, random: &random)),
            entry(
                "legacyBiometric",
                item("sample-secret-0305", keystoreAlias: nil, requireAuthentication: .boolean(true), random: &random)),
            // Android 5 (API < 23): RSA-wrapped AES key.
            entry(
                "hybridToken",
                item(
                    "sample-token-0306", scheme: "hybrid", keystoreAlias: nil, requireAuthentication: nil,
                    random: &random)),
        ]
        let scoped = [
            entry(
                "key_v1-accessSecureToken",
                item(
                    "sample-token-0307", keystoreAlias: "key_v1", requireAuthentication: .boolean(false),
                    random: &random))
        ]
        return [
            SampleFile(
                path: "\(folder)/SecureStore.xml", data: SharedPreferencesWriter.write(secureStore),
                format: .sharedPreferences,
                about: "`key_v1-…` JSON entries (`\\/` escapes; requireAuthentication false, true and \"biometry\"), a "
                    + "service with `-` (`my-secrets-api-key`), legacy raw-key entries, a `hybrid` entry"),
            SampleFile(
                path: "\(folder)/%40anonymous%2Fsample-app-0f6c2a9e-4b1d-4c3e-9a57-2d8e1f0b7c64-SecureStore.xml",
                data: SharedPreferencesWriter.write(scoped), format: .sharedPreferences,
                about: "an Expo Go scoped file (`<url-encoded experience id>-SecureStore.xml`)"),
        ]
    }
}
