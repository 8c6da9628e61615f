import ApexDumpModel
import ApexMigration
import ExpoSecureStoreImporter
import Foundation

/// Which react-native-sensitive-info file an Android preferences dump is, told by its name and content.
enum RNSIAndroidFile: Equatable {
    /// 4.x–5.5.8 / 6.0.0-alpha: one entry per JavaScript key (plaintext, touchID or alpha ciphertext).
    case classic(how: String)
    /// 5.6.x `sensitive_info.xml`: `<service>::<key>` → JSON.
    case v5_6
    /// 6.x `sensitive_info_<16 hex>.xml`: key → JSON; the hex, when the name has it.
    case v6(hash: String?)
    /// Later 6.x `rnsi.key_versions.xml`: service → key version (an int).
    case keyVersions

    /// The kind of `dump`, or nil when it is not this library's. `named`: the user gave
    /// `--from react-native-sensitive-info`.
    static func kind(of dump: Dump, named: Bool) -> RNSIAndroidFile? {
        guard dump.format == .sharedPreferences, case .preferences(let entries) = dump.content else { return nil }
        let name = dump.fileName
        if name == "rnsi.key_versions.xml" { return .keyVersions }
        guard !entries.isEmpty else { return nil }
        var texts: [String] = []
        texts.reserveCapacity(entries.count)
        for entry in entries {
            // The library writes strings only (putString): any other type makes the file someone else's.
            guard case .string(let text) = entry.value else { return nil }
            texts.append(text)
        }
        if name == "sensitive_info.xml" { return .v5_6 }
        if let rest = ExpoNaming.dropping(prefix: "sensitive_info_", from: name),
            let hex = ExpoNaming.dropping(".xml", from: rest), hex.utf8.count == 16,
            hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        {
            return .v6(hash: hex)
        }
        if isForeign(name, entries) { return nil }
        // By content: the JSON layouts of 5.6.x and 6.x.
        if texts.contains(where: { RNSIAndroidEntry.json($0).flatMap(RNSIModernEntry.init) != nil }) {
            let modern = texts.compactMap { RNSIAndroidEntry.json($0).flatMap(RNSIModernEntry.init) }
            return modern.contains { $0.alias != nil } ? .v6(hash: nil) : .v5_6
        }
        let shapes = texts.map(RNSIAndroidEntry.shape)
        if shapes.contains(.touchID) { return .classic(how: "it holds a touchID value ('Base64(IV)]ciphertext')") }
        // Every value sealed: claimed by content whatever the name (nothing of it is migrated as text).
        if shapes.allSatisfy({ $0 == .alphaCiphertext }) {
            return .classic(how: "every value is 6.0.0-alpha / 5.0.0 ciphertext (Base64 with Android's line break)")
        }
        switch name {
        case "shared_preferences.xml":
            return .classic(how: "'shared_preferences.xml' is the library's default file (5.0.1 and later)")
        case "app.xml", "keystore.xml":
            if shapes.contains(.alphaCiphertext) {
                return .classic(
                    how: "'\(name)' is one of the library's default files and holds 6.0.0-alpha / 5.0.0 ciphertext")
            }
            if named { return .classic(how: "'\(name)' is one of the library's default files (≤5.0.0, alpha.1)") }
            return nil
        default:
            return named ? .classic(how: RNSINaming.claimedByChoice) : nil
        }
    }

    /// Whether a file is known to be someone else's: the app's default preferences, the other libraries' files,
    /// Jetpack Security's encrypted preferences.
    private static func isForeign(_ name: String, _ entries: [PreferenceEntry]) -> Bool {
        let others = [
            "RN_KEYCHAIN.xml", "crypto.KEY_256.xml", "SecureStore.xml", "RN_ENCRYPTED_STORAGE_SHARED_PREF.xml",
        ]
        // `<package>_preferences.xml` is the app's default file (PreferenceManager); `shared_preferences.xml` is ours.
        let appDefaults = name.hasSuffix("_preferences.xml") && name != "shared_preferences.xml"
        if others.contains(name) || appDefaults || name.hasSuffix("-SecureStore.xml") {
            return true
        }
        // Facebook Conceal's key file (react-native-keychain's crypto.KEY_256.xml), under any name.
        if entries.allSatisfy({ $0.name == "cipher_key" || $0.name == "mac_key" }) { return true }
        return entries.contains { entry in
            entry.name.hasPrefix("__androidx_security_crypto_encrypted_prefs_")
                || entry.name.hasSuffix(":u") || entry.name.hasSuffix(":p") || entry.name.hasSuffix(":c")
                || (entry.value.stringValue.flatMap(RNSIAndroidEntry.json).map {
                    $0["scheme"] != nil && $0["ct"] != nil
                }
                    ?? false)
        }
    }
}

