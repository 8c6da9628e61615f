import ApexDumpModel
import Foundation

/// Which importer takes a keychain record that several libraries' layouts could fit: each importer asks here, so
/// that two importers never claim one record.
package enum RecordClaims {
    /// The note of an item whose dump does not say whether it synchronizes through iCloud Keychain
    /// (`KeychainRecord.synchronizableUnknown`), for the importers of libraries that can write synchronizable
    /// items; nil when the dump says.
    package static func unknownSyncNote(_ record: KeychainRecord) -> String? {
        guard record.synchronizableUnknown else { return nil }
        return "the dump does not say whether the item synchronizes through iCloud Keychain: migrated as not "
            + "synchronizable (a plist or SQLite export of the keychain says)"
    }

    /// The record's `sync` as found, for a report's protection: `1`, `0`, or `unknown` where the dump does not say
    /// (`KeychainRecord.synchronizableUnknown`).
    package static func syncAsFound(_ record: KeychainRecord) -> String {
        record.synchronizableUnknown ? "unknown" : record.synchronizable ? "1" : "0"
    }

    /// Whether `record` is expo-secure-store's: a generic password with a service whose account and generic
    /// attribute hold the same non-empty bytes (expo writes the key into both).
    package static func isExpoSecureStore(_ record: KeychainRecord) -> Bool {
        guard record.knownClass == .genericPassword, record.service != nil, let account = record.account,
            let generic = record.generic
        else { return false }
        return !account.bytes.isEmpty && account.bytes == generic.bytes
    }

    /// react-native-encrypted-storage's SharedPreferences file, in every version.
    package static let encryptedStorageFileName = "RN_ENCRYPTED_STORAGE_SHARED_PREF.xml"

    /// The names under which EncryptedSharedPreferences keeps its two Tink keysets in the file it encrypts.
    package static let encryptedPreferencesKeysetNames: Set<String> = [
        "__androidx_security_crypto_encrypted_prefs_key_keyset__",
        "__androidx_security_crypto_encrypted_prefs_value_keyset__",
    ]

    /// How a preferences dump is known to be react-native-encrypted-storage's Android file.
    package enum EncryptedStorageFile: Sendable, Equatable {
        /// It has the library's name, which never changed.
        case name
        /// It holds EncryptedSharedPreferences' Tink keysets (under any name, or read from stdin): of the four
        /// libraries only react-native-encrypted-storage writes EncryptedSharedPreferences.
        case keysets
        /// Its entries are all strings, with no mark of any library, and the user named the library
        /// (`--from react-native-encrypted-storage`): the plain-text files of 1.0.0 and below API 23 have none.
        case named
    }

    /// How `dump` is react-native-encrypted-storage's Android file, by its content first, or nil when it is not.
    /// `named`: the user named the library alone. Its plain-text entries hold whatever keys the app chose, so the
    /// other importers never read such a file by content.
    package static func encryptedStorageFile(_ dump: Dump, named: Bool = false) -> EncryptedStorageFile? {
        guard dump.format == .sharedPreferences, case .preferences(let entries) = dump.content else { return nil }
        if entries.contains(where: { encryptedPreferencesKeysetNames.contains($0.name) }) { return .keysets }
        if dump.fileName == encryptedStorageFileName { return .name }
        guard named, !entries.isEmpty, !otherLibrariesFileNames.contains(dump.fileName),
            !dump.fileName.hasSuffix("-SecureStore.xml"), !dump.fileName.hasPrefix("sensitive_info")
        else { return nil }
        return entries.allSatisfy { entry in
            guard case .string(let text) = entry.value else { return false }
            return !carriesAnotherLibrarysMark(name: entry.name, text: text)
        } ? .named : nil
    }

    /// The other libraries' Android file names, which `--from react-native-encrypted-storage` never takes.
    private static let otherLibrariesFileNames: Set<String> = [
        "RN_KEYCHAIN.xml", "crypto.KEY_256.xml", "SecureStore.xml", "shared_preferences.xml", "app.xml",
        "keystore.xml", "rnsi.key_versions.xml",
    ]

    /// Whether an entry has another library's layout: react-native-keychain's `S:u` / `:p` / `:c` names, the JSON
    /// of expo-secure-store (`ct`, `scheme`) or react-native-sensitive-info 5.6+ (`ciphertext`), or Android's `Base64.DEFAULT` line break
    /// (react-native-sensitive-info's ciphertext, Facebook Conceal's).
    private static func carriesAnotherLibrarysMark(name: String, text: String) -> Bool {
        name.hasSuffix(":u") || name.hasSuffix(":p") || name.hasSuffix(":c") || name == "cipher_key"
            || text.hasPrefix("{")
                && (text.contains("\"ct\"") && text.contains("\"scheme\"") || text.contains("\"ciphertext\""))
            || text.contains("\n")
    }

    /// Whether `dump` is react-native-encrypted-storage's Android file without the user's word: its name, or
    /// EncryptedSharedPreferences' keysets in it (``encryptedStorageFile(_:named:)``).
    package static func isEncryptedStorageFile(_ dump: Dump) -> Bool {
        encryptedStorageFile(dump) != nil
    }

    /// Whether `record` belongs to react-native-encrypted-storage's importer: a generic password whose service is
    /// empty or absent (a format that can't record the service says nothing), unless it is expo-secure-store's.
    /// react-native-keychain always writes a service (the bundle id by default), so its importer leaves these.
    package static func isEncryptedStorageShape(_ record: KeychainRecord) -> Bool {
        guard record.knownClass == .genericPassword, !isExpoSecureStore(record) else { return false }
        guard let service = record.service else { return !record.unrecorded.contains("svce") }
        return service.bytes.isEmpty
    }

    // MARK: react-native-sensitive-info

    /// react-native-sensitive-info's classic iOS default service (4.x–5.5.8, 6.0.0-alpha); expo-secure-store's too.
    package static let sensitiveInfoClassicService = "app"

    /// How a record is react-native-sensitive-info's on iOS.
    package enum SensitiveInfoShape: Sendable, Equatable {
        /// No `gena` (4.x–5.5.8, 6.0.0-alpha): under the classic service, or any with its `--from`.
        case classic
        /// The JSON metadata of 5.6.x and 6.x in `gena`.
        case metadata(SensitiveInfoMetadata)
        /// 6.x's metadata HMAC key: account `metadata` under `<S>.rnsi.hmac`.
        case hmacKey
    }

    /// How `record` is react-native-sensitive-info's, or nil when it is not: its importer claims exactly these, and
    /// react-native-keychain's leaves them. A generic password with a non-empty service (one without is
    /// react-native-encrypted-storage's layout) and an account, and
    /// - JSON metadata in `gena` (any other `gena` is someone else's); or
    /// - 6.x's metadata HMAC key; or
    /// - no label, not Firebase's marker item (`_pfo`), and the classic service `app`; any service when the user
    ///   named react-native-sensitive-info alone, none when they named react-native-keychain alone.
    package static func sensitiveInfoShape(_ record: KeychainRecord, options: ImportOptions) -> SensitiveInfoShape? {
        guard record.knownClass == .genericPassword, let service = record.service?.text, !service.isEmpty,
            let account = record.account?.text
        else { return nil }
        if let generic = record.generic, !generic.bytes.isEmpty {
            return SensitiveInfoMetadata(generic.bytes).map(SensitiveInfoShape.metadata)
        }
        let hmacSuffix = ".rnsi.hmac"
        if account == "metadata", service.utf8.count > hmacSuffix.utf8.count,
            service.utf8.reversed().starts(with: hmacSuffix.utf8.reversed())
        {
            return .hmacKey
        }
        if let label = record.label, !label.isEmpty { return nil }
        if account == "_pfo" { return nil }
        if options.libraries == [.reactNativeSensitiveInfo] { return .classic }
        if options.libraries == [.reactNativeKeychain] { return nil }
        return service == sensitiveInfoClassicService ? .classic : nil
    }
}

/// The JSON metadata react-native-sensitive-info 5.6.x and 6.x keep in `gena` (and 6.x on Android in `metadata`).
package struct SensitiveInfoMetadata: Sendable, Equatable {
    /// The access control the library was asked for (`none`, `biometryCurrentSet`, …).
    package var accessControl: String
    /// Where its key lives (`software`, `secureEnclave`, `strongBox`, …).
    package var securityLevel: String
    /// 6.x's storage backend; nil in 5.6.x.
    package var backend: String?

    /// The metadata of `bytes`, or nil when they are not an object with `accessControl`, `securityLevel` (strings)
    /// and a numeric `timestamp`.
    package init?(_ bytes: Data) {
        guard bytes.first == UInt8(ascii: "{"),
            let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any]
        else { return nil }
        self.init(object)
    }

    /// The metadata of a JSON object already parsed, or nil as for ``init(_:)-(Data)``.
    package init?(_ object: [String: Any]) {
        guard let control = object["accessControl"] as? String, let level = object["securityLevel"] as? String,
            object["timestamp"] is NSNumber
        else { return nil }
        accessControl = control
        securityLevel = level
        backend = object["backend"] as? String
    }
}
