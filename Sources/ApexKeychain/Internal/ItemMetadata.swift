import Foundation

/// What the package keeps in an item's generic attribute (`gena`): how to read the item back the way it was
/// written. A compact `name=value;…` text, so that a dump of the keychain stays legible.
///
/// Fields: `apx` format version, `enc` value encoding, `ac` access control, `av` authValidity, `lbl` label
/// present, `bio` enrolled biometric set at write time (hex), `os` OS major version at write time, `sl` Android
/// security level.
struct ItemMetadata: Equatable, Sendable {
    enum Encoding: String, Sendable {
        case string = "s"
        case bytes = "b"
        case credentials = "c"
    }

    static let formatVersion = 1

    var encoding: Encoding
    var accessControl: AccessControl
    var authValidity: Int
    var hasLabel: Bool
    var enrolledSet: String?
    var osMajor: Int
    var securityLevel: HardwareSecurityLevel?

    func encoded() -> Data {
        var text = "apx=\(Self.formatVersion);enc=\(encoding.rawValue);ac=\(accessControl.rawValue);av=\(authValidity);lbl=\(hasLabel ? 1 : 0);os=\(osMajor)"
        if let enrolledSet { text += ";bio=" + Data(enrolledSet.utf8).map { String(format: "%02x", $0) }.joined() }
        if let securityLevel { text += ";sl=\(securityLevel.rawValue)" }
        return Data(text.utf8)
    }

    /// Parses the metadata of a package item; nil when it is missing or damaged.
    init?(_ data: Data?) {
        guard let data, let text = String(data: data, encoding: .utf8) else { return nil }
        var fields: [Substring: Substring] = [:]
        for field in text.split(separator: ";") {
            guard let eq = field.firstIndex(of: "=") else { return nil }
            fields[field[..<eq]] = field[field.index(after: eq)...]
        }
        guard fields["apx"] == "1",
            let enc = fields["enc"].flatMap({ Encoding(rawValue: String($0)) }),
            let ac = fields["ac"].flatMap({ AccessControl(rawValue: String($0)) }),
            let av = fields["av"].flatMap({ Int($0) }),
            let lbl = fields["lbl"], lbl == "0" || lbl == "1",
            let os = fields["os"].flatMap({ Int($0) })
        else { return nil }
        var enrolled: String?
        if let hex = fields["bio"] {
            guard let bytes = Self.bytes(hex: hex), let set = String(data: bytes, encoding: .utf8) else { return nil }
            enrolled = set
        }
        var level: HardwareSecurityLevel?
        if let sl = fields["sl"] {
            guard let parsed = HardwareSecurityLevel(rawValue: String(sl)) else { return nil }
            level = parsed
        }
        self.init(
            encoding: enc, accessControl: ac, authValidity: av, hasLabel: lbl == "1", enrolledSet: enrolled,
            osMajor: os, securityLevel: level)
    }

    init(
        encoding: Encoding, accessControl: AccessControl, authValidity: Int, hasLabel: Bool, enrolledSet: String?,
        osMajor: Int, securityLevel: HardwareSecurityLevel?
    ) {
        self.encoding = encoding
        self.accessControl = accessControl
        self.authValidity = authValidity
        self.hasLabel = hasLabel
        self.enrolledSet = enrolledSet
        self.osMajor = osMajor
        self.securityLevel = securityLevel
    }

    private static func bytes(hex: Substring) -> Data? {
        guard hex.utf8.count % 2 == 0 else { return nil }
        var out = Data(capacity: hex.utf8.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }
}
