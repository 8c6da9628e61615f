import ApexCrypto
import ApexDumpModel
import ApexMigration
import Foundation

/// Bytes that hold a secret: wiped when released. Written only by the code that creates them, before they are
/// shared (a keyring's keys are then only read, from every thread that decrypts).
final class SecretBytes: @unchecked Sendable {
    private(set) var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    init(wiping data: inout Data) {
        bytes = [UInt8](data)
        Crypto.wipe(&data)
    }

    deinit {
        Crypto.wipe(&bytes)
    }
}

/// The Conceal keys of the dumps' `crypto.KEY_256.xml` files, or why there is none.
final class ConcealKeyring: Sendable {
    /// The 32-byte keys, in dump order.
    let keys: [SecretBytes]
    /// Why there is no key, when there is none.
    let missingReason: String

    /// Reads every Conceal key file among `dumps` (``isKeyFile(_:)``).
    /// - Throws: ``ImportError`` when the `cipher_key` of a file named `crypto.KEY_256.xml` is not a Base64 32-byte
    ///   key.
    init(dumps: [Dump]) throws(ImportError) {
        var keys: [SecretBytes] = []
        var files = 0
        for dump in dumps where Self.isKeyFile(dump) {
            guard case .preferences(let entries) = dump.content else { continue }
            files += 1
            for entry in entries where entry.name == "cipher_key" {
                guard case .string(let text) = entry.value, var data = base64IgnoringWhitespace(text),
                    data.count == Conceal.keyLength
                else {
                    throw ImportError(
                        path: dump.path,
                        "cipher_key is not a Base64-encoded 32-byte key, so it is not Facebook Conceal's KEY_256 key")
                }
                keys.append(SecretBytes(wiping: &data))
            }
        }
        self.keys = keys
        missingReason =
            files == 0
            ? "decrypting FacebookConceal needs shared_prefs/crypto.KEY_256.xml, which was not given"
            : "the crypto.KEY_256.xml given holds no cipher_key"
    }
}

extension ConcealKeyring {
    /// Whether `dump` is Facebook Conceal's key file: a preferences file named `crypto.KEY_256.xml`, or under
    /// another name one whose entries are only Conceal's (`cipher_key`, and `mac_key` if any) with a `cipher_key`
    /// that is a Base64 32-byte key.
    static func isKeyFile(_ dump: Dump) -> Bool {
        guard case .preferences(let entries) = dump.content else { return false }
        if dump.fileName == ReactNativeKeychainImporter.concealKeyFileName { return true }
        guard entries.allSatisfy({ $0.name == "cipher_key" || $0.name == "mac_key" }) else { return false }
        return entries.contains { entry in
            guard entry.name == "cipher_key", case .string(let text) = entry.value,
                var data = base64IgnoringWhitespace(text)
            else { return false }
            defer { Crypto.wipe(&data) }
            return data.count == Conceal.keyLength
        }
    }
}

/// The bytes of `text` as Base64 with the white space that Android's `Base64.DEFAULT` and XML indentation add
/// removed (strict Base64 otherwise, as `Data(base64Encoded:)` reads it); nil when it is not Base64.
func base64IgnoringWhitespace(_ text: String) -> Data? {
    // Base64 is ASCII: drop ASCII white space byte by byte, and leave other text to the full Unicode rule.
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
        switch byte {
        case 0x09...0x0D, 0x20: continue
        case 0x80...:
            let stripped = text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) }
            return Data(base64Encoded: String(String.UnicodeScalarView(stripped)))
        default: bytes.append(byte)
        }
    }
    return Data(base64Encoded: Data(bytes))
}

/// Facebook Conceal's AES-256-GCM format as react-native-keychain used it (Conceal 1.1.3, `KEY_256`):
/// `0x01` (version) ‖ `0x02` (cipher id) ‖ IV (12) ‖ ciphertext ‖ tag (16); AAD = the two header bytes ‖ entity.
enum Conceal {
    static let keyLength = 32
    static let ivLength = 12
    static let tagLength = 16
    static let header: [UInt8] = [0x01, 0x02]

