// Support/: small helpers the readers share: Hex (this file) for binary fields as text, concurrentMap to spread
// pure work over the cores.

import Foundation

/// Lower-case hexadecimal text of bytes, as dumps and reports print binary fields.
public enum Hex {
    /// Two lower-case hex digits per byte.
    public static func lowercase(_ bytes: Data) -> String {
        bytes.withUnsafeBytes { lowercase(raw: $0) }
    }

    /// Two lower-case hex digits per byte.
    public static func lowercase(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { lowercase(raw: $0) }
    }

    /// Written straight into the string's storage: one allocation, none for up to 7 bytes.
    private static func lowercase(raw: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: raw.count * 2) { out in
            let digits: StaticString = "0123456789abcdef"
            return digits.withUTF8Buffer { digits in
                for (index, byte) in raw.enumerated() {
                    out[2 * index] = digits[Int(byte >> 4)]
                    out[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
                return raw.count * 2
            }
        }
    }
}
