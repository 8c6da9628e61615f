import Foundation

#if canImport(CSodium)
    import CSodium
#endif

/// Facebook Conceal's `CryptoAlgoGcm` with a 256-bit key, as react-native-keychain's `FacebookConceal` cipher
/// uses it: `0x01 ‖ 0x02 ‖ IV(12) ‖ AES-256-GCM ciphertext ‖ tag(16)`, the AAD being the two header bytes
/// followed by the entity name.
///
/// AES-GCM comes from libsodium, which this target can only use when it depends on `CSodium`; without it the
/// samples leave the Conceal entries out (see ``isAvailable``).
enum Conceal {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether this build can write Conceal entries.
    static var isAvailable: Bool {
        #if canImport(CSodium)
            true
        #else
            false
        #endif
    }

    /// Encrypts `plaintext` for `entity` (e.g. `RN_KEYCHAIN:authuser`) with a 32-byte `key` and a 12-byte `iv`.
    static func encrypt(_ plaintext: Data, entity: String, key: Data, iv: Data) throws -> Data {
        precondition(key.count == 32 && iv.count == 12)
        let header = Data([0x01, 0x02])
        let associated = header + Data(entity.utf8)
        #if canImport(CSodium)
            guard sodium_init() >= 0, crypto_aead_aes256gcm_is_available() == 1 else {
                throw Failure(description: "AES-256-GCM is not available on this CPU (libsodium needs AES-NI)")
            }
            var sealed = [UInt8](repeating: 0, count: plaintext.count + 16)
            var sealedLength: UInt64 = 0
            let status = plaintext.withUnsafeBytes { message in
                associated.withUnsafeBytes { ad in
                    iv.withUnsafeBytes { nonce in
                        key.withUnsafeBytes { keyBytes in
                            crypto_aead_aes256gcm_encrypt(
                                &sealed, &sealedLength,
                                message.bindMemory(to: UInt8.self).baseAddress, UInt64(plaintext.count),
                                ad.bindMemory(to: UInt8.self).baseAddress, UInt64(associated.count), nil,
                                nonce.bindMemory(to: UInt8.self).baseAddress!,
                                keyBytes.bindMemory(to: UInt8.self).baseAddress!)
                        }
                    }
                }
            }
            guard status == 0 else { throw Failure(description: "AES-256-GCM encryption failed") }
            return header + iv + Data(sealed.prefix(Int(sealedLength)))
        #else
            throw Failure(description: "this build of dump-samples has no AES-GCM (it needs the CSodium module)")
        #endif
    }
}
