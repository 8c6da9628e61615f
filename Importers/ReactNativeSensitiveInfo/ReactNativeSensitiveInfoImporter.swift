import ApexCrypto
import ApexDumpModel
import ApexKeychain
import ApexMigration
import Foundation

/// Reads what react-native-sensitive-info (4.x to 6.x) leaves on a device, from iOS keychain dumps and Android
/// SharedPreferences files.
///
/// ### iOS
/// Every version writes one generic password per key: account = the JavaScript key, data = the value's UTF-8. The
/// families differ in the service and the generic attribute (`gena`):
/// - 4.x–5.5.8 and 6.0.0-alpha ("classic"): service `app` (or the app's `keychainService`), no `gena`.
/// - 5.6.x: service `default` (or `keychainService`), `gena` = JSON `{accessControl, securityLevel, timestamp}`.
/// - 6.x: service `default` (or `service`), `gena` = JSON `{securityLevel, backend, accessControl, timestamp}`;
///   later 6.x also keep an HMAC key item (service `<S>.rnsi.hmac`, account `metadata`), reported as skipped.
///
/// A record is claimed (``claims(_:options:)``) when its `gena` is that JSON, whatever the service; or when it has
/// no `gena`, no label, and the service `app`. expo-secure-store also defaults to `app`, but it writes the key into
/// `gena` (the same bytes as the account), so `gena` decides which importer takes an item: absent → this one,
/// equal to the account → expo's, the JSON → this one. react-native-keychain writes no `gena` either, but its
/// default service is the bundle id; an item under `app` without `gena` is taken as this library's unless
/// `--from react-native-keychain` is given. With `--from react-native-sensitive-info` (`ImportOptions.libraries`
/// naming only this library), every generic password without `gena` and label is claimed, whatever its service
/// (the classic `keychainService` option leaves no other trace).
///
/// Protection comes from the item as found, never from a version's default: `pdmn` (an item without one is
/// blocked: Apple's `whenUnlocked` default is never assumed) and the access control's flags, mapped as
/// expo-secure-store's are (userPresence → biometryAnyOrPasscode, biometryCurrentSet → biometryCurrentSet, …).
/// The target is the service as found (or `ImportOptions.serviceMap`), key = the JavaScript key, a string.
///
/// ### Android
/// - 4.x and 5.0.1–5.5.8: plaintext values in `shared_prefs/shared_preferences.xml` (`app.xml` up to 5.0.0, or the
///   app's `sharedPreferencesName`): migrated (`create`) to the target service `app`, the iOS default of the same
///   versions. `touchID` values (`Base64(IV)]Base64(ciphertext)`, Keystore alias `MyAesKeyAlias`) are sealed.
/// - 6.0.0-alpha (and 5.0.0): every value AES-GCM under Keystore `MySharedPreferenceKeyAlias`
///   (`SHARED_PREFERENCE_KEY`), `Base64.DEFAULT`: sealed.
/// - 5.6.x: `sensitive_info.xml`, entries `<service>::<key>` holding JSON with the ciphertext: sealed.
/// - 6.x: `sensitive_info_<16 hex>.xml` (the hex = SHA-256 of the service), JSON entries with the Keystore alias:
///   sealed; the service is found by hashing `default`, the bundle id and the service map's names.
///
/// Sealed values stay on the device, but their protection is mapped and reported. `shared_preferences.xml` is a
/// generic name: see ``recognises(_:library:)`` for when a file is claimed.
public struct ReactNativeSensitiveInfoImporter: Importer {
    /// The classic iOS default service (4.x–5.5.8, 6.0.0-alpha); also expo-secure-store's.
    public static let classicService = RecordClaims.sensitiveInfoClassicService
    /// The iOS and Android default service of 5.6.x and 6.x.
    public static let modernService = "default"

    /// `SourceLibrary.reactNativeSensitiveInfo`.
    public var library: SourceLibrary { .reactNativeSensitiveInfo }

    /// Creates the importer.
    public init() {}

    /// Whether this importer claims an iOS record (see the type's description): `RecordClaims.sensitiveInfoShape(_:options:)`,
    /// which react-native-keychain's importer asks too, so no record is claimed by both.
    public static func claims(_ record: KeychainRecord, options: ImportOptions) -> Bool {
        RNSIIOSFamily.of(record, options: options) != nil
    }

    /// Whether an Android preferences dump holds react-native-sensitive-info's data.
    ///
    /// - `sensitive_info.xml`, `sensitive_info_<16 hex>.xml` and `rnsi.key_versions.xml` by name, and any file
    ///   whose string entries have the 5.6.x or 6.x JSON layout by content.
    /// - A file of string entries only with a `touchID` value (`Base64(IV)]…`), whatever its name.
    /// - `shared_preferences.xml` (the 5.0.1+ default), string entries only.
    /// - `app.xml` (≤5.0.0) and `keystore.xml` (6.0.0-alpha.1), string entries only, with a value of the
    ///   6.0.0-alpha / 5.0.0 ciphertext shape.
    /// - With `library` == react-native-sensitive-info (`--from`): also a plain `app.xml` or `keystore.xml`, and
    ///   any other file of string entries only that is not known to be someone else's (an app's
    ///   `<package>_preferences.xml`, another library's file), with a note on each item.
    ///
    /// Never a file with entries of other types (the library writes strings only). False for an iOS dump.
    public static func recognises(_ dump: Dump, library: SourceLibrary? = nil) -> Bool {
        RNSIAndroidFile.kind(of: dump, named: library == .reactNativeSensitiveInfo) != nil
    }

    /// The react-native-sensitive-info items of `dumps`: the iOS items in dump and record order, then the Android
    /// entries in file and entry order. Never throws: an odd item is reported with a verdict and notes.
    public func importItems(from dumps: [Dump], options: ImportOptions) throws(ImportError) -> [SourceItem] {
        let ios = RNSIIOSImport(dumps: dumps, options: options).items()
        let android = RNSIAndroidImport(dumps: dumps, options: options, iosServices: ios.compactMap(\.source.service))
            .items()
        return ios + android
    }
}

/// Notes and names shared by both platforms.
enum RNSINaming {
    /// Whether the user named this library alone (`--from react-native-sensitive-info`).
    static func named(_ options: ImportOptions) -> Bool { options.libraries == [.reactNativeSensitiveInfo] }

    /// The note on an item claimed only because the user named the library.
    static let claimedByChoice =
        "claimed because --from react-native-sensitive-info was given: nothing in the item itself marks it as react-native-sensitive-info's"

    /// The first 8 bytes of SHA-256(`service`) in lower-case hex: the 6.x file name's suffix.
    static func serviceHash(_ service: String) -> String { sha256Hex(service, bytes: 8) }

    /// The first `bytes` bytes of SHA-256(`text`) in lower-case hex.
    static func sha256Hex(_ text: String, bytes: Int) -> String {
        Crypto.sha256(Data(text.utf8)).prefix(bytes).map { String(format: "%02x", $0) }.joined()
    }
}
