import ApexDumps
import Foundation

/// react-native-sensitive-info's storage, made up, one variant per version family
/// (formats/react-native-sensitive-info.md): classic 4.x–5.5.8 / 6.0.0-alpha, 5.6.x and 6.x on iOS; on Android the
/// plaintext and touchID values of 5.5.8, 5.0.0's and 6.0.0-alpha's ciphertext, 5.6.x's `sensitive_info.xml` and
/// 6.x's per-service files.
enum ReactNativeSensitiveInfoSamples {
    static let bundleID = "com.example.rnsiapp"
    static let accessGroup = "A1B2C3D4E5.com.example.rnsiapp"
    /// The first 8 bytes of SHA-256 of `default` and `payments`, in hex: the 6.x file names.
    static let defaultServiceHash = "37a8eec1ce19687d"
    static let paymentsServiceHash = "df384ae97c77ad30"

    // MARK: iOS

    /// 5.6.x metadata (no `backend`) and 6.x metadata (with `backend`), as the library's JSON encoders write them.
    static func metadata(_ control: String, _ level: String, backend: Bool, at seconds: Int) -> Data {
        let body =
            backend
            ? "{\"securityLevel\":\"\(level)\",\"backend\":\"keychain\",\"accessControl\":\"\(control)\",\"timestamp\":\(seconds).25}"
            : "{\"accessControl\":\"\(control)\",\"securityLevel\":\"\(level)\",\"timestamp\":\(seconds)}"
        return Data(body.utf8)
    }

    static var iosItems: [SampleItem] {
        var items: [SampleItem] = []
        var random = SampleRandom(seed: 0x524E_5349_494F_53)
        func add(
            service: String, key: String, value: Data, protection: String, accessControl: SampleAccessControl? = nil,
            generic: Data? = nil
        ) {
            let index = items.count
            items.append(
                SampleItem(
                    itemClass: "genp", service: .string(service), account: .string(key),
                    generic: generic.map { .data($0) }, value: value, protection: protection,
                    accessControl: accessControl, accessGroup: accessGroup, created: SampleDates.at(hours: index * 7),
                    modified: SampleDates.at(hours: index * 7, seconds: 41)))
        }
        func text(_ value: String) -> Data { Data(value.utf8) }
        // Classic (≤5.5.8, 6.0.0-alpha): service `app`, no gena. No kSecAttrAccessible option: the item holds
        // Apple's default, `ak`, as the keychain stored it.
        add(service: "app", key: "authToken", value: text("sample-token-0400"), protection: "ak")
        add(service: "app", key: "refreshToken", value: text("sample-token-0401"), protection: "ck")
        // touchID: true: whenPasscodeSetThisDeviceOnly with UserPresence (the default flag) or the chosen one.
        add(
            service: "app", key: "pin", value: text("sample-pin-0402"), protection: "akpu",
            accessControl: .userPresence)
        add(
            service: "app", key: "faceSecret", value: text("sample-secret-0403"), protection: "akpu",
            accessControl: .biometryCurrentSet)
        // kSecAttrAccessibleAlways (deprecated).
        add(service: "app", key: "legacyFlag", value: text("sample-token-0404"), protection: "dk")
        // 5.6.x: service `default`, JSON metadata in gena; the default secureEnclaveBiometry.
        add(
            service: "default", key: "authToken", value: text("sample-token-0405"), protection: "aku",
            accessControl: .biometryCurrentSet,
            generic: metadata("secureEnclaveBiometry", "secureEnclave", backend: false, at: 1_761_800_000))
        add(
            service: "default", key: "theme", value: text("sample-setting-0406"), protection: "aku",
            generic: metadata("none", "software", backend: false, at: 1_761_800_100))
        // 6.x: metadata with `backend`; a custom service; the later 6.x metadata HMAC key.
        add(
            service: "default", key: "sessionKey", value: text("sample-session-0407"), protection: "akpu",
            accessControl: .biometryCurrentSet,
            generic: metadata("secureEnclaveBiometry", "secureEnclave", backend: true, at: 1_765_000_000))
        add(
            service: "default", key: "apiKey", value: text("sample-api-key-0408"), protection: "ck",
            generic: metadata("none", "software", backend: true, at: 1_765_000_100))
        add(
            service: "vault", key: "walletSeed", value: text("sample-seed-0409"), protection: "akpu",
            accessControl: .devicePasscode,
            generic: metadata("devicePasscode", "deviceCredential", backend: true, at: 1_765_000_200))
        add(service: "default.rnsi.hmac", key: "metadata", value: random.bytes(32), protection: "cku")
        return items
    }

    static func iosFiles() -> [SampleFile] {
        [
            SampleFile(
                path: "react-native-sensitive-info/ios/keychain.plist",
                data: XMLPlistWriter.write(KeychainDumpWriter.plistByClass(iosItems)), format: .iosPlist,
                about: "XML plist: classic items under `app` without gena (`ak`, `ck`, touchID userPresence and "
                    + "biometryCurrentSet, `dk`), 5.6.x and 6.x items under `default` with JSON metadata in gena, a 6.x "
                    + "`vault` item (devicePasscode), a 6.x metadata HMAC key (`default.rnsi.hmac`)")
        ]
    }

    // MARK: Android

