// The one home of the cryptography the on-device targets use (the migration's ledger, react-native-keychain's
// Conceal, react-native-sensitive-info's file names): CryptoKit on Apple platforms, libsodium (through ApexSodium)
// elsewhere, behind the same calls. BLAKE2b, which CryptoKit lacks, is the project's own Swift (BLAKE2b.swift) on
// every platform, tested against libsodium's.

#if canImport(CryptoKit)
    import CryptoKit
    import Foundation
#elseif canImport(ApexSodium)
    import ApexSodium
    import Foundation
#else
    #error("ApexCrypto needs CryptoKit (Apple platforms) or ApexSodium (libsodium)")
#endif

/// Hashing, HMAC, random bytes, wiping memory and AES-256-GCM opening, the same on every platform.
package enum Crypto {
    /// The length of an HMAC-SHA-256 key here: 32 bytes.
    package static let hmacSHA256KeyLength = 32

    /// HMAC-SHA-256 of `message` under a ``hmacSHA256KeyLength``-byte `key`: 32 bytes.
    package static func hmacSHA256(_ message: Data, key: Data) -> [UInt8] {
        precondition(key.count == hmacSHA256KeyLength)
        #if canImport(CryptoKit)
            return Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        #else
            return Sodium.hmacSHA256(message, key: key)
        #endif
    }

    /// SHA-256 of `data`: 32 bytes.
    package static func sha256(_ data: Data) -> [UInt8] {
        #if canImport(CryptoKit)
            return Array(SHA256.hash(data: data))
        #else
            return Sodium.sha256(data)
        #endif
    }

    /// BLAKE2b of `data` with no key, `length` bytes long (1 to 64): what libsodium's `crypto_generichash` makes.
    package static func blake2b(_ data: Data, length: Int) -> [UInt8] {
        BLAKE2b.hash(data, length: length)
    }

    /// `count` bytes from the system's cryptographically secure generator.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        #if canImport(CryptoKit)
            guard count > 0 else { return [] }
            // A fresh key's bytes are the system generator's (SecRandomCopyBytes); the key wipes its own copy.
            return SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
        #else
            return Sodium.randomBytes(count)
        #endif
    }

    /// Overwrites `bytes` with zeros, in a way the compiler does not remove.
    package static func wipe(_ bytes: inout [UInt8]) {
        let count = bytes.count
        bytes.withUnsafeMutableBytes { wipe($0.baseAddress, count: count) }
    }

    /// Overwrites `data` with zeros, in a way the compiler does not remove.
    package static func wipe(_ data: inout Data) {
        let count = data.count
        data.withUnsafeMutableBytes { wipe($0.baseAddress, count: count) }
    }

    /// Overwrites `count` bytes at `pointer` with zeros (`memset_s` on Apple platforms, `sodium_memzero`
    /// elsewhere: neither is removed by the compiler).
    package static func wipe(_ pointer: UnsafeMutableRawPointer?, count: Int) {
        guard let pointer, count > 0 else { return }
        #if canImport(CryptoKit)
            _ = memset_s(pointer, count, 0, count)
        #else
            Sodium.wipe(pointer, count: count)
        #endif
    }

    // MARK: AES-256-GCM (FacebookConceal)

    /// Whether this machine can open AES-256-GCM: always with CryptoKit; with libsodium, only with AES-NI or
    /// ARMv8 crypto instructions.
    package static var isAES256GCMAvailable: Bool {
        #if canImport(CryptoKit)
            return true
        #else
            return Sodium.isAES256GCMAvailable
        #endif
    }

    /// AES-256-GCM decryption of `count` bytes of `ciphertext ‖ tag(16)` at `sealed` into `out`, which has room for
    /// `count - 16` bytes, under a 32-byte `key` and a 12-byte `nonce`; the plaintext's length, or nil when the tag
    /// does not verify or the machine can't. CryptoKit returns the plaintext in a buffer of its own, which is
    /// copied into `out` and wiped; libsodium writes into `out` only.
    package static func aes256gcmDecrypt(
        into out: UnsafeMutablePointer<UInt8>, sealed: UnsafePointer<UInt8>, count: Int,
        associatedData: UnsafeBufferPointer<UInt8>, nonce: UnsafePointer<UInt8>, key: UnsafePointer<UInt8>
    ) -> Int? {
        guard count >= 16 else { return nil }
        #if canImport(CryptoKit)
            do {
                let box = try AES.GCM.SealedBox(
                    nonce: AES.GCM.Nonce(data: UnsafeBufferPointer(start: nonce, count: 12)),
                    ciphertext: UnsafeBufferPointer(start: sealed, count: count - 16),
                    tag: UnsafeBufferPointer(start: sealed + (count - 16), count: 16))
                let keyBytes = SymmetricKey(data: UnsafeBufferPointer(start: key, count: 32))
                var plain = try AES.GCM.open(box, using: keyBytes, authenticating: associatedData)
                defer { wipe(&plain) }
                guard plain.count == count - 16 else { return nil }
                plain.copyBytes(to: out, count: plain.count)
                return plain.count
            } catch {
                return nil
            }
        #else
            return Sodium.aes256gcmDecrypt(
                into: out, sealed: sealed, count: count, associatedData: associatedData, nonce: nonce, key: key)
        #endif
    }
}
