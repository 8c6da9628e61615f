import Foundation

/// What the package keeps in an item's generic attribute (`gena`): how to read the item back the way it was
/// written. A compact `name=value;…` text, so that a dump of the keychain stays legible.
///
/// Fields: `apx` format version, `enc` value encoding, `ac` access control, `av` authValidity, `lbl` label
/// present, `bio` enrolled biometric set at write time (hex; stands for the platform's own binding of the item to
/// the set), `bh` the biometric state hash the platform reported at write time (hex), `os` OS major version at
/// write time, `sl` Android security level.
package struct ItemMetadata: Equatable, Sendable {
    enum Encoding: String, Sendable, CaseIterable {
        case string = "s"
        case bytes = "b"
        case credentials = "c"
    }

    static let formatVersion = 1

    /// Equal field by field, texts byte for byte: equal metadata has equal ``encoded()`` bytes (Swift's `==` on
    /// Strings is canonical equivalence).
    package static func == (a: ItemMetadata, b: ItemMetadata) -> Bool {
        a.encoding == b.encoding && a.accessControl == b.accessControl && a.authValidity == b.authValidity
            && a.hasLabel == b.hasLabel && a.osMajor == b.osMajor && a.securityLevel == b.securityLevel
            && ExactText.equal(a.enrolledSet, b.enrolledSet) && ExactText.equal(a.stateHash, b.stateHash)
    }

    var encoding: Encoding
    /// The access control the item was written with.
    package var accessControl: AccessControl
    var authValidity: Int
    var hasLabel: Bool
    var enrolledSet: String?
    var stateHash: String?
    var osMajor: Int
    var securityLevel: HardwareSecurityLevel?

    /// The metadata as the item keeps it: `apx=1;enc=…;ac=…;av=…;lbl=…;os=…` and, when set, `bio`, `bh` (hex)
    /// and `sl`. Written as bytes: every write encodes it.
    func encoded() -> Data {
        var out = FieldText()
        out.number("apx", Self.formatVersion)
        out.text("enc", encoding.rawValue)
        out.text("ac", accessControl.rawValue)
        out.number("av", authValidity)
        out.text("lbl", hasLabel ? "1" : "0")
        out.number("os", osMajor)
        if let enrolledSet { out.hex("bio", enrolledSet) }
        if let stateHash { out.hex("bh", stateHash) }
        if let securityLevel { out.text("sl", securityLevel.rawValue) }
        return Data(out.bytes)
    }

    /// `name=value` fields joined by `;`, appended as bytes.
    private struct FieldText {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(96) }

        private mutating func name(_ name: StaticString) {
            if !bytes.isEmpty { bytes.append(UInt8(ascii: ";")) }
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "="))
        }

        mutating func text(_ field: StaticString, _ value: String) {
            name(field)
            bytes.append(contentsOf: value.utf8)
        }

        /// A number as `String(n)` writes it.
        mutating func number(_ field: StaticString, _ value: Int) {
            name(field)
            guard value >= 0 else { return bytes.append(contentsOf: String(value).utf8) }
            var divisor = 1
            while value / divisor >= 10 { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }

        /// The text's UTF-8 bytes in lowercase hex.
        mutating func hex(_ field: StaticString, _ value: String) {
            name(field)
            let digits: StaticString = "0123456789abcdef"
            digits.withUTF8Buffer { digits in
                for byte in value.utf8 {
                    bytes.append(digits[Int(byte >> 4)])
                    bytes.append(digits[Int(byte & 0x0F)])
                }
            }
        }
    }

    /// Parses the metadata of a package item; nil when it is missing or damaged. Reads the bytes in place:
    /// every read of an item parses it.
    package init?(_ data: Data?) {
        guard let data else { return nil }
        var version: Int?
        var encoding: Encoding?
        var accessControl: AccessControl?
        var authValidity: Int?
        var hasLabel: Bool?
        var osMajor: Int?
        var enrolled: String?
        var hash: String?
        var level: HardwareSecurityLevel?
        let valid: Bool = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ";") { end += 1 }
                guard let eq = bytes[start..<end].firstIndex(of: UInt8(ascii: "=")) else { return false }
                let name = bytes[start..<eq]
                let value = bytes[(eq + 1)..<end]
                let valueBytes = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: value))
                func number() -> Int? {
                    guard !value.isEmpty, value.count <= 10 else { return nil }
                    var n = 0
                    for byte in value {
                        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                        n = n * 10 + Int(byte - UInt8(ascii: "0"))
                    }
                    return n
                }
                switch ExactText.named(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: name)), as: Field.self) {
                case .apx: version = number()
                case .enc: encoding = ExactText.named(valueBytes, as: Encoding.self)
                case .ac: accessControl = ExactText.named(valueBytes, as: AccessControl.self)
                case .av: authValidity = number()
                case .lbl:
                    hasLabel =
                        value.elementsEqual([UInt8(ascii: "1")])
                        ? true : value.elementsEqual([UInt8(ascii: "0")]) ? false : nil
                case .os: osMajor = number()
                case .bio:
                    guard let set = Self.bytes(hex: value).flatMap({ String(validUTF8: $0) }) else {
                        return false
                    }
                    enrolled = set
                case .bh:
                    guard let reported = Self.bytes(hex: value).flatMap({ String(validUTF8: $0) })
                    else { return false }
                    hash = reported
                case .sl:
                    guard let parsed = ExactText.named(valueBytes, as: HardwareSecurityLevel.self) else { return false }
                    level = parsed
                case nil: break
                }
                start = end + 1
            }
            return true
        }
        guard valid, version == Self.formatVersion, let encoding, let accessControl, let authValidity, let hasLabel,
            let osMajor
        else { return nil }
        self.init(
            encoding: encoding, accessControl: accessControl, authValidity: authValidity, hasLabel: hasLabel,
            enrolledSet: enrolled, stateHash: hash, osMajor: osMajor, securityLevel: level)
    }

    init(
        encoding: Encoding, accessControl: AccessControl, authValidity: Int, hasLabel: Bool, enrolledSet: String?,
        stateHash: String?, osMajor: Int, securityLevel: HardwareSecurityLevel?
    ) {
        self.encoding = encoding
        self.accessControl = accessControl
        self.authValidity = authValidity
        self.hasLabel = hasLabel
        self.enrolledSet = enrolledSet
        self.stateHash = stateHash
        self.osMajor = osMajor
        self.securityLevel = securityLevel
    }

    /// The fields the format names (a name it does not know is skipped, for later versions).
    private enum Field: String, CaseIterable {
        case apx, enc, ac, av, lbl, os, bio, bh, sl
    }

    private static func bytes(hex: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