    /// A 5.6.x entry (`PersistedEntry.toJson`).
    private static func v5Entry(
        service: String, key: String, control: String, level: String, authenticators: Int, auth: Bool,
        random: inout SampleRandom
    ) -> PreferenceEntry {
        let json =
            "{\"key\":\"\(key)\",\"service\":\"\(service)\",\"ciphertext\":\"\(AndroidBase64.noWrap(random.bytes(33)))\","
            + "\"iv\":\"\(AndroidBase64.noWrap(random.bytes(12)))\",\"timestamp\":1761800000,\"securityLevel\":\"\(level)\","
            + "\"accessControl\":\"\(control)\",\"version\":3,\"authenticators\":\(authenticators),"
            + "\"requiresAuthentication\":\(auth),\"invalidateOnEnrollment\":\(auth),\"useStrongBox\":false}"
        return PreferenceEntry(name: "\(service)::\(key)", value: .string(json))
    }

    /// A 6.x entry (`PersistedEntry.toJson`, org.json escaping `/`).
    private static func v6Entry(
        service: String, key: String, control: String, level: String, authenticators: Int, auth: Bool,
        random: inout SampleRandom
    ) -> PreferenceEntry {
        let alias = "SensitiveInfo_v1_" + random.bytes(16).hexString
        func b64(_ count: Int) -> String {
            AndroidBase64.noWrap(random.bytes(count)).replacingOccurrences(of: "/", with: "\\/")
        }
        let json =
            "{\"alias\":\"\(alias)\",\"authenticators\":\(authenticators),\"requiresAuth\":\(auth),"
            + "\"invalidateOnEnrollment\":\(auth),\"useStrongBox\":false,\"ciphertext\":\"\(b64(35))\",\"iv\":\"\(b64(12))\","
            + "\"metadata\":{\"securityLevel\":\"\(level)\",\"backend\":\"androidKeystore\",\"accessControl\":\"\(control)\","
            + "\"timestamp\":1765000000.5}}"
        return PreferenceEntry(name: key, value: .string(json))
    }

    static func androidFiles() -> [SampleFile] {
        let folder = "react-native-sensitive-info/android/shared_prefs"
        var random = SampleRandom(seed: 0x524E_5349_414E_44)
        func plain(_ name: String, _ value: String) -> PreferenceEntry {
            PreferenceEntry(name: name, value: .string(value))
        }
        func touchID() -> String {
            AndroidBase64.defaultFlags(random.bytes(16)) + "]" + AndroidBase64.defaultFlags(random.bytes(32))
        }
        func gcm(_ length: Int) -> String { AndroidBase64.defaultFlags(random.bytes(length + 16)) }
        let classic = [
            plain("authToken", "sample-token-0500"),
            plain("userId", "sample-user-0501"),
            PreferenceEntry(name: "pin", value: .string(touchID())),
            // Written after an upgrade to 6.0.0-alpha: the same file, every new value AES-GCM.
            PreferenceEntry(name: "alphaToken", value: .string(gcm(17))),
        ]
        let v4 = [
            plain("legacyToken", "sample-token-0502"),
            // 5.0.0 (one day on npm): the same `app` file, AES-GCM under SHARED_PREFERENCE_KEY.
            PreferenceEntry(name: "keystoreToken", value: .string(gcm(17))),
        ]
        let alpha1 = [PreferenceEntry(name: "alphaSecret", value: .string(gcm(18)))]
        let v5 = [
            v5Entry(
                service: "default", key: "authToken", control: "secureEnclaveBiometry", level: "strongBox",
                authenticators: 0x800F, auth: true, random: &random),
            v5Entry(
                service: "default", key: "theme", control: "none", level: "software", authenticators: 0, auth: false,
                random: &random),
            v5Entry(
                service: "vault", key: "walletSeed", control: "devicePasscode", level: "deviceCredential",
                authenticators: 0x8000, auth: true, random: &random),
        ]
        let v6 = [
            v6Entry(
                service: "default", key: "sessionKey", control: "biometryCurrentSet", level: "biometry",
                authenticators: 0x000F, auth: true, random: &random),
            v6Entry(
                service: "default", key: "apiKey", control: "none", level: "software", authenticators: 0, auth: false,
                random: &random),
        ]
        let v6Payments = [
            v6Entry(
                service: "payments", key: "cardToken", control: "biometryAny", level: "biometry",
                authenticators: 0x000F, auth: false, random: &random)
        ]
        func file(_ name: String, _ entries: [PreferenceEntry], _ about: String, dump: Bool = true) -> SampleFile {
            SampleFile(
                path: "\(folder)/\(name)", data: SharedPreferencesWriter.write(entries), format: .sharedPreferences,
                about: about, isKeychainDump: dump)
        }
        return [
            file(
                "shared_preferences.xml", classic,
                "5.0.1–5.5.8 default file: plaintext values, a touchID value (`Base64(IV)]…`, MyAesKeyAlias) and a "
                    + "6.0.0-alpha AES-GCM value written after an upgrade"),
            file("app.xml", v4, "4.x default file (plaintext) with a 5.0.0 AES-GCM value (SHARED_PREFERENCE_KEY)"),
            file("keystore.xml", alpha1, "6.0.0-alpha.1 default file: AES-GCM (MySharedPreferenceKeyAlias)"),
            file(
                "sensitive_info.xml", v5,
                "5.6.x: `<service>::<key>` JSON entries (secureEnclaveBiometry, none, devicePasscode)"),
            file(
                "sensitive_info_\(defaultServiceHash).xml", v6,
                "6.x file of service `default` (SHA-256 in the name): biometryCurrentSet and none"),
            file(
                "sensitive_info_\(paymentsServiceHash).xml", v6Payments,
                "6.x file of a custom service `payments`: its name is only found with `--service-map payments=…`"),
            file(
                "\(bundleID)_preferences.xml",
                [
                    PreferenceEntry(name: "onboarding_done", value: .boolean(true)),
                    PreferenceEntry(name: "username_hint", value: .string("sample-hint")),
                ],
                "the app's own preferences: no library's data, so a folder's read skips it with a line on stderr",
                dump: false),
        ]
    }
}
