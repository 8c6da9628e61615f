import ApexSodium
import Foundation
import Testing

/// Known-answer tests of `ApexSodium`: each primitive against published vectors, or, where none fits the
/// wrapper's parameters, against values computed with an independent implementation (Python 3.11's `hashlib`
/// and `hmac`, and the `cryptography` 48 package from PyPI, backed by OpenSSL). None of the expected values comes
/// from ApexSodium or from libsodium.
@Suite("ApexSodium's primitives give the published answers")
struct SodiumKnownAnswerTests {
    // MARK: Sealing: XChaCha20-Poly1305

    /// draft-irtf-cfrg-xchacha-03, appendix A.3.1 (AEAD_XChaCha20_Poly1305). The same ciphertext and tag were
    /// computed with HChaCha20 written in Python from section 2.2 of the draft (checked against its vector 2.2.1)
    /// and `cryptography`'s ChaCha20Poly1305 under the subkey, with the nonce's last 8 bytes after 4 zero bytes.
    enum DraftVector {
        static var key: SecretKey { SecretKey(bytes: Array(0x80...0x9f)) }
        static let nonce: [UInt8] = Array(0x40...0x57)
        static let associatedData = Array(hex("50515253c0c1c2c3c4c5c6c7"))
        static let plaintext = Data(
            "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
                .utf8)
        static let ciphertext = hex(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39"
                + "ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3"
                + "fff921f9664c97637da9768812f615c68b13b52e")
        static let tag = hex("c0875924c1c7987947deafd8780acf49")
        /// What `Sodium.seal` lays out: nonce ‖ ciphertext ‖ tag.
        static var sealed: Data { Data(nonce + ciphertext + tag) }
    }

