import Foundation

// The text of scalar elements: `<integer>` and strict Base64 for `<data>`.
extension PlistXMLParser {
    // MARK: Scalars

    /// An `<integer>`: an optional sign, then decimal digits or `0x` and hexadecimal digits. Values above
    /// `Int64.max` are unsigned; anything outside `Int64.min…UInt64.max` is nil.
    static func integer(_ text: Substring) -> PlistNode? {
        var digits = text
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        guard !digits.isEmpty, digits.first != "+", digits.first != "-", let magnitude = UInt64(digits, radix: radix)
        else {
            return nil
        }
        if !negative {
            return magnitude <= UInt64(Int64.max) ? .integer(Int64(magnitude)) : .unsignedInteger(magnitude)
        }
        if magnitude == UInt64(Int64.max) + 1 { return .integer(Int64.min) }
        return Int64(exactly: magnitude).map { .integer(-$0) }
    }

    /// Why the text of a `<data>` element is not Base64, in words that quote none of it.
    struct Base64Damage: Error, Equatable {
        var reason: String
    }

    /// The bytes of the Base64 text of a `<data>` element (UTF-8 bytes), decoded strictly: XML white space
    /// (space, tab, line feed, carriage return) is skipped wherever it is, as Apple's writers break and indent the
    /// text; anything else must be the alphabet `A–Z a–z 0–9 + /`, in groups of four, the last one padded with
    /// `=` as the standard says (`QQ==`, `QUI=`), with nothing but white space after the padding and no stray bits
    /// in the last character. A lenient decoder would turn damaged text into other bytes that then pass as the
    /// value; here it is a ``Base64Damage`` instead.
    static func base64(_ text: [UInt8]) -> Result<Data, Base64Damage> {
        var out = Data(count: text.count / 4 * 3 + 3)
        let outcome = out.withUnsafeMutableBytes { raw -> Result<Int, Base64Damage> in
            let bytes = raw.bindMemory(to: UInt8.self)
            return base64Sextets.withUnsafeBufferPointer { sextets -> Result<Int, Base64Damage> in
                var count = 0
                var group: UInt32 = 0
                var filled = 0
                var padding = 0
                for char in text {
                    let sextet = sextets[Int(char)]
                    if sextet < 64 {
                        guard padding == 0 else {
                            return .failure(Base64Damage(reason: "Base64 text after the padding"))
                        }
                        group = group << 6 | UInt32(sextet)
                        filled += 1
                        if filled == 4 {
                            bytes[count] = UInt8(truncatingIfNeeded: group >> 16)
                            bytes[count + 1] = UInt8(truncatingIfNeeded: group >> 8)
                            bytes[count + 2] = UInt8(truncatingIfNeeded: group)
                            count += 3
                            group = 0
                            filled = 0
                        }
                    } else if sextet == base64Space {
                        continue
                    } else if sextet == base64Pad {
                        padding += 1
                    } else {
                        return .failure(Base64Damage(reason: "a character outside the Base64 alphabet"))
                    }
                }
                switch (filled, padding) {
                case (0, 0):
                    return .success(count)
                case (2, 2):
                    guard group & 0x0F == 0 else {
                        return .failure(Base64Damage(reason: "stray bits in its last character"))
                    }
                    bytes[count] = UInt8(truncatingIfNeeded: group >> 4)
                    return .success(count + 1)
                case (3, 1):
                    guard group & 0x03 == 0 else {
                        return .failure(Base64Damage(reason: "stray bits in its last character"))
                    }
                    bytes[count] = UInt8(truncatingIfNeeded: group >> 10)
                    bytes[count + 1] = UInt8(truncatingIfNeeded: group >> 2)
                    return .success(count + 2)
                case (_, 0):
                    return .failure(
                        Base64Damage(reason: "a last group shorter than four characters, without its padding"))
                default:
                    return .failure(Base64Damage(reason: "padding that does not complete its group of four"))
                }
            }
        }
        switch outcome {
        case .success(let written):
            out.count = written
            return .success(out)
        case .failure(let damage):
            return .failure(damage)
        }
    }

    /// What each byte is in Base64 text: its value (0–63), ``base64Space``, ``base64Pad``, or 0xFF for any other.
    private static let base64Sextets: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(char)] = UInt8(value)
        }
        for char in [0x20, 0x09, 0x0A, 0x0D] { table[char] = base64Space }
        table[Int(UInt8(ascii: "="))] = base64Pad
        return table
    }()
    private static let base64Space: UInt8 = 64
    private static let base64Pad: UInt8 = 65
}
