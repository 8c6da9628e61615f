import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// Imports react-native-encrypted-storage's values (1.0.0 to 4.0.3) from iOS keychain dumps and its Android
/// SharedPreferences file.
///
/// ### iOS
/// Every version writes a generic password with **no service**, account = the JavaScript key and data = the
/// UTF-8 value, and nothing else: no class (Apple's default whenUnlocked), access control, sync or group. Such an
/// item becomes a string under the key of the app's default service: `ImportOptions.serviceMap` for the
/// service `""`, else `ImportOptions.bundleID`, else the bundle id inferred from the access groups as
/// react-native-keychain's importer infers it (with a note); the service map's entry for that service, if any,
/// moves them with it. The stored `pdmn` is trusted when the dump has one
/// (patched copies set a class, issue #104).
///
/// The library writes no mark, so an empty-service item is weak evidence. An item that carries an attribute the
/// library never sets (gena, labl, crtr, desc, icmt, type, access control, sync) or sits in Apple's or another
/// team's access group is another SDK's and is `SourceVerdict.skipped(_:)`. The others are migrated, with a
/// note, unless the same dump holds such another SDK's empty-service item (by its attributes, in one of the app's
/// groups): then nothing tells the two apart and
/// they are skipped too, unless the user named the library (`--from react-native-encrypted-storage`,
/// `ImportOptions.libraries`). react-native-keychain's and expo-secure-store's importers leave every
/// empty-service generic password to this one.
///
/// ### Android
/// A SharedPreferences file holding EncryptedSharedPreferences' Tink keysets, whatever its name (read from stdin,
/// or renamed), or named ``sharedPreferencesFileName`` (its name never changed); with
/// `--from react-native-encrypted-storage`, any file of string entries only. A file recognised by its content
/// or by the user's word under another name says so in its items' notes. Plain-text entries (1.0.0; 2.3.0–2.4.4 below API 23; the silent fallback of
/// 2.3.0 and later when EncryptedSharedPreferences failed to open) are migrated as strings under their key. Entries
/// of EncryptedSharedPreferences (AES-SIV names, AES-GCM values under the Tink keysets stored in the same file)
/// are `SourceValue.sealed(_:)`: their names are encrypted too, so neither the key nor the value is known. The
/// two kinds are told apart by content, entry by entry, since one file can hold both. Android entries go to the
/// app's default service too: the service map's `""`, else `ImportOptions.bundleID`.
public struct ReactNativeEncryptedStorageImporter: Importer {
    /// The SharedPreferences file of every version (`shared_prefs/RN_ENCRYPTED_STORAGE_SHARED_PREF.xml`).
    public static let sharedPreferencesFileName = RecordClaims.encryptedStorageFileName

    /// `SourceLibrary.reactNativeEncryptedStorage`.
    public var library: SourceLibrary { .reactNativeEncryptedStorage }

    /// Creates the importer.
    public init() {}

    /// Whether an Android preferences dump is react-native-encrypted-storage's, whatever its name: a
    /// SharedPreferences file that holds EncryptedSharedPreferences' Tink keysets (of the four libraries, only this
    /// one writes EncryptedSharedPreferences), or one named ``sharedPreferencesFileName``; with `library`
    /// `SourceLibrary.reactNativeEncryptedStorage` (`--from react-native-encrypted-storage`), also a file of
    /// string entries only (the plain-text files of 1.0.0 and of 2.3.0–2.4.4 below API 23 carry no mark). False
    /// for an iOS dump and a DataStore file.
    public static func recognises(_ dump: Dump, library: SourceLibrary? = nil) -> Bool {
        RecordClaims.encryptedStorageFile(dump, named: library == .reactNativeEncryptedStorage) != nil
    }

    /// The react-native-encrypted-storage items of `dumps`: the iOS items in dump and record order, then the
    /// Android entries in file and entry order.
    ///
    /// - Throws: `ImportError` naming the file when a keyset entry of its file is not a Tink keyset in hex (the
    ///   file is damaged, or not the library's).
    public func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
        var items = EncryptedStorageIOS(dumps: dumps, options: options).items()
        let named = options.libraries == [.reactNativeEncryptedStorage]
        for dump in dumps {
            guard case .preferences(let entries) = dump.content,
                let recognition = RecordClaims.encryptedStorageFile(dump, named: named)
            else { continue }
            items += try EncryptedStorageAndroid(
                dump: dump, entries: entries, options: options, recognition: recognition
            ).items()
        }
        return items
    }

    /// Whether `record` has react-native-encrypted-storage's shape: a generic password whose service is absent
    /// or empty (a dump that can't record the service says nothing), and not expo-secure-store's
    /// (`RecordClaims.isEncryptedStorageShape(_:)`). react-native-keychain's importer leaves such items to this one.
    public static func hasItemShape(_ record: KeychainRecord) -> Bool { RecordClaims.isEncryptedStorageShape(record) }
}

/// The target service of the items (source service `""`), shared by both platforms.
struct DefaultService {
    let options: ImportOptions

    /// Why the user's include / exclude lists leave out the items (service `""`), or nil.
    var filterReason: String? {
        if options.excludeServices.contains("") { return "filtered by the user: the empty service '' is excluded" }
        if let included = options.includeServices, !included.contains("") {
            return "filtered by the user: the empty service '' is not among the included services"
        }
        return nil
    }

    /// The target service and the note saying where it comes from, or why there is none. `inferred` is the
    /// app's identity from the records (iOS), if any.
    func target(inferred: AppIdentity?) -> (service: String?, note: String) {
        if let mapped = options.serviceMap[""] {
            return (mapped, "the items have no service; the service map's entry for '' names the target service")
        }
        let found: (String?, String)
        if let inferred {
            found = (inferred.defaultService, inferred.note)
        } else if let bundleID = options.bundleID {
            found = (
                bundleID,
                "the app's default service \(NoteText.quoted(bundleID)) is the bundle id given (--bundle-id, or the store's from 'store init --bundle-id')"
            )
        } else {
            found = (nil, "the app's default service (its bundle id) is unknown: pass --bundle-id to migrate")
        }
        // A map of the default service moves these items with the others of that service.
        if let service = found.0, let mapped = options.serviceMap[service] {
            return (
                mapped, found.1 + "; the service map writes \(NoteText.quoted(service)) to \(NoteText.quoted(mapped))"
            )
        }
        return found
    }

    /// ``target(inferred:)`` for `item`: its note is added to the item's notes, and when there is no service the
    /// item needs that input (a run given the bundle id migrates it).
    func target(for item: inout SourceItem, inferred: AppIdentity?) -> String? {
        let (service, note) = target(inferred: inferred)
        item.notes.append(note)
        if service == nil { item.verdict = .needsInput(note) }
        return service
    }

    /// Why the package can't take `name` as a target service or key, or nil.
    static func nameProblem(_ name: String, _ what: String) -> String? {
        switch NameProblem(of: name) {
        case nil: nil
        case .empty: "the target \(what) would be empty, which the package refuses"
        case .tooLong: "the target \(what) would be longer than the package's \(NameProblem.maxLength) characters"
        case .containsNUL: "the target \(what) would contain U+0000, which the package refuses"
        }
    }
}
