import CLibXML2

// The text of entries and attributes turned into values: a number's or boolean's `value`, and an attribute's
// value as libxml2's tree holds it.
extension SharedPreferencesReader {
    // MARK: - Values

    static func primitive(_ kind: Kind, _ raw: String) -> PreferenceValue? {
        switch kind {
        case .boolean:
            switch raw.lowercased() {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            default: return nil
            }
        case .int: return Int32(raw).map { .int($0) }
        case .long: return Int64(raw).map { .long($0) }
        case .float: return isNumberText(raw) ? Float(raw).map { .float($0) } : nil
        case .double: return isNumberText(raw) ? Double(raw).map { .double($0) } : nil
        case .string, .set: return nil
        }
    }

    /// Java's `Float.toString` forms: digits, sign, point, exponent, `NaN`, `Infinity`. Swift's parser also takes
    /// hexadecimal and `inf`/`nan` spellings that Android never writes; those are refused.
    private static func isNumberText(_ raw: String) -> Bool {
        if ["NaN", "Infinity", "-Infinity", "+Infinity"].contains(raw) { return true }
        guard !raw.isEmpty else { return false }
        return raw.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "e")
        }
    }

    /// An attribute value as libxml2's tree holds it. The parser hands over every `&` that a reference stood for as
    /// the character reference `&#38;` (every other reference already substituted), which the tree decodes.
    static func attributeValue(_ bytes: UnsafeBufferPointer<xmlChar>) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        let ampersand = Array("&#38;".utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var reader = ByteReader(UnsafeRawBufferPointer(bytes))
        while let byte = try? reader.readU8() {
            if byte == UInt8(ascii: "&"),
                let rest = try? reader.window(at: reader.position, count: ampersand.count - 1),
                rest.unsafeBytes.elementsEqual(ampersand.dropFirst())
            {
                decoded.append(UInt8(ascii: "&"))
                try? reader.skip(ampersand.count - 1)
            } else {
                decoded.append(byte)
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
