import Foundation

#if canImport(ApexSodium)
    import ApexSodium
#endif

/// Facebook Conceal's `CryptoAlgoGcm` with a 256-bit key, as react-native-keychain's `FacebookConceal` cipher
/// uses it: `0x01 ‖ 0x02 ‖ IV(12) ‖ AES-256-GCM ciphertext ‖ tag(16)`, the AAD being the two header bytes
/// followed by the entity name.
///
/// AES-GCM comes from libsodium, which this target can only use when it depends on `ApexSodium`; without it the
/// samples leave the Conceal entries out (see ``isAvailable``).
enum Conceal {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether this build can write Conceal entries.
    static var isAvailable: Bool {
        #if canImport(ApexSodium)
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
        #if canImport(ApexSodium)
            guard Sodium.isAES256GCMAvailable else {
                throw Failure(description: "AES-256-GCM is not available on this CPU (libsodium needs AES-NI)")
            }
            guard let sealed = Sodium.aes256gcmEncrypt(plaintext, associatedData: associated, nonce: iv, key: key)
            else {
                throw Failure(description: "AES-256-GCM encryption failed")
            }
            return header + iv + sealed
        #else
            throw Failure(description: "this build of dump-samples has no AES-GCM (it needs the ApexSodium module)")
        #endif
    }
}
