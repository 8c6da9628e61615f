// BLAKE2b (RFC 7693), unkeyed, for the ledger's record names: CryptoKit has no BLAKE2b, and the names that
// existing stores hold are libsodium's crypto_generichash digests, so this makes exactly those bytes on every
// platform. Tests/ApexCryptoTests checks it against RFC 7693's vector, other published ones, and libsodium.

import Foundation

/// BLAKE2b with no key and a digest of 1 to 64 bytes, as RFC 7693 §3 defines it.
enum BLAKE2b {
    /// The initialisation vector (RFC 7693 §2.6): SHA-512's.
    private static let iv: [UInt64] = [
        0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
    ]

    /// The message schedule (RFC 7693 §2.7); rounds 10 and 11 use rows 0 and 1 again.
    private static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ]

    private static let blockBytes = 128

    /// The `length`-byte digest of `data` (RFC 7693 §3.3, no key).
    static func hash(_ data: Data, length: Int) -> [UInt8] {
        precondition((1...64).contains(length), "a BLAKE2b digest is 1 to 64 bytes")
        var state = iv
        // The parameter block's first word: digest length, key length 0, fanout 1, depth 1.
        state[0] ^= 0x0101_0000 ^ UInt64(length)
        data.withUnsafeBytes { bytes in
            var offset = 0
            var counter: (low: UInt64, high: UInt64) = (0, 0)
            // Every block but the last is compressed as it is; the last (possibly empty, then zero-padded) is final.
            while bytes.count - offset > blockBytes {
                add(blockBytes, to: &counter)
                compress(
                    &state, UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + blockBytes]), counter, last: false)
                offset += blockBytes
            }
            var block = [UInt8](repeating: 0, count: blockBytes)
            let rest = bytes.count - offset
            if rest > 0 {
                block.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
            }
            add(rest, to: &counter)
            block.withUnsafeBytes { compress(&state, $0, counter, last: true) }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(64)
        for word in state {
            for shift in stride(from: 0, to: 64, by: 8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return Array(digest.prefix(length))
    }

    /// The byte counter `t` (RFC 7693 §3.2), 128 bits.
    private static func add(_ count: Int, to counter: inout (low: UInt64, high: UInt64)) {
        let (low, overflow) = counter.low.addingReportingOverflow(UInt64(count))
        counter.low = low
        if overflow { counter.high &+= 1 }
    }

    /// The compression function F (RFC 7693 §3.2) over one 128-byte block.
    private static func compress(
        _ state: inout [UInt64], _ block: UnsafeRawBufferPointer, _ counter: (low: UInt64, high: UInt64), last: Bool
    ) {
        var m = [UInt64](repeating: 0, count: 16)
        for index in 0..<16 {
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(block[index * 8 + byte]) << UInt64(8 * byte) }
            m[index] = word
        }
        var v = state + iv
        v[12] ^= counter.low
        v[13] ^= counter.high
        if last { v[14] = ~v[14] }
        for round in 0..<12 {
            let s = sigma[round % 10]
            mix(&v, 0, 4, 8, 12, m[s[0]], m[s[1]])
            mix(&v, 1, 5, 9, 13, m[s[2]], m[s[3]])
            mix(&v, 2, 6, 10, 14, m[s[4]], m[s[5]])
            mix(&v, 3, 7, 11, 15, m[s[6]], m[s[7]])
            mix(&v, 0, 5, 10, 15, m[s[8]], m[s[9]])
            mix(&v, 1, 6, 11, 12, m[s[10]], m[s[11]])
            mix(&v, 2, 7, 8, 13, m[s[12]], m[s[13]])
            mix(&v, 3, 4, 9, 14, m[s[14]], m[s[15]])
        }
        for index in 0..<8 { state[index] ^= v[index] ^ v[index + 8] }
    }

    /// The mixing function G (RFC 7693 §3.1), rotations 32, 24, 16 and 63.
    private static func mix(_ v: inout [UInt64], _ a: Int, _ b: Int, _ c: Int, _ d: Int, _ x: UInt64, _ y: UInt64) {
        v[a] = v[a] &+ v[b] &+ x
        v[d] = rotateRight(v[d] ^ v[a], 32)
        v[c] = v[c] &+ v[d]
        v[b] = rotateRight(v[b] ^ v[c], 24)
        v[a] = v[a] &+ v[b] &+ y
        v[d] = rotateRight(v[d] ^ v[a], 16)
        v[c] = v[c] &+ v[d]
        v[b] = rotateRight(v[b] ^ v[c], 63)
    }

    private static func rotateRight(_ word: UInt64, _ count: UInt64) -> UInt64 {
        (word >> count) | (word << (64 - count))
    }
}
