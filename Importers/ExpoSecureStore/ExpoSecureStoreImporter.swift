import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// Reads what expo-secure-store (Expo SDK 47 and later, and the leftovers of older versions) leaves on a device,
/// from iOS keychain dumps and Android `SecureStore.xml` files.
///
/// ### iOS
/// An item is expo-secure-store's when it is a generic password whose account and generic attributes hold the same
/// bytes, valid UTF-8: the key, which expo writes as data into both. Every other record is left out. The service
/// is the `keychainService` option S (`app` by default), written since 12.8.0 as `S:no-auth` or `S:auth` and before
/// as the bare `S`; the target is service S (suffix removed) and key = the Expo key, a string. When one key is
/// found under several spellings of a service (in the same access group), the copy expo-secure-store reads first
/// (`S:no-auth`, then `S:auth`, then `S`; never a synchronizable one) is migrated and the others are
/// `SourceVerdict.shadowed(_:)`.
///
/// Protection is taken from the item as found, never from a version's documented default: `pdmn` to
/// `Accessible` (the deprecated `dk` / `dku` to the nearest stronger class, with a note), the access control's
/// flags to `AccessControl` (combinations the package can't express are `SourceVerdict.blocked(_:)`). Items in
/// an access group other than the app's default keep their group.
///
/// ### Android
/// Entries of `SecureStore.xml` and of Expo Go's scoped `<experience>-SecureStore.xml` (any other
/// SharedPreferences file only for entries of expo's JSON layout): JSON holding `ct`, `iv`, `tlen`, `scheme`, and
/// since 12.5.0 `keystoreAlias` (the `keychainService` option, `key_v1` by default), `usesKeystoreSuffix` and
/// `requireAuthentication`. New entries are named `<keystoreAlias>-<key>`; legacy ones (no `usesKeystoreSuffix`)
/// by the bare key, with no record of their service. Values are `SourceValue.sealed(_:)`: the AES key is in the
/// Android Keystore. The protection is still mapped: `requireAuthentication` true (or `biometry`) →
/// biometryCurrentSet, `deviceCredentials` → biometryCurrentSetOrPasscode, false → none; a legacy entry, whose flag
/// proves nothing, gets the stronger reading. The class is afterFirstUnlockThisDeviceOnly without authentication
/// (credential-encrypted storage, a key that never leaves the device) and whenPasscodeSetThisDeviceOnly with it (a
/// key that needs authentication lives only while a lock screen is set). A legacy entry's service is not recorded:
/// it is taken as the default `key_v1`. When one key has several entries, the one expo-secure-store reads is
/// migrated and the rest shadowed: the last of one name in a file, a 12.5.0+ entry over a legacy bare key, and
/// `SecureStore.xml` over a scoped or renamed file.
///
/// ### Services and filters
/// Expo's default service is `app` on iOS and `key_v1` on Android; both become the target service `app`, so that
/// one JavaScript call's items land in one place. `ImportOptions.includeServices`,
/// `ImportOptions.excludeServices` and `ImportOptions.serviceMap` name a service as found: an entry names
/// either the exact spelling (`app:auth`, `key_v1`) or the service without its suffix (`app`, which also matches
/// Android's `key_v1`); the exact spelling is looked up first in the map. A filtered item is
/// `SourceVerdict.skipped(_:)`; the choice of which copy wins is made before filtering, so excluding the copy
/// Expo reads never promotes a copy it ignores.
public struct ExpoSecureStoreImporter: Importer {
    /// `SourceLibrary.expoSecureStore`.
    public var library: SourceLibrary { .expoSecureStore }

    /// Creates the importer.
    public init() {}

    /// Whether an Android preferences dump holds expo-secure-store's data, whatever the file's name: a
    /// SharedPreferences file named `SecureStore.xml` or `<experience>-SecureStore.xml`, or one with an entry of
    /// expo's JSON layout (`ct`, `iv` and `scheme`). False for an iOS dump, for DataStore files, which expo
    /// never writes, and for react-native-encrypted-storage's file, whose values are whatever the app stored.
    public static func recognises(_ dump: Dump) -> Bool {
        guard dump.format == .sharedPreferences, case .preferences(let entries) = dump.content,
            !RecordClaims.isEncryptedStorageFile(dump)
        else { return false }
        if ExpoAndroidImport.fileKind(dump.fileName).0 != .other { return true }
        return entries.contains { entry in
            guard case .string(let text) = entry.value, let fields = ExpoAndroidEntry.fields(of: text) else {
                return false
            }
            return ExpoAndroidEntry.signature.allSatisfy { fields[$0] != nil }
        }
    }