    @Test("open gives the draft's plaintext for its nonce, ciphertext and tag, and refuses any byte changed")
    func openKnownAnswer() throws {
        let opened = try #require(
            Sodium.open(DraftVector.sealed, key: DraftVector.key, associatedData: DraftVector.associatedData))
        #expect(opened == DraftVector.plaintext)
        // A flipped byte in each part (nonce, ciphertext, tag), or other associated data, opens nothing.
        for index in [0, Sodium.nonceLength + 5, DraftVector.sealed.count - 1] {
            var damaged = DraftVector.sealed
            damaged[index] ^= 0x01
            #expect(Sodium.open(damaged, key: DraftVector.key, associatedData: DraftVector.associatedData) == nil)
        }
        #expect(Sodium.open(DraftVector.sealed, key: DraftVector.key, associatedData: [0x50]) == nil)
        #expect(
            Sodium.open(
                DraftVector.sealed, key: SecretKey(bytes: Array(0x00...0x1f)),
                associatedData: DraftVector.associatedData) == nil)
    }

    /// `seal` draws its nonce itself, so its output can't be a fixed vector. `open` is the draft's algorithm
    /// (above), and for a given key, nonce and associated data exactly one ciphertext and tag open to a plaintext:
    /// a seal that opens is the draft's encryption under the nonce it chose.
    @Test(
        "seal lays out nonce ‖ ciphertext ‖ tag that open (the draft's algorithm) accepts, with a fresh nonce each time"
    )
    func sealOpensWithKnownAnswerOpen() {
        let first = Sodium.seal(DraftVector.plaintext, key: DraftVector.key, associatedData: DraftVector.associatedData)
        let second = Sodium.seal(
            DraftVector.plaintext, key: DraftVector.key, associatedData: DraftVector.associatedData)
        #expect(first.count == Sodium.nonceLength + DraftVector.plaintext.count + Sodium.tagLength)
        #expect(first.count == Sodium.sealedCount(DraftVector.plaintext.count))
        #expect(first.prefix(Sodium.nonceLength) != second.prefix(Sodium.nonceLength))
        for sealed in [first, second] {
            #expect(
                Sodium.open(sealed, key: DraftVector.key, associatedData: DraftVector.associatedData)
                    == DraftVector.plaintext)
        }
        var inPlace = Data(count: Sodium.sealedCount(DraftVector.plaintext.count))
        inPlace.withUnsafeMutableBytes { out in
            DraftVector.plaintext.withUnsafeBytes {
                Sodium.seal($0, into: out, key: DraftVector.key, associatedData: DraftVector.associatedData)
            }
        }
        #expect(
            Sodium.open(inPlace, key: DraftVector.key, associatedData: DraftVector.associatedData)
                == DraftVector.plaintext)
    }

    // MARK: Key derivation

    /// `crypto_kdf_derive_from_key` is BLAKE2b keyed with the master key, salt = LE64(id) ‖ 8 zero bytes,
    /// personalisation = the context "ApxKstor" ‖ 8 zero bytes, over no message (libsodium's documentation of
    /// crypto_kdf). Expected values: Python `hashlib.blake2b(b"", digest_size=32, key=master, salt=…, person=…)`.
    @Test(
        "deriveKey is BLAKE2b of the master key, the subkey id and the context 'ApxKstor'",
        arguments: [
            (UInt64(0), "93f1cef0afa982a5111208d98effb88d9d789469052c404fc36907a98e2fd836"),
            (1, "1db77d6391051362004398add4c1f28cc8eb94ac7fbf2dda7c7570332a58c775"),
            (0x0102_0304_0506_0708, "7e6de6f0093d67f252d0e85ddfac967a4b8569916c447d952075e1058e15c748"),
        ])
    func deriveKeyKnownAnswer(id: UInt64, expected: String) {
        let master = SecretKey(bytes: Array(0...31))
        let derived = Sodium.deriveKey(from: master, id: id)
        #expect(
            derived.withBytes { Array(UnsafeBufferPointer(start: $0, count: SecretKey.length)) } == Array(hex(expected))
        )
    }

    /// Argon2id v1.3 with one lane, as `crypto_pwhash` runs it (t = opsLimit, m = memLimit / 1024 KiB), small
    /// enough to be quick. Expected values: `cryptography`'s `Argon2id(salt=bytes(range(16)), length=32,
    /// iterations=t, lanes=1, memory_cost=m)` (OpenSSL's Argon2, not libsodium's).
    @Test(
        "keyFromPassphrase is Argon2id v1.3 with one lane",
        arguments: [
            (UInt64(2), 65536, "2df47ede6358ed17a9976d4fcedb897a10036d432a4acef17d263bfc98bd20ac"),
            (1, 8192, "d17ea6341ca93da6079ea2f64dc4aa31dd1aaf9caa67fb42ac4afd0714706f26"),
        ])
    func argon2idKnownAnswer(opsLimit: UInt64, memLimit: Int, expected: String) throws {
        let key = try #require(
            Sodium.keyFromPassphrase(
                Array("correct horse battery staple".utf8), salt: Array(0...15),
                parameters: Sodium.PasswordHashParameters(opsLimit: opsLimit, memLimit: memLimit)))
        #expect(
            key.withBytes { Array(UnsafeBufferPointer(start: $0, count: SecretKey.length)) } == Array(hex(expected)))
    }

    // MARK: HMAC and hashing

    /// RFC 4231, test cases 1 to 5 (case 5 compares the first 128 bits, as the RFC truncates it). ApexSodium's
    /// HMAC-SHA-256 takes a 32-byte key; HMAC pads a key shorter than the 64-byte block with zeros, so the RFC's
    /// shorter keys padded to 32 bytes give the RFC's MACs (checked with Python `hmac`). Cases 6 and 7 have
    /// 131-byte keys, which HMAC hashes first: they have no 32-byte equivalent.
    @Test(
        "hmacSHA256 gives RFC 4231's MACs",
        arguments: [
            (
                hex(String(repeating: "0b", count: 20)), Data("Hi There".utf8),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
            ),
            (
                Data("Jefe".utf8), Data("what do ya want for nothing?".utf8),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
            ),
            (
                hex(String(repeating: "aa", count: 20)), hex(String(repeating: "dd", count: 50)),
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
            ),
            (
                Data(1...25), hex(String(repeating: "cd", count: 50)),
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
            ),
            (
                hex(String(repeating: "0c", count: 20)), Data("Test With Truncation".utf8),
                "a3b6167473100ee06e0c796c2955552b"
            ),
        ])
    func hmacKnownAnswer(key: Data, message: Data, expected: String) {
        let padded = key + Data(count: Sodium.hmacSHA256KeyLength - key.count)
        let mac = Sodium.hmacSHA256(message, key: padded)
        #expect(mac.count == Sodium.hmacSHA256Length)
        #expect(Array(mac.prefix(expected.count / 2)) == Array(hex(expected)))
    }

    /// FIPS 180-2, appendix B (SHA-256 of "abc", of the 448-bit message, and of one million 'a'), and of the
    /// empty message (Python `hashlib.sha256(b"")`).
    @Test(
        "sha256 gives FIPS 180-2's digests",
        arguments: [
            (Data(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (Data("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                Data(repeating: UInt8(ascii: "a"), count: 1_000_000),
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
            ),
        ])
    func sha256KnownAnswer(message: Data, expected: String) {
        #expect(Sodium.sha256(message) == Array(hex(expected)))
    }

    /// RFC 7693, appendix A (BLAKE2b-512 of "abc"), and BLAKE2b-256 of the empty message (Python
    /// `hashlib.blake2b(b"", digest_size=32)`).
    @Test("genericHash is unkeyed BLAKE2b of the length asked for")
    func blake2bKnownAnswer() {
        #expect(
            Sodium.genericHash(Data("abc".utf8), length: 64)
                == Array(
                    hex(
                        "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc95"
                            + "18d38aa8dbf1925ab92386edd4009923")))
        #expect(
            Sodium.genericHash(Data(), length: 32)
                == Array(hex("0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")))
    }

    // MARK: AES-256-GCM (FacebookConceal)

    /// McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)", test cases 14, 15 and 16 (AES-256 with a
    /// 96-bit IV): ciphertext ‖ tag. The same bytes come from `cryptography`'s `AESGCM`.
    static let gcmCases: [(key: String, nonce: String, plaintext: String, associatedData: String, sealed: String)] = {
        let key = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
        let nonce = "cafebabefacedbaddecaf888"
        let plaintext =
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
            + "b16aedf5aa0de657ba637b391aafd255"
        let ciphertext =
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838"
            + "c5f61e6393ba7a0abcc9f662"
        return [
            (
                String(repeating: "00", count: 32), String(repeating: "00", count: 12),
                String(repeating: "00", count: 16),
                "", "cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919"
            ),
            (key, nonce, plaintext, "", ciphertext + "898015adb094dac5d93471bdec1a502270e3cc6c"),
            (
                key, nonce, String(plaintext.prefix(120)), "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                String(ciphertext.prefix(120)) + "76fc6ece0f4e1768cddf8853bb2d551b"
            ),
        ]
    }()

    /// libsodium runs AES-256-GCM only on a CPU with AES-NI and CLMUL (x86-64) or the ARMv8 crypto extensions;
    /// elsewhere the wrapper returns nil and these tests are skipped, saying so.
    @Test(
        "aes256gcm encrypts and decrypts McGrew and Viega's test cases 14 to 16",
        .enabled(if: Sodium.isAES256GCMAvailable, "libsodium has no AES-256-GCM on this CPU (no AES-NI/ARMv8 crypto)"),
        arguments: 0..<3)
    func aesGCMKnownAnswer(index: Int) throws {
        let vector = Self.gcmCases[index]
        let (key, nonce, plaintext, ad, sealed) =
            (hex(vector.key), hex(vector.nonce), hex(vector.plaintext), hex(vector.associatedData), hex(vector.sealed))
        #expect(try #require(Sodium.aes256gcmEncrypt(plaintext, associatedData: ad, nonce: nonce, key: key)) == sealed)

        var out = [UInt8](repeating: 0, count: plaintext.count)
        func decrypt(_ input: Data) -> Int? {
            input.withUnsafeBytes { sealedBytes in
                Array(ad).withUnsafeBufferPointer { adBytes in
                    nonce.withUnsafeBytes { nonceBytes in
                        key.withUnsafeBytes { keyBytes in
                            out.withUnsafeMutableBufferPointer { outBytes in
                                Sodium.aes256gcmDecrypt(
                                    into: outBytes.baseAddress!,
                                    sealed: sealedBytes.bindMemory(to: UInt8.self).baseAddress!, count: input.count,
                                    associatedData: adBytes, nonce: nonceBytes.bindMemory(to: UInt8.self).baseAddress!,
                                    key: keyBytes.bindMemory(to: UInt8.self).baseAddress!)
                            }
                        }
                    }
                }
            }
        }
        #expect(decrypt(sealed) == plaintext.count)
        #expect(Data(out) == plaintext)
        var damaged = sealed
        damaged[damaged.count - 1] ^= 0x01
        #expect(decrypt(damaged) == nil)
    }
}

/// The bytes of a hexadecimal string (the vectors' notation).
func hex(_ text: String) -> Data {
    precondition(text.count.isMultiple(of: 2))
    var bytes = Data(capacity: text.count / 2)
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
