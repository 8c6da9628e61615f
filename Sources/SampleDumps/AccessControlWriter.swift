import Foundation

/// A value of Apple's DER-encoded property lists (`der_plist`), the form `SecAccessControlCopyData` gives.
indirect enum DERValue {
    case string(String)
    case boolean(Bool)
    case integer(Int64)
    case data(Data)
    case dictionary([(String, DERValue)])
}

/// Encodes `DERValue`s: a dictionary is a SET of SEQUENCE { UTF8String key, value }, elements sorted by their
/// encoding (DER's SET OF order).
enum DERWriter {
    static func encode(_ value: DERValue) -> Data {
        switch value {
        case .string(let text): return element(0x0C, Data(text.utf8))
        case .boolean(let flag): return element(0x01, Data([flag ? 0x01 : 0x00]))
        case .data(let data): return element(0x04, data)
        case .integer(let number):
            var bytes = withUnsafeBytes(of: number.bigEndian) { Array($0) }
            while bytes.count > 1, (bytes[0] == 0 && bytes[1] < 0x80) || (bytes[0] == 0xFF && bytes[1] >= 0x80) {
                bytes.removeFirst()
            }
            return element(0x02, Data(bytes))
        case .dictionary(let pairs):
            let entries = pairs.map { element(0x30, encode(.string($0.0)) + encode($0.1)) }
                .sorted { $0.lexicographicallyPrecedes($1) }
            return element(0x31, entries.reduce(Data(), +))
        }
    }

    private static func element(_ tag: UInt8, _ content: Data) -> Data {
        var out = Data([tag])
        if content.count < 0x80 {
            out.append(UInt8(content.count))
        } else {
            var length = content.count
            var bytes: [UInt8] = []
            while length > 0 {
                bytes.insert(UInt8(length & 0xFF), at: 0)
                length >>= 8
            }
            out.append(0x80 | UInt8(bytes.count))
            out.append(contentsOf: bytes)
        }
        return out + content
    }
}

/// The access controls the samples use, built as `SecAccessControlCreateWithFlags` builds them.
enum SampleAccessControl {
    /// `kSecAccessControlBiometryCurrentSet`: react-native-keychain's `BIOMETRY_CURRENT_SET`, and what
    /// expo-secure-store uses for `requireAuthentication`.
    case biometryCurrentSet
    /// `kSecAccessControlBiometryAny`.
    case biometryAny
    /// `BiometryAny | Or | DevicePasscode`: react-native-keychain's `BIOMETRY_ANY_OR_DEVICE_PASSCODE`.
    case biometryAnyOrDevicePasscode
    /// `kSecAccessControlUserPresence`.
    case userPresence
    /// `kSecAccessControlDevicePasscode`.
    case devicePasscode

    /// The constraint of the decrypt operation (`od`).
    private func constraint(_ random: inout SampleRandom) -> DERValue {
        switch self {
        case .biometryCurrentSet:
            .dictionary([
                ("cbio", .dictionary([("pbioc", .data(random.bytes(16))), ("pbioh", .data(random.bytes(32)))]))
            ])
        case .biometryAny:
            .dictionary([("cbio", .dictionary([("pbioc", .data(Data()))]))])
        case .biometryAnyOrDevicePasscode:
            .dictionary([
                ("pkofn", .integer(1)), ("cbio", .dictionary([("pbioc", .data(Data()))])), ("cup", .boolean(true)),
            ])
        case .userPresence:
            .dictionary([("cpo", .string("DeviceOwnerAuthentication"))])
        case .devicePasscode:
            .dictionary([("cup", .boolean(true))])
        }
    }

    /// `SecAccessControlCopyData`: `{"prot": <pdmn>, "acl": {"od": <constraint>, "oe": true, "odel": true}}` in DER.
    func der(protection: String, random: inout SampleRandom) -> Data {
        DERWriter.encode(
            .dictionary([
                ("prot", .string(protection)),
                ("acl", .dictionary([("od", constraint(&random)), ("oe", .boolean(true)), ("odel", .boolean(true))])),
            ]))
    }

    /// How objection prints it (`access_control`).
    var objectionText: String {
        switch self {
        case .biometryCurrentSet: "kSecAccessControlBiometryCurrentSet"
        case .biometryAny: "kSecAccessControlBiometryAny"
        case .biometryAnyOrDevicePasscode: "kSecAccessControlBiometryAny Or kSecAccessControlDevicePasscode"
        case .userPresence: "kSecAccessControlUserPresence"
        case .devicePasscode: "kSecAccessControlDevicePasscode"
        }
    }
}
