import CNettle

/// The one home for Nettle: the primitives that open an encrypted iOS backup (PBKDF2 with HMAC-SHA1 and
/// HMAC-SHA256, RFC 3394 AES key unwrap, AES-256-CBC, AES-256-GCM with any IV length, the empty one included),
/// and their inverses, which the sample writer uses. Every function is Nettle's; none is written here. Keys and
/// outputs are byte arrays that the caller wipes when done; the contexts that held a key are wiped here.
public enum Nettle {
    /// The AES block size, in bytes.
    public static let blockSize = 16
    /// A GCM tag's size, in bytes.
    public static let tagSize = 16

    /// PBKDF2 with HMAC-SHA256 (RFC 8018): `length` bytes.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        precondition(iterations > 0 && length > 0)
        var out = [UInt8](repeating: 0, count: length)
        nettle_pbkdf2_hmac_sha256(password.count, password, UInt32(iterations), salt.count, salt, length, &out)
        return out
    }

    /// PBKDF2 with HMAC-SHA1 (RFC 8018): `length` bytes.
    public static func pbkdf2SHA1(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        precondition(iterations > 0 && length > 0)
        var out = [UInt8](repeating: 0, count: length)
        nettle_pbkdf2_hmac_sha1(password.count, password, UInt32(iterations), salt.count, salt, length, &out)
        return out
    }

    /// The key `wrapped` holds, unwrapped under the 32-byte `kek` (RFC 3394, the default IV); nil when the
    /// integrity check fails (the wrong key) or `wrapped` is not 8 bytes longer than a whole number of 8-byte
    /// blocks (at least 24 bytes).
    public static func aes256KeyUnwrap(kek: [UInt8], wrapped: [UInt8]) -> [UInt8]? {
        guard kek.count == 32, wrapped.count >= 24, wrapped.count % 8 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: wrapped.count - 8)
        guard apex_aes256_key_unwrap(kek, out.count, &out, wrapped) == 1 else {
            wipe(&out)
            return nil
        }
        return out
    }

    /// `key` wrapped under the 32-byte `kek` (RFC 3394, the default IV): 8 bytes longer than `key`, whose length
    /// is a multiple of 8, at least 16.
    public static func aes256KeyWrap(kek: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(kek.count == 32 && key.count >= 16 && key.count % 8 == 0)
        var out = [UInt8](repeating: 0, count: key.count + 8)
        apex_aes256_key_wrap(kek, out.count, &out, key)
        return out
    }

    /// `data` decrypted with AES-256-CBC under `key` and the 16-byte `iv`, padding left on; nil when `data` is not
    /// a whole number of blocks or the key or IV has the wrong size.
    public static func aes256CBCDecrypt(key: [UInt8], iv: [UInt8], data: [UInt8]) -> [UInt8]? {
        guard key.count == 32, iv.count == blockSize, data.count % blockSize == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: data.count)
        if !data.isEmpty { apex_aes256_cbc(0, key, iv, data.count, &out, data) }
        return out
    }

    /// `data`, a whole number of blocks, encrypted with AES-256-CBC under `key` and the 16-byte `iv`.
    public static func aes256CBCEncrypt(key: [UInt8], iv: [UInt8], data: [UInt8]) -> [UInt8] {
        precondition(key.count == 32 && iv.count == blockSize && data.count % blockSize == 0)
        var out = [UInt8](repeating: 0, count: data.count)
        if !data.isEmpty { apex_aes256_cbc(1, key, iv, data.count, &out, data) }
        return out
    }

    /// `ciphertext` decrypted with AES-256-GCM under `key` and `iv` (any length; empty as Apple's keychain items
    /// use it), authenticated with `tag` (16 bytes) over `aad` and the ciphertext; nil when the tag does not
    /// match, in which case nothing decrypted is returned.
    public static func aes256GCMDecrypt(
        key: [UInt8], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8], aad: [UInt8] = []
    ) -> [UInt8]? {
        guard key.count == 32, tag.count == tagSize else { return nil }
        var out = [UInt8](repeating: 0, count: ciphertext.count)
        var computed = [UInt8](repeating: 0, count: tagSize)
        apex_aes256_gcm(0, key, iv.count, iv, aad.count, aad, ciphertext.count, &out, ciphertext, &computed)
        guard apex_nettle_equal(computed, tag, tagSize) == 1 else {
            wipe(&out)
            return nil
        }
        return out
    }

    /// `plaintext` encrypted with AES-256-GCM under `key` and `iv` (any length, empty included), and its tag.
    public static func aes256GCMEncrypt(
        key: [UInt8], iv: [UInt8], plaintext: [UInt8], aad: [UInt8] = []
    ) -> (ciphertext: [UInt8], tag: [UInt8]) {
        precondition(key.count == 32)
        var out = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagSize)
        apex_aes256_gcm(1, key, iv.count, iv, aad.count, aad, plaintext.count, &out, plaintext, &tag)
        return (out, tag)
    }

    /// Overwrites `bytes` with zeros, in a way the compiler does not remove.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { apex_nettle_wipe(base, buffer.count) }
        }
    }
}
