import ApexDumpModel
import ApexKeychain
import Foundation

/// A scalar of expo's entry JSON; nested containers are not looked into.
enum ExpoJSONScalar: Decodable, Equatable {
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case null
    case container

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .integer(number)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else {
            self = .container
        }
    }

    /// The JSON kind, for messages (never the value).
    var kindName: String {
        switch self {
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .null: "null"
        case .container: "an array or object"
        }
    }

    /// A boolean as Android's `org.json` `optBoolean` reads it: a boolean, or the string `true` / `false` in any
    /// case; nil otherwise.
    var optBoolean: Bool? {
        switch self {
        case .bool(let flag): flag
        case .string(let text) where text.lowercased() == "true": true
        case .string(let text) where text.lowercased() == "false": false
        default: nil
        }
    }
}

/// One `SecureStore` entry's JSON, read: the fields that say how it was written, and what is wrong with it.
struct ExpoAndroidEntry {
    /// The entry's fields (ct, iv and esk are checked, never kept).
    var scheme: String?
    var tagLength: Int64?
    var keystoreAlias: String?
    var usesKeystoreSuffix: Bool
    var authentication: ExpoProtectionMapping.AndroidAuthentication?
    /// `requireAuthentication` as found, as text; nil when absent.
    var authenticationAsFound: String?
    /// Why expo-secure-store could not read the entry, if it couldn't.
    var damage: String?
    /// Why its protection can't be mapped, if it can't.
    var unmappable: String?
    /// Field names expo does not write.
    var unknownFields: [String]
    /// The protection as found, for the report.
    var protection: [String: String]

    /// The fields whose presence marks expo's layout.
    static let signature = ["ct", "iv", "scheme"]
    /// The fields expo writes.
    static let known: Set<String> = [
        "ct", "iv", "tlen", "scheme", "esk", "requireAuthentication", "usesKeystoreSuffix", "keystoreAlias",
    ]

    /// The fields of an entry's text when it is a JSON object, else nil.
    static func fields(of text: String) -> [String: ExpoJSONScalar]? {
        // Most values in other libraries' files are not JSON at all: a text whose first byte after a byte order
        // mark and JSON white space is not `{` can't be an object, and needs no decoder.
        let utf8 = text.utf8
        let body = utf8.starts(with: [0xEF, 0xBB, 0xBF]) ? utf8.dropFirst(3) : utf8[...]
        guard body.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) == UInt8(ascii: "{")
        else { return nil }
        return try? JSONDecoder().decode([String: ExpoJSONScalar].self, from: Data(text.utf8))
    }

    /// Reads the fields of an entry with expo's signature.
    init(_ fields: [String: ExpoJSONScalar]) {
        unknownFields = fields.keys.filter { !Self.known.contains($0) }.sorted()
        var problems: [String] = []
        var protection: [String: String] = [:]

        if case .string(let scheme) = fields["scheme"] {
            self.scheme = scheme
            protection["scheme"] = scheme
            if scheme != "aes" && scheme != "hybrid" { problems.append("scheme is neither aes nor hybrid") }
        } else {
            problems.append("scheme is \(fields["scheme"]?.kindName ?? "missing"), not a string")
        }
        for field in ["ct", "iv"] + (scheme == "hybrid" ? ["esk"] : []) {
            guard case .string(let text) = fields[field] else {
                problems.append("\(field) is \(fields[field]?.kindName ?? "missing"), not a string")
                continue
            }
            if Self.androidBase64(text) == nil { problems.append("\(field) is not Base64") }
        }
        if case .integer(let bits) = fields["tlen"] {
            tagLength = bits
            protection["tlen"] = String(bits)
            if bits < 96 || bits > 128 || bits % 8 != 0 {
                problems.append(
                    "tlen \(bits) is not a GCM tag length of 96 to 128 bits (expo-secure-store 12.7.0 and later refuse tags under 96)"
                )
            }
        } else {
            problems.append("tlen is \(fields["tlen"]?.kindName ?? "missing"), not an integer")
        }
        if case .string(let alias) = fields["keystoreAlias"] {
            keystoreAlias = alias
            protection["keystoreAlias"] = alias
        }
        if let suffix = fields["usesKeystoreSuffix"] {
            protection["usesKeystoreSuffix"] = Self.text(of: suffix)
        }
        usesKeystoreSuffix = fields["usesKeystoreSuffix"]?.optBoolean ?? false

        switch fields["requireAuthentication"] {
        case nil, .null?:
            authentication = ExpoProtectionMapping.AndroidAuthentication.none
        case .string("biometry")?:
            authentication = .biometry
        case .string("deviceCredentials")?:
            authentication = .deviceCredentials
        case let flag?:
            if let value = flag.optBoolean {
                authentication = value ? .biometry : ExpoProtectionMapping.AndroidAuthentication.none
            } else {
                unmappable =
                    "requireAuthentication is \(flag.kindName) expo-secure-store doesn't write (a boolean, 'biometry' or 'deviceCredentials'): its protection can't be told"
            }
        }
        if let flag = fields["requireAuthentication"], flag != .null {
            authenticationAsFound = Self.text(of: flag)
            protection["requireAuthentication"] = authenticationAsFound
        }
        damage = problems.isEmpty ? nil : problems.joined(separator: "; ")
        self.protection = protection
    }

    /// A scalar as text: booleans and numbers as JSON writes them, strings as they are.
    private static func text(of scalar: ExpoJSONScalar) -> String {
        switch scalar {
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .number(let number): String(number)
        case .string(let text): text
        case .null: "null"
        case .container: "(container)"
        }
    }

    /// The bytes of Base64 as Android's `Base64.decode(s, DEFAULT)` reads it: whitespace skipped, padding
    /// optional; nil when it is not Base64.
    static func androidBase64(_ text: String) -> Data? {
        var compact = String(text.unicodeScalars.filter { !" \t\r\n".unicodeScalars.contains($0) })
        if compact.utf8.count % 4 == 1 { return nil }
        while compact.utf8.count % 4 != 0 { compact += "=" }
        return Data(base64Encoded: compact)
    }

    /// The Android Keystore alias the entry's key has, or a description of it when the service is unknown.
    func keystoreKey(service: String?) -> String {
        let cipher = scheme == "hybrid" ? "RSA/None/PKCS1Padding" : "AES/GCM/NoPadding"
        guard let service else { return "\(cipher):<keychainService>" }
        guard usesKeystoreSuffix else { return "\(cipher):\(service)" }
        switch authentication {
        case .none?: return "\(cipher):\(service):keystoreUnauthenticated"
        case .biometry?: return "\(cipher):\(service):keystoreAuthenticated"
        default: return "\(cipher):\(service):…"
        }
    }
}