    /// The expo-secure-store items of `dumps`, in the order of the dumps and of the records in them.
    ///
    /// Never throws: an odd item is reported with a verdict and notes instead, and records that are not
    /// expo-secure-store's are left out.
    public func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
        var ios = ExpoIOSImport(options: options)
        var android = ExpoAndroidImport(options: options)
        for (index, dump) in dumps.enumerated() {
            switch dump.content {
            case .keychain(let records):
                ios.add(records, of: dump, dumpIndex: index)
            case .preferences(let entries):
                // expo-secure-store writes SharedPreferences only, never DataStore.
                if dump.format == .sharedPreferences { android.add(entries, of: dump, dumpIndex: index) }
            }
        }
        let found = ios.finish() + android.finish()
        // Sort positions, not the items (large values, each comparison would copy two); usually in order already.
        let order = found.indices.sorted {
            (found[$0].dumpIndex, found[$0].recordIndex) < (found[$1].dumpIndex, found[$1].recordIndex)
        }
        return order.map { found[$0].item }
    }
}

/// One item found, with its place among the inputs (for the output order).
struct ExpoFound {
    var dumpIndex: Int
    var recordIndex: Int
    var item: SourceItem
}

/// The names of Expo's services and the rules shared by both platforms (package access: the naming rules serve
/// react-native-sensitive-info's importer too).
package enum ExpoNaming {
    /// The iOS default `keychainService`.
    static let iosDefaultService = "app"
    /// The Android default `keychainService` (`DEFAULT_KEYSTORE_ALIAS`).
    static let androidDefaultService = "key_v1"

    /// The verdict for a user's service filter, or nil when the item passes. `names` are the service as found and
    /// its suffix-free form.
    package static func filterVerdict(_ names: [String], _ options: ImportOptions) -> SourceVerdict? {
        let shown = names.first.map { "'\($0)'" } ?? "(none)"
        if let include = options.includeServices, !names.contains(where: { include.contains($0) }) {
            return .skipped("service \(shown) is not among the services to include")
        }
        if names.contains(where: { options.excludeServices.contains($0) }) {
            return .skipped("service \(shown) is excluded")
        }
        return nil
    }

    /// The target service: the service map's entry for the first name it knows, else `base`; with a note when the
    /// map decided.
    package static func targetService(_ names: [String], base: String, _ options: ImportOptions) -> (String, String?) {
        for name in names {
            if let mapped = options.serviceMap[name] {
                return (mapped, "target service '\(mapped)' from the service map (source service '\(name)')")
            }
        }
        return (base, nil)
    }

    /// Why the package can't take `name` as a key or service, or nil when it can.
    package static func nameProblem(_ name: String, _ what: String) -> String? {
        switch NameProblem(of: name) {
        case nil: nil
        case .empty: "the \(what) is empty, which the package refuses"
        case .tooLong: "the \(what) is longer than the package's \(NameProblem.maxLength) characters"
        case .containsNUL: "the \(what) holds U+0000, which the package refuses"
        }
    }

    /// Whether expo-secure-store's JavaScript API accepts `key` (`/^[\w.-]+$/`).
    static func isJavaScriptKey(_ key: String) -> Bool {
        !key.isEmpty
            && key.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            }
    }

    /// The note for a key the JavaScript API would refuse.
    static let unusualKeyNote =
        "the key has characters expo-secure-store's JavaScript API refuses (it takes only A–Z, a–z, 0–9, '_', '.' and '-'): probably an Expo Go or SDK ≤ 40 scoped key ('<scope>-<key>') that current versions no longer read; migrated under the key as found"

    /// `text` without its UTF-8 `suffix`, or nil when it doesn't end with it (byte-exact).
    package static func dropping(_ suffix: String, from text: String) -> String? {
        let bytes = Array(text.utf8)
        let tail = Array(suffix.utf8)
        guard bytes.count >= tail.count, bytes.suffix(tail.count).elementsEqual(tail) else { return nil }
        return String(decoding: bytes.dropLast(tail.count), as: UTF8.self)
    }

    /// `text` without its UTF-8 `prefix`, or nil when it doesn't start with it (byte-exact).
    package static func dropping(prefix: String, from text: String) -> String? {
        let bytes = Array(text.utf8)
        let head = Array(prefix.utf8)
        guard bytes.count >= head.count, bytes.prefix(head.count).elementsEqual(head) else { return nil }
        return String(decoding: bytes.dropFirst(head.count), as: UTF8.self)
    }
}
