import ApexNettle
import Testing

/// Nettle's primitives through the wrapper, each against a published vector or one computed by an independent
/// implementation: PBKDF2 by RFC 6070 and Python's `hashlib`, key wrap by RFC 3394, CBC by Python's
/// `cryptography`, GCM with an empty IV by AES-CTR from the counter block 00…01 and a GHASH written in Python
/// (checked against `cryptography`'s AESGCM with a 12-byte IV).
@Suite("Nettle: known answers")
struct NettleKnownAnswerTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static let password = Array("password".utf8)
    static let salt = Array("salt".utf8)

    @Test("PBKDF2-HMAC-SHA1 (RFC 6070) and PBKDF2-HMAC-SHA256 (hashlib)")
    func pbkdf2() {
        #expect(
            Nettle.pbkdf2SHA1(password: Self.password, salt: Self.salt, iterations: 1, length: 20)
                == Self.hex("0c60c80f961f0e71f3a9b524af6012062fe037a6"))
        #expect(
            Nettle.pbkdf2SHA1(password: Self.password, salt: Self.salt, iterations: 4096, length: 20)
                == Self.hex("4b007901b765489abead49d926f721d065a429c1"))
        #expect(
            Nettle.pbkdf2SHA256(password: Self.password, salt: Self.salt, iterations: 4096, length: 32)
                == Self.hex("c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"))
    }

    @Test("a backup's two-step derivation: PBKDF2-SHA1 over PBKDF2-SHA256 of the password (hashlib)")
    func backupChain() {
        let first = Nettle.pbkdf2SHA256(
            password: Array("sample-backup-password".utf8), salt: Array(0..<20), iterations: 1000, length: 32)
        let key = Nettle.pbkdf2SHA1(password: first, salt: Array(100..<120), iterations: 100, length: 32)
        #expect(key == Self.hex("03d991b5005f3db9c98a83d51d519d53ad5a62487bb5969f2125f4671cd3d695"))
    }

    @Test("AES-256 key wrap and unwrap (RFC 3394 §4.6); a wrong key fails the integrity check")
    func keyWrap() {
        let kek = Array(UInt8(0)..<32)
        let key = Self.hex("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F")
        let wrapped = Self.hex("28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43bfb988b9b7a02dd21")
        #expect(Nettle.aes256KeyWrap(kek: kek, key: key) == wrapped)
        #expect(Nettle.aes256KeyUnwrap(kek: kek, wrapped: wrapped) == key)
        var wrong = kek
        wrong[0] ^= 1
        #expect(Nettle.aes256KeyUnwrap(kek: wrong, wrapped: wrapped) == nil)
        #expect(Nettle.aes256KeyUnwrap(kek: kek, wrapped: Array(wrapped.dropLast())) == nil, "not whole blocks")
    }

    @Test("AES-256-CBC with a zero IV (cryptography)")
    func cbc() {
        let key = Array(UInt8(0)..<32)
        let plain = Array(UInt8(0)..<48)
        let sealed = Self.hex(
            "5a6e045708fb7196f02e553d02c3a692c77147ebd5121de8d0fae7762423b6bf78e2e0038b691b8bedfc32116811da59")
        let iv = [UInt8](repeating: 0, count: 16)
        #expect(Nettle.aes256CBCEncrypt(key: key, iv: iv, data: plain) == sealed)
        #expect(Nettle.aes256CBCDecrypt(key: key, iv: iv, data: sealed) == plain)
        #expect(Nettle.aes256CBCDecrypt(key: key, iv: iv, data: Array(sealed.dropLast())) == nil)
    }

    @Test("AES-256-GCM with an empty IV (J0 = 0) as Apple's keychain items; a changed byte fails the tag")
    func gcmEmptyIV() {
        let key = Array(UInt8(32)..<64)
        let plain = Self.hex("7b22736563726574223a2267636d2d7a65726f2d69762d73616d706c65227d0000000000")
        let sealed = Self.hex("2ebc8e8de18b21774e933ab9e82a9f8d865c8e74fd29492aa934942e039d72606c347706")
        let tag = Self.hex("933eb3b24150aa9c8bb0e09e488e4c52")
        let encrypted = Nettle.aes256GCMEncrypt(key: key, iv: [], plaintext: plain)
        #expect(encrypted.ciphertext == sealed && encrypted.tag == tag)
        #expect(Nettle.aes256GCMDecrypt(key: key, iv: [], ciphertext: sealed, tag: tag) == plain)
        var changed = sealed
        changed[3] ^= 0x80
        #expect(Nettle.aes256GCMDecrypt(key: key, iv: [], ciphertext: changed, tag: tag) == nil)
        // A 12-byte zero nonce is another IV (J0 = 0⁹⁶‖1): it does not open the item.
        #expect(
            Nettle.aes256GCMDecrypt(key: key, iv: [UInt8](repeating: 0, count: 12), ciphertext: sealed, tag: tag) == nil
        )
    }
}
