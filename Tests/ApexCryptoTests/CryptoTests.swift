import ApexCrypto
import Foundation
import Testing

#if canImport(ApexSodium)
    import ApexSodium
#endif

/// Known answers for the on-device home of hashing, HMAC, AES-GCM, random bytes and wiping: published vectors
/// (RFC 7693, FIPS 180-2, RFC 4868, the GCM specification's test cases). They run on whichever path the platform
/// builds (CryptoKit on Apple platforms, libsodium here); the BLAKE2b, the project's own on both, is compared with
/// libsodium's byte for byte where libsodium is there.
@Suite("ApexCrypto: the on-device hashing, HMAC, AES-GCM, random bytes and wiping")
struct CryptoTests {
    @Test("BLAKE2b-512 gives RFC 7693's vector for \"abc\" and the published ones for \"\" and the fox")
    func blake2bPublishedVectors() {
        #expect(
            hex(Crypto.blake2b(Data("abc".utf8), length: 64))
                == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        #expect(
            hex(Crypto.blake2b(Data(), length: 64))
                == "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
                + "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce")
        #expect(
            hex(Crypto.blake2b(Data("The quick brown fox jumps over the lazy dog".utf8), length: 64))
                == "a8add4bdddfd93e4877d2746e62817b116364a1fa7bc148d95090bc7333b3673"
                + "f82401cf7aa2e4cb1ecd90296e3f14cb5413f8ed77be73045b13914cdcd6a918")
    }

    @Test("a shorter BLAKE2b digest is its own (the length is a parameter), not a prefix of the longer one")
    func blake2bShortDigests() {
        // The ledger's record names are 16-byte digests of service ‖ 0 ‖ group ‖ 0 ‖ key; values from an
        // independent implementation (Python's hashlib).
        let ledgerName = Crypto.blake2b(Data("vault\0\0token".utf8), length: 16)
        #expect(hex(ledgerName) == "108dcbba5ec6207dda73960f49e9153f")
        #expect(
            hex(Crypto.blake2b(Data((0..<200).map { UInt8($0) }), length: 32))
                == "63c3d97a9f8894d5e043a707b0fee7f7ec4c049a23bbf1079df20b4165f9e22d")
        #expect(
            Crypto.blake2b(Data("abc".utf8), length: 32)
                != Array(Crypto.blake2b(Data("abc".utf8), length: 64).prefix(32)))
    }

    #if canImport(ApexSodium)
        @Test("the Swift BLAKE2b is libsodium's crypto_generichash for every input length around the block edges")
        func blake2bIsLibsodiums() {
            var generator = SystemRandomNumberGenerator()
            for count in Array(0...300) + [1023, 1024, 1025, 4096, 65_537] {
                let data = Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
                for length in [16, 17, 32, 48, 63, 64] {
                    #expect(
                        Crypto.blake2b(data, length: length) == Sodium.genericHash(data, length: length),
                        "\(count) bytes, a \(length)-byte digest")
                }
            }
        }
    #endif

    @Test("SHA-256 of \"abc\" and of nothing are FIPS 180-2's")
    func sha256() {
        #expect(
            hex(Crypto.sha256(Data("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex(Crypto.sha256(Data()))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("HMAC-SHA-256 with a 32-byte key is RFC 4868's PRF-1 vector")
    func hmacSHA256() {
        #expect(Crypto.hmacSHA256KeyLength == 32)
        let mac = Crypto.hmacSHA256(Data("Hi There".utf8), key: Data(repeating: 0x0b, count: 32))
        #expect(hex(mac) == "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7")
    }

    @Test(
        "AES-256-GCM opens the GCM specification's test cases 14 and 16, and refuses a changed tag, AAD or a short input",
        .enabled(if: Crypto.isAES256GCMAvailable, "this machine's libsodium has no AES-256-GCM"))
    func aes256gcm() {
        // Test case 14: zero key, zero IV, one zero block, no AAD.
        let zero = open(
            sealed: bytes("cea7403d4d606b6e074ec5d3baf39d18" + "d0d1c8a799996bf0265b98b5d48ab919"), aad: [],
            nonce: [UInt8](repeating: 0, count: 12), key: [UInt8](repeating: 0, count: 32))
        #expect(zero == [UInt8](repeating: 0, count: 16))
        // Test case 16: 60 bytes with 20 bytes of AAD.
        let key = bytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = bytes("cafebabefacedbaddecaf888")
        let aad = bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let sealed = bytes(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e63"
                + "93ba7a0abcc9f662" + "76fc6ece0f4e1768cddf8853bb2d551b")
        let plain = open(sealed: sealed, aad: aad, nonce: nonce, key: key)
        #expect(
            plain.map(hex)
                == "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
                + "b16aedf5aa0de657ba637b39")
        var badTag = sealed
        badTag[badTag.count - 1] ^= 1
        #expect(open(sealed: badTag, aad: aad, nonce: nonce, key: key) == nil)
        #expect(open(sealed: sealed, aad: Array(aad.dropLast()), nonce: nonce, key: key) == nil)
        #expect(open(sealed: Array(sealed.prefix(15)), aad: aad, nonce: nonce, key: key) == nil)
    }

    @Test("random bytes are as many as asked, and two draws differ")
    func randomBytes() {
        #expect(Crypto.randomBytes(0).isEmpty)
        #expect(Crypto.randomBytes(1).count == 1)
        let first = Crypto.randomBytes(32)
        #expect(first.count == 32)
        #expect(first != Crypto.randomBytes(32))
    }

    @Test("wiping leaves zeros of the same length: arrays, Data and a pointer's bytes")
    func wiping() {
        var array: [UInt8] = [1, 2, 3, 4]
        Crypto.wipe(&array)
        #expect(array == [0, 0, 0, 0])
        var data = Data([9, 8, 7])
        Crypto.wipe(&data)
        #expect(data == Data([0, 0, 0]))
        var tail: [UInt8] = [5, 6, 7, 8]
        tail.withUnsafeMutableBytes { Crypto.wipe($0.baseAddress! + 2, count: 2) }
        #expect(tail == [5, 6, 0, 0])
        Crypto.wipe(nil, count: 4)
    }

    // MARK: Helpers

    private func open(sealed: [UInt8], aad: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: max(sealed.count - 16, 1))
        let written = out.withUnsafeMutableBufferPointer { out in
            aad.withUnsafeBufferPointer { aad in
                Crypto.aes256gcmDecrypt(
                    into: out.baseAddress!, sealed: sealed, count: sealed.count, associatedData: aad, nonce: nonce,
                    key: key)
            }
        }
        return written.map { Array(out.prefix($0)) }
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)!
        }
    }
}
