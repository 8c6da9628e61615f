import ApexDumps
import Foundation

/// react-native-encrypted-storage's storage, made up (formats/react-native-encrypted-storage.md): iOS generic
/// passwords with no service, and `RN_ENCRYPTED_STORAGE_SHARED_PREF.xml` as each version family leaves it.
public enum ReactNativeEncryptedStorageSamples {
    static let accessGroup = "A1B2C3D4E5.com.example.rnesapp"
    static let fileName = "RN_ENCRYPTED_STORAGE_SHARED_PREF.xml"
    static let keyKeyset = "__androidx_security_crypto_encrypted_prefs_key_keyset__"
    static let valueKeyset = "__androidx_security_crypto_encrypted_prefs_value_keyset__"

    /// Every value the samples hold (the secrecy tests look for each in every output).
    public static let secrets = [
        "sample-session-0300", "sample-refresh-0301", "sample-pin-0302", "sample-persist-0303", "sample-password-0304",
        "sample-other-sdk-0305", "sample-legacy-0310", "sample-legacy-0311", "sample-api22-0312",
        "sample-fallback-0313",
        "sample-fallback-0314",
    ]

    // MARK: iOS

    /// The library's items (svce empty, or absent as some exports leave it), a patched `aku` one (issue #104),
    /// and react-native-keychain's item under the bundle id, which shows the app's default service.
    static var iosItems: [SampleItem] {
        func item(
            _ service: DumpBytes?, _ account: String, _ value: String, _ pdmn: String = "ak", hours: Int
        )
            -> SampleItem
        {
            SampleItem(
                itemClass: "genp", service: service, account: .string(account), value: Data(value.utf8),
                protection: pdmn, accessGroup: accessGroup, created: SampleDates.at(hours: hours),
                modified: SampleDates.at(hours: hours, seconds: 12))
        }
        return [
            item(
                .string(""), "user_session", #"{"token":"sample-session-0300","refresh":"sample-refresh-0301"}"#,
                hours: 300),
            item(.string(""), "pinCode", "sample-pin-0302", "aku", hours: 301),
            item(nil, "persist:root", #"{"auth":"{\"secret\":\"sample-persist-0303\"}"}"#, hours: 302),
            item(.string("com.example.rnesapp"), "alice", "sample-password-0304", hours: 303),
        ]
    }

    /// The same items and another SDK's item with no service but a label, which react-native-encrypted-storage
    /// never writes: nothing then tells the unmarked items from that SDK's.
    static var iosItemsWithAnotherSDK: [SampleItem] {
        var items = iosItems
        var other = items[0]
        other.account = .string("device-id")
        other.value = Data("sample-other-sdk-0305".utf8)
        other.label = "Other SDK"
        items.append(other)
        return items
    }

    static func iosFiles() -> [SampleFile] {
        [
            SampleFile(
                path: "react-native-encrypted-storage/ios/keychain.plist",
                data: XMLPlistWriter.write(KeychainDumpWriter.plistByClass(iosItems)), format: .iosPlist,
                about: "XML plist (every version): generic passwords with an empty or absent service, account = key, "
                    + "a patched `aku` item (issue #104), and a react-native-keychain item under the bundle id"),
            SampleFile(
                path: "react-native-encrypted-storage/ios/objection-dump.json",
                data: KeychainDumpWriter.objectionJSON(iosItems), format: .objectionJSON,
                about: "the same items as objection's `ios keychain dump --json`"),
            SampleFile(
                path: "react-native-encrypted-storage/ios/keychain-with-another-sdk.plist",
                data: XMLPlistWriter.write(KeychainDumpWriter.plistByClass(iosItemsWithAnotherSDK)),
                format: .iosPlist,
                about: "the same items and another SDK's empty-service item with a label: the unmarked items are "
                    + "skipped unless `--from react-native-encrypted-storage`"),
        ]
    }

    // MARK: Android

    /// A Tink keyset's proto: cleartext (`Keyset`, with made-up key material) or wrapped (`EncryptedKeyset`,
    /// random bytes where the Keystore's ciphertext goes, and its `KeysetInfo`).
    static func keyset(typeURL: String, keyID: UInt32, cleartext: Bool, random: inout SampleRandom) -> String {
        let url = DataStoreWriter.lengthDelimited(1, Array(typeURL.utf8))
        let id = DataStoreWriter.tag(3, 0) + DataStoreWriter.varint(UInt64(keyID))
        let enabledTink = DataStoreWriter.tag(2, 0) + [1] + id + DataStoreWriter.tag(4, 0) + [1]
        let bytes: [UInt8]
        if cleartext {
            let material = DataStoreWriter.lengthDelimited(2, Array(random.bytes(64)))
            let keyData = url + DataStoreWriter.lengthDelimited(2, material) + DataStoreWriter.tag(3, 0) + [1]
            let key = DataStoreWriter.lengthDelimited(1, keyData) + enabledTink
            bytes =
                DataStoreWriter.tag(1, 0) + DataStoreWriter.varint(UInt64(keyID))
                + DataStoreWriter.lengthDelimited(2, key)
        } else {
            let info =
                DataStoreWriter.tag(1, 0) + DataStoreWriter.varint(UInt64(keyID))
                + DataStoreWriter.lengthDelimited(2, url + enabledTink)
            bytes =
                DataStoreWriter.lengthDelimited(2, Array(random.bytes(148)))
                + DataStoreWriter.lengthDelimited(3, info)
        }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// A value as EncryptedSharedPreferences encrypts it: a 4-byte type, then the value (a string's 4-byte length
    /// and UTF-8; a boolean's byte; an int's or a float's 4 bytes; a long's 8).
    public enum EncryptedValue: Sendable {
        case string(String)
        case boolean
        case int
        case long
        case float

        /// The length of the plaintext it encrypts.
        var plaintextLength: Int {
            switch self {
            case .string(let text): 4 + 4 + text.utf8.count
            case .boolean: 4 + 1
            case .int, .float: 4 + 4
            case .long: 4 + 8
            }
        }
    }

    /// An EncryptedSharedPreferences entry of a `key` / `value` pair: Tink's prefix and random bytes of the
    /// lengths AES-SIV and AES-GCM give.
    static func encryptedEntry(
        key: String, value: EncryptedValue, ids: (UInt32, UInt32), random: inout SampleRandom
    )
        -> PreferenceEntry
    {
        func prefix(_ id: UInt32) -> Data { Data([1] + (0..<4).map { UInt8(truncatingIfNeeded: id >> (24 - 8 * $0)) }) }
        let name = prefix(ids.0) + random.bytes(16 + key.utf8.count)
        let sealed = prefix(ids.1) + random.bytes(12 + value.plaintextLength + 16)
        return PreferenceEntry(name: AndroidBase64.noWrap(name), value: .string(AndroidBase64.noWrap(sealed)))
    }

    /// The keysets and encrypted entries of one file of strings.
    static func encrypted(_ pairs: [(String, String)], cleartext: Bool, seed: UInt64) -> [PreferenceEntry] {
        encrypted(pairs.map { ($0.0, EncryptedValue.string($0.1)) }, cleartext: cleartext, seed: seed)
    }

    /// The entries of an EncryptedSharedPreferences file (`pairs`, then the two Tink keysets wrapped by the Keystore
    /// key) as an app that stores booleans and numbers beside strings leaves it (`putBoolean`, `putInt`, …).
    public static func encryptedPreferences(_ pairs: [(String, EncryptedValue)], seed: UInt64) -> [PreferenceEntry] {
        encrypted(pairs, cleartext: false, seed: seed)
    }

    /// ``encryptedPreferences(_:seed:)`` as the file's XML.
    public static func encryptedPreferencesFile(_ pairs: [(String, EncryptedValue)], seed: UInt64) -> Data {
        SharedPreferencesWriter.write(encryptedPreferences(pairs, seed: seed))
    }

    /// The keysets and encrypted entries of one file.
    static func encrypted(_ pairs: [(String, EncryptedValue)], cleartext: Bool, seed: UInt64) -> [PreferenceEntry] {
        var random = SampleRandom(seed: seed)
        let ids = (
            UInt32(truncatingIfNeeded: random.next()) | 0x1000_0000,
            UInt32(truncatingIfNeeded: random.next()) | 0x1000_0000
        )
        var entries = pairs.map { encryptedEntry(key: $0.0, value: $0.1, ids: ids, random: &random) }
        entries.append(
            PreferenceEntry(
                name: keyKeyset,
                value: .string(
                    keyset(
                        typeURL: "type.googleapis.com/google.crypto.tink.AesSivKey", keyID: ids.0, cleartext: cleartext,
                        random: &random))))
        entries.append(
            PreferenceEntry(
                name: valueKeyset,
                value: .string(
                    keyset(
                        typeURL: "type.googleapis.com/google.crypto.tink.AesGcmKey", keyID: ids.1, cleartext: cleartext,
                        random: &random))))
        return entries
    }

    static func androidFiles() -> [SampleFile] {
        func file(_ folder: String, _ entries: [PreferenceEntry], _ about: String) -> SampleFile {
            SampleFile(
                path: "react-native-encrypted-storage/\(folder)/shared_prefs/\(fileName)",
                data: SharedPreferencesWriter.write(entries), format: .sharedPreferences, about: about)
        }
        func plain(_ pairs: [(String, String)]) -> [PreferenceEntry] {
            pairs.map { PreferenceEntry(name: $0.0, value: .string($0.1)) }
        }
        let sealedPairs = [("user_session", "{\"token\":\"…\"}"), ("pinCode", "0000"), ("persist:root", "{}")]
        return [
            file(
                "android", encrypted(sealedPairs, cleartext: false, seed: 0x524E_4553_0002),
                "2.0.0–4.0.3 (API 23+): EncryptedSharedPreferences, three entries and the two Tink keysets wrapped by the Keystore master key: sealed"
            ),
            file(
                "android-1.0.0",
                plain([("user_session", #"{"token":"sample-legacy-0310"}"#), ("pinCode", "sample-legacy-0311")]),
                "1.0.0: plain SharedPreferences, keys and values in cleartext"),
            file(
                "android-2.3-api22", plain([("authToken", "sample-api22-0312")]),
                "2.3.0–2.4.4 below API 23: plain SharedPreferences by design"),
            file(
                "android-fallback",
                encrypted(sealedPairs.prefix(2).map { $0 }, cleartext: false, seed: 0x524E_4553_0003)
                    + plain([("user_session", "sample-fallback-0313"), ("lastSync", "sample-fallback-0314")]),
                "2.3.0+ after EncryptedSharedPreferences failed to open (an Auto Backup restore without the Keystore key): old encrypted entries and new plain-text ones in one file"
            ),
            file(
                "android-4.0-api21",
                encrypted(sealedPairs.prefix(2).map { $0 }, cleartext: true, seed: 0x524E_4553_0004),
                "4.0.x on API 21–22: EncryptedSharedPreferences with the Tink keysets in cleartext (decryptable off the device; sealed here)"
            ),
        ]
    }
}
