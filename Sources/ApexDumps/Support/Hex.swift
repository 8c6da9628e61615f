// Support/: small helpers the readers share: Hex (this file) for binary fields as text, concurrentMap to spread
// pure work over the cores.

/// Lower-case hexadecimal text of bytes, as dumps and reports print binary fields.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two lower-case hex digits per byte.
    public static func lowercase<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
