/// A Tink keyset as EncryptedSharedPreferences stores it: the hex of a serialized `EncryptedKeyset` (wrapped by
/// an Android Keystore key) or of a cleartext `Keyset`. Only its form and key ids are read, never key material.
///
/// `Keyset`: field 1 primary key id, field 2 repeated `Key` (field 1 `KeyData` with its type URL, field 3 key
/// id). `EncryptedKeyset`: field 2 the encrypted keyset, field 3 `KeysetInfo` (field 1 primary key id, field 2
/// repeated `KeyInfo` with field 3 key id).
struct TinkKeyset {
    /// Whether the key material is in cleartext (decryptable off the device).
    let isCleartext: Bool
    /// The ids of its keys: the 4 bytes after `0x01` at the start of each ciphertext.
    let keyIDs: Set<UInt32>

    /// Reads the hex form; nil when it is not a keyset of either form.
    init?(hex: String) {
        guard let bytes = Self.bytes(hex: hex), let fields = Self.fields(bytes[...]) else { return nil }
        var ids = Set<UInt32>()
        if let info = fields.first(where: { $0.number == 3 }) {
            // EncryptedKeyset: the ids are in KeysetInfo's KeyInfo entries.
            guard fields.contains(where: { $0.number == 2 }), case .bytes(let infoBytes) = info.value,
                let infoFields = Self.fields(infoBytes)
            else { return nil }
            for field in infoFields where field.number == 2 {
                guard case .bytes(let keyInfo) = field.value, let id = Self.keyID(keyInfo) else { return nil }
                ids.insert(id)
            }
            isCleartext = false
        } else {
            for field in fields where field.number == 2 {
                guard case .bytes(let key) = field.value, let keyFields = Self.fields(key),
                    let data = keyFields.first(where: { $0.number == 1 }), case .bytes(let keyData) = data.value,
                    let dataFields = Self.fields(keyData), let url = dataFields.first(where: { $0.number == 1 }),
                    case .bytes(let urlBytes) = url.value,
                    String(decoding: urlBytes, as: UTF8.self).hasPrefix("type.googleapis.com/google.crypto.tink."),
                    let id = Self.keyID(key)
                else { return nil }
                ids.insert(id)
            }
            isCleartext = true
        }
        guard !ids.isEmpty else { return nil }
        keyIDs = ids
    }

    /// Field 3 (the key id) of a `Key` or `KeyInfo`.
    private static func keyID(_ message: ArraySlice<UInt8>) -> UInt32? {
        guard let fields = fields(message), let field = fields.first(where: { $0.number == 3 }),
            case .varint(let id) = field.value, id <= UInt64(UInt32.max)
        else { return nil }
        return UInt32(id)
    }

    private enum Value {
        case varint(UInt64)
        case bytes(ArraySlice<UInt8>)
    }

    /// The top-level fields of a protobuf message (varints and length-delimited only, as Tink's protos have);
    /// nil for anything else.
    private static func fields(_ data: ArraySlice<UInt8>) -> [(number: UInt64, value: Value)]? {
        var index = data.startIndex
        func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while index < data.endIndex, shift < 64 {
                let byte = data[index]
                index += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
            return nil
        }
        var fields: [(number: UInt64, value: Value)] = []
        while index < data.endIndex {
            guard let tag = varint(), tag >> 3 > 0 else { return nil }
            switch tag & 7 {
            case 0:
                guard let value = varint() else { return nil }
                fields.append((tag >> 3, .varint(value)))
            case 2:
                guard let length = varint(), length <= UInt64(data.endIndex - index) else { return nil }
                let end = index + Int(length)
                fields.append((tag >> 3, .bytes(data[index..<end])))
                index = end
            default:
                return nil
            }
        }
        return fields
    }

    /// The bytes of lower- or upper-case hex; nil for anything else.
    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