    /// Whether libsodium can run AES-256-GCM on this machine (it needs AES-NI or ARMv8 crypto instructions).
    static let isAvailable: Bool = Crypto.isAES256GCMAvailable

    /// Which value of a service an entry holds.
    enum Field: String {
        case user, pass
    }

    /// The entity spellings: react-native-keychain's own, and the 9.0.0–9.2.2 Kotlin port's (with a space).
    enum Spelling: CaseIterable {
        case plain, spaced

        /// The additional data of a blob: the header, then the entity (`RN_KEYCHAIN:<service>user`, or with a
        /// space before `user` / `pass`).
        func associatedData(service: String, field: Field) -> [UInt8] {
            var aad = Conceal.header
            aad.reserveCapacity(header.count + 18 + service.utf8.count)
            aad.append(contentsOf: "RN_KEYCHAIN:".utf8)
            aad.append(contentsOf: service.utf8)
            if self == .spaced { aad.append(UInt8(ascii: " ")) }
            aad.append(contentsOf: field.rawValue.utf8)
            return aad
        }
    }

    /// Why a blob is not one of Conceal's, or nil; `what` names it (`username entry`).
    static func formatProblem(_ blob: [UInt8], what: @autoclosure () -> String = "value") -> String? {
        guard blob.count >= header.count + ivLength + tagLength else {
            return "the FacebookConceal \(what()) is too short to be a Conceal ciphertext"
        }
        guard blob.starts(with: header) else {
            return "the FacebookConceal \(what()) does not start with Conceal's KEY_256 header (01 02)"
        }
        return nil
    }

    /// The plaintext, when one of the keys and one of the spellings authenticates the blob.
    static func open(_ blob: [UInt8], keys: [SecretBytes], service: String, field: Field) -> (SecretBytes, Spelling)? {
        for key in keys {
            for spelling in Spelling.allCases {
                if let plain = open(blob, key: key.bytes, aad: spelling.associatedData(service: service, field: field))
                {
                    return (plain, spelling)
                }
            }
        }
        return nil
    }

    /// AES-256-GCM decryption of `IV ‖ ciphertext ‖ tag` (after the header), or nil when the tag does not verify.
    /// The parts are read through a ``ByteReader``: the header, the IV, and the rest (ciphertext and tag).
    private static func open(_ blob: [UInt8], key: [UInt8], aad: [UInt8]) -> SecretBytes? {
        precondition(isAvailable && key.count == keyLength && formatProblem(blob) == nil)
        return ByteReader.reading(blob) { blob -> SecretBytes? in
            var parts = blob
            guard (try? parts.skip(header.count)) != nil, let nonce = try? parts.read(count: ivLength),
                let sealed = try? parts.read(count: parts.remaining), sealed.count >= tagLength,
                let noncePointer = nonce.unsafeBytes.baseAddress, let sealedPointer = sealed.unsafeBytes.baseAddress
            else { return nil }
            let plainLength = sealed.count - tagLength
            let plain = SecretBytes([UInt8](repeating: 0, count: max(plainLength, 1)))
            // The blob's bytes are `UInt8`s: its memory is bound to the type the C call takes.
            let written = aad.withUnsafeBufferPointer { aad in
                key.withUnsafeBufferPointer { key in
                    plain.withMutableBytes { out in
                        Crypto.aes256gcmDecrypt(
                            into: out, sealed: sealedPointer.assumingMemoryBound(to: UInt8.self), count: sealed.count,
                            associatedData: aad, nonce: noncePointer.assumingMemoryBound(to: UInt8.self),
                            key: key.baseAddress!)
                    }
                }
            }
            guard let written, written == plainLength else { return nil }
            plain.truncate(to: plainLength)
            return plain
        }
    }
}

extension SecretBytes {
    /// Runs `body` on the bytes' storage.
    func withMutableBytes<R>(_ body: (UnsafeMutablePointer<UInt8>) -> R) -> R {
        bytes.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }

    /// Keeps the first `count` bytes (the buffer of an empty plaintext has one spare byte).
    func truncate(to count: Int) {
        let extra = bytes.count - count
        guard extra > 0 else { return }
        withMutableBytes { Crypto.wipe($0 + count, count: extra) }
        bytes.removeLast(extra)
    }
}
