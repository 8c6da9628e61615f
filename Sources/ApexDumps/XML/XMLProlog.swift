/// The root element of an XML document, found by skipping its prolog: declaration, processing instructions,
/// comments and a document type declaration (internal subset included).
enum XMLProlog {
    /// The root element's name, or nil when the bytes end (or stop being a prolog) before it.
    static func rootElement(_ bytes: [UInt8], from start: Int) -> String? {
        var index = start
        func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        func starts(_ literal: String) -> Bool {
            let needle = Array(literal.utf8)
            return bytes.count - index >= needle.count && Array(bytes[index..<index + needle.count]) == needle
        }
        func skip(past literal: String) -> Bool {
            let needle = Array(literal.utf8)
            while index + needle.count <= bytes.count {
                if Array(bytes[index..<index + needle.count]) == needle {
                    index += needle.count
                    return true
                }
                index += 1
            }
            return false
        }
        while true {
            skipWhitespace()
            if starts("<?") {
                guard skip(past: "?>") else { return nil }
            } else if starts("<!--") {
                index += 4
                guard skip(past: "-->") else { return nil }
            } else if starts("<!DOCTYPE") {
                // To the `>` that closes the declaration, stepping over an internal subset in brackets.
                var inSubset = false
                while index < bytes.count, inSubset || bytes[index] != UInt8(ascii: ">") {
                    if bytes[index] == UInt8(ascii: "[") { inSubset = true }
                    if bytes[index] == UInt8(ascii: "]") { inSubset = false }
                    index += 1
                }
                guard index < bytes.count else { return nil }
                index += 1
            } else if starts("<") {
                index += 1
                let nameStart = index
                while index < bytes.count, !" \t\r\n/>".utf8.contains(bytes[index]) { index += 1 }
                guard index < bytes.count, index > nameStart else { return nil }
                return String(decoding: bytes[nameStart..<index], as: UTF8.self)
            } else {
                return nil
            }
        }
    }
}
