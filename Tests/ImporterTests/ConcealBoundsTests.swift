import ApexDumps
import ApexMigration
import ApexTestSupport
import Foundation
import ReactNativeKeychainImporter
import Testing

/// FacebookConceal blobs are read through ByteReader (header, IV, then ciphertext and tag): a blob one byte too
/// short for its parts is refused by its length, one exactly long enough reaches the decryption (and fails its
/// tag), and neither reads past the blob.
@Suite struct ConcealBoundsTests {
    static let prefs = "/data/data/com.example.app/shared_prefs/"

    /// The value of service `s` whose username and password entries are both `blob`, with a made-up key.
    static func value(_ blob: [UInt8]) throws -> SourceValue {
        let text = Data(blob).base64EncodedString()
        let dumps = [
            preferencesDump(
                Self.prefs + "RN_KEYCHAIN.xml", [("s:u", text), ("s:p", text), ("s:c", "FacebookConceal")]),
            preferencesDump(
                Self.prefs + "crypto.KEY_256.xml",
                [("cipher_key", Data(repeating: 0x5A, count: 32).base64EncodedString())]),
        ]
        let items = try ReactNativeKeychainImporter().importItems(
            from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        return try #require(items.first { $0.source.service == "s" }).value
    }

    @Test func blobAtItsMinimumLength() throws {
        // 01 02 ‖ IV (12) ‖ tag (16): an empty plaintext.
        let minimum: [UInt8] = [0x01, 0x02] + [UInt8](repeating: 0x11, count: 12 + 16)
        #expect(
            try Self.value(Array(minimum.dropLast()))
                == .sealed("the FacebookConceal username entry is too short to be a Conceal ciphertext"))
        #expect(
            try Self.value([]) == .sealed("the FacebookConceal username entry is too short to be a Conceal ciphertext"))
        #expect(
            try Self.value([0x01, 0x03] + minimum.dropFirst(2))
                == .sealed("the FacebookConceal username entry does not start with Conceal's KEY_256 header (01 02)"))
        let reached = try Self.value(minimum)
        guard case .sealed(let reason) = reached else {
            Issue.record("a made-up tag verified: \(reached)")
            return
        }
        #expect(
            reason.hasPrefix("FacebookConceal: the GCM tag does not verify") || reason.contains("no AES-256-GCM"),
            "\(reason)")
    }
}
