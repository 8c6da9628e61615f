import CSodium
import Foundation

/// Key bytes that are wiped (`sodium_memzero`) when no longer referenced. Never printed.
package final class SecretKey: CustomStringConvertible {
    package static let length = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    fileprivate var bytes: [UInt8]

    package init(bytes: [UInt8]) {
        precondition(bytes.count == Self.length)
        self.bytes = bytes
    }

    package static func random() -> SecretKey {
        Sodium.ready()
        var bytes = [UInt8](repeating: 0, count: length)
        randombytes_buf(&bytes, length)
        return SecretKey(bytes: bytes)
    }

    deinit { Sodium.wipe(&bytes) }

    package var description: String { "SecretKey(redacted)" }

    package func withBytes<T>(_ body: (UnsafePointer<UInt8>) throws -> T) rethrows -> T {
        try bytes.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }
}

@available(*, unavailable)
extension SecretKey: Sendable {}

/// The package's one home for libsodium: sealing (XChaCha20-Poly1305; AES-256-GCM for FacebookConceal), key
/// derivation, Argon2id, HMAC-SHA-256, BLAKE2b hashing, random bytes and wiping memory.
package enum Sodium {
    package static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    package static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    package static let saltLength = Int(crypto_pwhash_SALTBYTES)

    private static let initialised: Bool = sodium_init() >= 0

    package static func ready() {
        precondition(initialised, "libsodium failed to initialise")
    }

    package static func wipe(_ bytes: inout [UInt8]) {
        let count = bytes.count
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, count) }
    }

    package static func wipe(_ data: inout Data) {
        let count = data.count
        data.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, count) }
    }

    package static func randomBytes(_ count: Int) -> [UInt8] {
        ready()
        var out = [UInt8](repeating: 0, count: count)
        randombytes_buf(&out, count)
        return out
    }

    /// The length of what ``seal(_:key:associatedData:)`` makes of `count` bytes.
    package static func sealedCount(_ count: Int) -> Int { nonceLength + count + tagLength }

    /// nonce ‖ ciphertext ‖ tag, with a fresh random nonce.
    package static func seal(_ plaintext: Data, key: SecretKey, associatedData: [UInt8]) -> Data {
        var out = Data(count: sealedCount(plaintext.count))
        out.withUnsafeMutableBytes { out in
            plaintext.withUnsafeBytes { seal($0, into: out, key: key, associatedData: associatedData) }
        }
        return out
    }

    /// Seals `plaintext` into `out`, which holds exactly ``sealedCount(_:)`` bytes: the same bytes as
    /// ``seal(_:key:associatedData:)``, written in place (a write of the store seals into the bytes it binds).
    package static func seal(
        _ plaintext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer, key: SecretKey,
        associatedData: [UInt8]
    ) {
        ready()
        precondition(out.count == sealedCount(plaintext.count))
        let base = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // The nonce is drawn straight into its place at the front.
        randombytes_buf(base, nonceLength)
        var written: UInt64 = 0
        key.withBytes { keyBytes in
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                base + nonceLength, &written, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self),
                UInt64(plaintext.count), associatedData, UInt64(associatedData.count), nil, base, keyBytes)
        }
    }

    /// Opens what ``seal(_:key:associatedData:)`` made; nil when the key, the associated data or a byte differs.
    package static func open(_ sealed: Data, key: SecretKey, associatedData: [UInt8]) -> Data? {
        ready()
        guard sealed.count >= nonceLength + tagLength else { return nil }
        var out = Data(count: sealed.count - nonceLength - tagLength)
        var length: UInt64 = 0
        let rc = out.withUnsafeMutableBytes { outBuffer in
            sealed.withUnsafeBytes { input in
                let base = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return key.withBytes { keyBytes in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        outBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
                            ?? UnsafeMutablePointer(mutating: base),
                        &length, nil, base + nonceLength, UInt64(sealed.count - nonceLength), associatedData,
                        UInt64(associatedData.count), base, keyBytes)
                }
            }
        }
        guard rc == 0 else { return nil }
        return out
    }

    /// A subkey of `master` for one purpose (`crypto_kdf_derive_from_key`, context "ApxKstor").
    package static func deriveKey(from master: SecretKey, id: UInt64) -> SecretKey {
        ready()
        var sub = [UInt8](repeating: 0, count: SecretKey.length)
        master.withBytes { masterBytes in
            _ = crypto_kdf_derive_from_key(&sub, SecretKey.length, id, "ApxKstor", masterBytes)
        }
        return SecretKey(bytes: sub)
    }

    /// Argon2id parameters, kept in the store so that a later build opens it with the same ones.
    package struct PasswordHashParameters: Equatable, Sendable {
        package var opsLimit: UInt64
        package var memLimit: Int
        package init(opsLimit: UInt64, memLimit: Int) {
            self.opsLimit = opsLimit
            self.memLimit = memLimit
        }
        package static let interactive = PasswordHashParameters(
            opsLimit: UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE), memLimit: Int(crypto_pwhash_MEMLIMIT_INTERACTIVE))
    }

    /// A key from a passphrase with Argon2id; nil when libsodium can't (out of memory).
    package static func keyFromPassphrase(
        _ passphrase: [UInt8], salt: [UInt8], parameters: PasswordHashParameters
    ) -> SecretKey? {
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

    /// Wipes `count` bytes at `pointer` (`sodium_memzero`, which the compiler does not remove).
    package static func wipe(_ pointer: UnsafeMutableRawPointer?, count: Int) {
        guard let pointer, count > 0 else { return }
        sodium_memzero(pointer, count)
    }

    // MARK: HMAC and hashing

    package static let hmacSHA256KeyLength = Int(crypto_auth_hmacsha256_KEYBYTES)
    package static let hmacSHA256Length = Int(crypto_auth_hmacsha256_BYTES)

    /// HMAC-SHA-256 of `message` under a ``hmacSHA256KeyLength``-byte `key`.
    package static func hmacSHA256(_ message: Data, key: Data) -> [UInt8] {
        precondition(key.count == hmacSHA256KeyLength)
        ready()
        var mac = [UInt8](repeating: 0, count: hmacSHA256Length)
        message.withUnsafeBytes { bytes in
            key.withUnsafeBytes { keyBytes in
                _ = crypto_auth_hmacsha256(
                    &mac, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count),
                    keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return mac
    }

    /// SHA-256 (`crypto_hash_sha256`) of `data`: 32 bytes.
    package static func sha256(_ data: Data) -> [UInt8] {
        ready()
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        data.withUnsafeBytes { bytes in
            _ = crypto_hash_sha256(&out, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        }
        return out
    }

    /// BLAKE2b (`crypto_generichash`, no key) of `data`, `length` bytes long (16 to 64).
    package static func genericHash(_ data: Data, length: Int) -> [UInt8] {
        ready()
        var out = [UInt8](repeating: 0, count: length)
        data.withUnsafeBytes { bytes in
            _ = crypto_generichash(
                &out, out.count, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count), nil, 0)
        }
        return out
    }

    // MARK: AES-256-GCM (FacebookConceal)

    /// Whether libsodium can run AES-256-GCM on this machine (it needs AES-NI or ARMv8 crypto instructions).
    package static let isAES256GCMAvailable: Bool = initialised && crypto_aead_aes256gcm_is_available() == 1

    /// AES-256-GCM: `ciphertext ‖ tag(16)` of `plaintext` under a 32-byte `key` and a 12-byte `nonce`; nil when
    /// the machine has no AES-256-GCM or libsodium fails.
    package static func aes256gcmEncrypt(_ plaintext: Data, associatedData: Data, nonce: Data, key: Data) -> Data? {
        precondition(key.count == 32 && nonce.count == 12)
        guard isAES256GCMAvailable else { return nil }
        var sealed = [UInt8](repeating: 0, count: plaintext.count + 16)
        var sealedLength: UInt64 = 0
        let status = plaintext.withUnsafeBytes { message in
            associatedData.withUnsafeBytes { ad in
                nonce.withUnsafeBytes { nonceBytes in
                    key.withUnsafeBytes { keyBytes in
                        crypto_aead_aes256gcm_encrypt(
                            &sealed, &sealedLength,
                            message.bindMemory(to: UInt8.self).baseAddress, UInt64(plaintext.count),
                            ad.bindMemory(to: UInt8.self).baseAddress, UInt64(associatedData.count), nil,
                            nonceBytes.bindMemory(to: UInt8.self).baseAddress!,
                            keyBytes.bindMemory(to: UInt8.self).baseAddress!)
                    }
                }
            }
        }
        guard status == 0 else { return nil }
        return Data(sealed.prefix(Int(sealedLength)))
    }

    /// AES-256-GCM decryption of `count` bytes of `ciphertext ‖ tag` at `sealed` into `out`, which has room for
    /// `count - 16` bytes; the plaintext's length, or nil when the tag does not verify. Writes only into `out`
    /// (no copy of the plaintext is made).
    package static func aes256gcmDecrypt(
        into out: UnsafeMutablePointer<UInt8>, sealed: UnsafePointer<UInt8>, count: Int,
        associatedData: UnsafeBufferPointer<UInt8>, nonce: UnsafePointer<UInt8>, key: UnsafePointer<UInt8>
    ) -> Int? {
        guard isAES256GCMAvailable else { return nil }
        var written: UInt64 = 0
        let status = crypto_aead_aes256gcm_decrypt(
            out, &written, nil, sealed, UInt64(count), associatedData.baseAddress, UInt64(associatedData.count), nonce,
            key)
        guard status == 0 else { return nil }
        return Int(written)
    }
}
