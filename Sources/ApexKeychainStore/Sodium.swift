import CSodium
import Foundation

/// Key bytes that are wiped (`sodium_memzero`) when no longer referenced. Never printed.
final class SecretKey: CustomStringConvertible {
    static let length = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    fileprivate var bytes: [UInt8]

    init(bytes: [UInt8]) {
        precondition(bytes.count == Self.length)
        self.bytes = bytes
    }

    static func random() -> SecretKey {
        Sodium.ready()
        var bytes = [UInt8](repeating: 0, count: length)
        randombytes_buf(&bytes, length)
        return SecretKey(bytes: bytes)
    }

    deinit { Sodium.wipe(&bytes) }

    var description: String { "SecretKey(redacted)" }

    func withBytes<T>(_ body: (UnsafePointer<UInt8>) throws -> T) rethrows -> T {
        try bytes.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }
}

@available(*, unavailable)
extension SecretKey: Sendable {}

/// The libsodium calls the store uses: XChaCha20-Poly1305 AEAD, key derivation, Argon2id, random bytes.
enum Sodium {
    static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    static let saltLength = Int(crypto_pwhash_SALTBYTES)

    private static let initialised: Bool = sodium_init() >= 0

    static func ready() {
        precondition(initialised, "libsodium failed to initialise")
    }

    static func wipe(_ bytes: inout [UInt8]) {
        let count = bytes.count
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, count) }
    }

    static func wipe(_ data: inout Data) {
        let count = data.count
        data.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, count) }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        ready()
        var out = [UInt8](repeating: 0, count: count)
        randombytes_buf(&out, count)
        return out
    }

    /// nonce ‖ ciphertext ‖ tag, with a fresh random nonce.
    static func seal(_ plaintext: Data, key: SecretKey, associatedData: [UInt8]) -> Data {
        ready()
        let nonce = randomBytes(nonceLength)
        var out = Data(count: nonceLength + plaintext.count + tagLength)
        out.withUnsafeMutableBytes { outBuffer in
            let base = outBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            nonce.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: nonceLength) }
            var written: UInt64 = 0
            plaintext.withUnsafeBytes { message in
                key.withBytes { keyBytes in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        base + nonceLength, &written,
                        message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                        associatedData, UInt64(associatedData.count), nil, base, keyBytes)
                }
            }
        }
        return out
    }

    /// Opens what ``seal(_:key:associatedData:)`` made; nil when the key, the associated data or a byte differs.
    static func open(_ sealed: Data, key: SecretKey, associatedData: [UInt8]) -> Data? {
        ready()
        guard sealed.count >= nonceLength + tagLength else { return nil }
        var out = Data(count: sealed.count - nonceLength - tagLength)
        var length: UInt64 = 0
        let rc = out.withUnsafeMutableBytes { outBuffer in
            sealed.withUnsafeBytes { input in
                let base = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return key.withBytes { keyBytes in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        outBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafeMutablePointer(mutating: base),
                        &length, nil, base + nonceLength, UInt64(sealed.count - nonceLength), associatedData,
                        UInt64(associatedData.count), base, keyBytes)
                }
            }
        }
        guard rc == 0 else { return nil }
        return out
    }

    /// A subkey of `master` for one purpose (`crypto_kdf_derive_from_key`, context "ApxKstor").
    static func deriveKey(from master: SecretKey, id: UInt64) -> SecretKey {
        ready()
        var sub = [UInt8](repeating: 0, count: SecretKey.length)
        master.withBytes { masterBytes in
            _ = crypto_kdf_derive_from_key(&sub, SecretKey.length, id, "ApxKstor", masterBytes)
        }
        return SecretKey(bytes: sub)
    }

    /// Argon2id parameters, kept in the store so that a later build opens it with the same ones.
    struct PasswordHashParameters: Equatable {
        var opsLimit: UInt64
        var memLimit: Int
        static let interactive = PasswordHashParameters(
            opsLimit: UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE), memLimit: Int(crypto_pwhash_MEMLIMIT_INTERACTIVE))
    }

    /// A key from a passphrase with Argon2id; nil when libsodium can't (out of memory).
    static func keyFromPassphrase(_ passphrase: [UInt8], salt: [UInt8], parameters: PasswordHashParameters) -> SecretKey? {
        ready()
        var out = [UInt8](repeating: 0, count: SecretKey.length)
        let rc = passphrase.withUnsafeBufferPointer { pass in
            pass.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(pass.count, 1)) { chars in
                crypto_pwhash(
                    &out, UInt64(out.count), chars, UInt64(pass.count), salt, parameters.opsLimit,
                    parameters.memLimit, crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard rc == 0 else { return nil }
        return SecretKey(bytes: out)
    }
}
