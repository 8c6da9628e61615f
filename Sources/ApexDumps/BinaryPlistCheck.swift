import Foundation

/// A walk over a binary plist's trailer and object markers before Foundation decodes it.
///
/// Foundation on Linux crashes the process (a null read while bridging) on a binary plist that holds a set, a
/// type a keychain dump never has; a fuzzer found it. So a `bplist00` whose offset table points at a set marker
/// (`0xC?`), or whose trailer or offsets don't fit the file, is refused here as malformed instead.
enum BinaryPlistCheck {
    /// Nil when the file may be handed to Foundation; otherwise what is wrong.
    static func problem(_ data: Data) -> String? {
        guard data.starts(with: Array("bplist".utf8)) else { return nil }
        let bytes = [UInt8](data)
        // Shorter than header + trailer: nothing to walk, and Foundation refuses it without crashing.
        guard bytes.count >= 8 + 32 else { return nil }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        func integer(_ start: Int, _ size: Int) -> Int? {
            guard size >= 1, size <= 8, start >= 0, start + size <= bytes.count else { return nil }
            var value: UInt64 = 0
            for byte in bytes[start..<(start + size)] { value = value << 8 | UInt64(byte) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        guard let count = integer(trailer + 8, 8), let table = integer(trailer + 24, 8), (1...8).contains(offsetSize),
            count <= bytes.count, table >= 8, table <= trailer, count <= (trailer - table) / offsetSize
        else { return "a binary property list that is malformed or truncated (its trailer does not fit the file)" }
        for index in 0..<count {
            guard let offset = integer(table + index * offsetSize, offsetSize), offset >= 8, offset < table else {
                return "a binary property list that is malformed (its offset table points outside its objects)"
            }
            if bytes[offset] & 0xF0 == 0xC0 {
                return "a binary property list holding a set, which no keychain dump has"
            }
        }
        return nil
    }
}
