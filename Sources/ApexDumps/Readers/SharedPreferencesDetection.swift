import Foundation

// How a file is recognized as a SharedPreferences file from its first bytes (``DumpReader``'s format detection).
extension SharedPreferencesReader {
    /// Whether `prefix` (the first bytes of a file) looks like a SharedPreferences file: an optional UTF-8 byte
    /// order mark, an optional `<?xml …?>` declaration, optional comments and whitespace, then a `<map` start tag.
    /// A document with a DOCTYPE before the root (such as an XML property list) does not look like one.
    public static func looksLike(_ prefix: Data) -> Bool {
        let bytes = [UInt8](prefix.prefix(64 << 10))
        var index = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        func skipWhitespace() {
            while index < bytes.count, isXMLWhitespace(bytes[index]) { index += 1 }
        }
        func skip(past terminator: [UInt8]) -> Bool {
            guard let end = find(terminator, in: bytes, from: index) else { return false }
            index = end + terminator.count
            return true
        }
        skipWhitespace()
        if matches(Array("<?xml".utf8), in: bytes, at: index) {
            guard skip(past: Array("?>".utf8)) else { return false }
        }
        while true {
            skipWhitespace()
            if matches(Array("<!--".utf8), in: bytes, at: index) {
                index += 4
                guard skip(past: Array("-->".utf8)) else { return false }
                continue
            }
            break
        }
        guard matches(Array("<map".utf8), in: bytes, at: index), index + 4 < bytes.count else { return false }
        let next = bytes[index + 4]
        return next == UInt8(ascii: ">") || next == UInt8(ascii: "/") || isXMLWhitespace(next)
    }

    private static func isXMLWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func matches(_ needle: [UInt8], in bytes: [UInt8], at index: Int) -> Bool {
        index + needle.count <= bytes.count && bytes[index..<(index + needle.count)].elementsEqual(needle)
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if matches(needle, in: bytes, at: index) { return index }
            index += 1
        }
        return nil
    }
}