extension PreferenceValue {
    /// The text of a string entry.
    fileprivate var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

/// The content of one entry.
enum RNSIAndroidEntry {
    enum Shape: Equatable {
        /// `Base64(IV 16 bytes)` + `]` + `Base64(ciphertext)`: a touchID value (5.2.0+, alias `MyAesKeyAlias`).
        case touchID
        /// `Base64.DEFAULT` (a line break at the end) of at least 16 bytes: 6.0.0-alpha's or 5.0.0's AES-GCM
        /// (ciphertext ‖ tag) or an RSA block.
        case alphaCiphertext
        /// Anything else: a plaintext value.
        case plaintext
    }

    /// The shape of a classic value.
    static func shape(_ text: String) -> Shape {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let bracket = trimmed.firstIndex(of: "]") {
            let iv = trimmed[..<bracket].trimmingCharacters(in: .whitespacesAndNewlines)
            let body = trimmed[trimmed.index(after: bracket)...]
            if iv.utf8.count == 24, decode(iv)?.count == 16, let ciphertext = decode(String(body)),
                ciphertext.count >= 16, ciphertext.count % 16 == 0
            {
                return .touchID
            }
        }
        // Base64.DEFAULT ends every value with a line break (Android keeps the `\n`, then the file's indent).
        let unindented = text.trimmingCharacters(in: CharacterSet(charactersIn: " "))
        if unindented.hasSuffix("\n"), let bytes = decode(trimmed), bytes.count >= 16,
            trimmed.split(separator: "\n").allSatisfy({ $0.utf8.count <= 76 })
        {
            return .alphaCiphertext
        }
        return .plaintext
    }

    /// Strict Base64 with padding, line breaks allowed; nil for anything else.
    static func decode(_ text: String) -> Data? {
        let compact = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).joined()
        guard !compact.isEmpty, compact.utf8.count % 4 == 0,
            compact.utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
            })
        else { return nil }
        return Data(base64Encoded: compact)
    }

    /// A JSON object's fields, or nil.
    static func json(_ text: String) -> [String: Any]? {
        guard text.first == "{" else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }
}

/// A 5.6.x or 6.x entry's JSON: the fields the importer reads.
struct RNSIModernEntry {
    /// 6.x: the Keystore alias; nil in 5.6.x (derived from the name there).
    var alias: String?
    /// 5.6.x: the service and key recorded in the entry.
    var service: String?
    var key: String?
    var requiresAuthentication: Bool
    /// `androidx.biometric` `Authenticators` bits.
    var authenticators: Int
    var invalidateOnEnrollment: Bool
    var useStrongBox: Bool
    var accessControl: String?
    var securityLevel: String?

    /// The entry of a JSON object holding `ciphertext` and `iv`, and 6.x's `alias` or 5.6.x's `version`.
    init?(_ object: [String: Any]) {
        guard object["ciphertext"] is String, object["iv"] is String,
            object["alias"] is String || object["version"] is NSNumber
        else { return nil }
        alias = object["alias"] as? String
        service = object["service"] as? String
        key = object["key"] as? String
        requiresAuthentication =
            (object["requiresAuthentication"] as? Bool) ?? (object["requiresAuth"] as? Bool) ?? false
        authenticators = (object["authenticators"] as? NSNumber)?.intValue ?? 0
        invalidateOnEnrollment = (object["invalidateOnEnrollment"] as? Bool) ?? false
        useStrongBox = (object["useStrongBox"] as? Bool) ?? false
        let metadata = (object["metadata"] as? [String: Any]).flatMap(SensitiveInfoMetadata.init)
        accessControl = (object["accessControl"] as? String) ?? metadata?.accessControl
        securityLevel = (object["securityLevel"] as? String) ?? metadata?.securityLevel
    }
}
