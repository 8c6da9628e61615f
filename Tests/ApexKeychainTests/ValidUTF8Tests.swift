import ApexKeychain
import Foundation
import Testing

/// `String(validUTF8:)` stands in, on the package's floor (iOS 15.1), for the standard library's
/// `String(validating:as:)` (iOS 18): on Linux both exist, and they must agree on every input.
@Suite("String(validUTF8:): UTF-8 validation without the iOS 18 initializer")
struct ValidUTF8Tests {
    static let cases: [[UInt8]] = [
        [], Array("plain".utf8), Array("héllo ✓ 🔑".utf8), [0xEF, 0xBB, 0xBF, 0x61], [0x61, 0x00, 0x62],
        [0xFF], [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
        [0x61, 0xEF, 0xBF], [0xEF, 0xBF, 0xBD], [0x80, 0x61],
    ]

    @Test("agrees with String(validating:as:) on chosen and random bytes")
    func agreesWithStandardLibrary() {
        var generator = SystemRandomNumberGenerator()
        let random: [[UInt8]] = (0..<2000).map { _ in
            (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                // Mostly the bytes that start or continue multi-byte sequences.
                [UInt8.random(in: 0x80...0xFF, using: &generator), 0x61][Int.random(in: 0...3) == 0 ? 1 : 0]
            }
        }
        for bytes in Self.cases + random {
            let expected = String(validating: bytes, as: UTF8.self)
            #expect(String(validUTF8: bytes) == expected, "\(bytes)")
            #expect(String(validUTF8: Data(bytes)) == expected, "\(bytes) as Data")
        }
        #expect(String(validUTF8: [0xFF]) == nil)
        #expect(String(validUTF8: [0xEF, 0xBB, 0xBF, 0x61])?.utf8.count == 4, "the byte-order mark is kept")
    }
}
