import Foundation
import Testing

@testable import ApexSQLite

@Suite struct BoundBytesTests {
    @Test("bound bytes are kept whole and NUL-terminated until clear(), which wipes them in the chunk it keeps")
    func keptThenWiped() {
        var bound = BoundBytes()
        defer { bound.release() }
        let secret = Array("bound-secret-3f9a".utf8)
        let kept = secret.withUnsafeBytes { bound.keep($0) }
        let other = [UInt8](repeating: 0xAB, count: 40).withUnsafeBytes { bound.keep($0) }
        #expect(Array(UnsafeRawBufferPointer(start: kept, count: secret.count)) == secret)
        #expect(kept.load(fromByteOffset: secret.count, as: UInt8.self) == 0)
        #expect(other == kept + secret.count + 1, "one chunk, one after the other")

        bound.clear()
        // The chunk is kept for the next use, every byte that was bound in it zero.
        #expect(UnsafeRawBufferPointer(start: kept, count: secret.count + 1 + 41).allSatisfy { $0 == 0 })
        let next = [UInt8]([1, 2, 3]).withUnsafeBytes { bound.keep($0) }
        #expect(next == kept, "the kept chunk is reused from its start")
    }

    @Test(
        "reserved bytes are the caller's to fill, NUL-terminated, never shared with a later keep, and wiped by clear()")
    func reservedThenWiped() {
        var bound = BoundBytes()
        defer { bound.release() }
        let reserved = bound.reserve(24)
        #expect(reserved.count == 24)
        reserved.copyBytes(from: [UInt8](repeating: 0x5A, count: 24))
        #expect((reserved.baseAddress! + 24).load(as: UInt8.self) == 0)
        let after = [UInt8]([7, 7]).withUnsafeBytes { bound.keep($0) }
        #expect(after == UnsafeRawPointer(reserved.baseAddress! + 25), "the next bytes follow the terminator")
        #expect(reserved.allSatisfy { $0 == 0x5A }, "a later keep leaves the reserved bytes as filled")
        // Larger than what is left: a new chunk, the first one kept (and its bytes where they were) until clear().
        let large = bound.reserve(4096)
        #expect(large.count == 4096)
        #expect(reserved.allSatisfy { $0 == 0x5A })
        large.copyBytes(from: [UInt8](repeating: 0xA5, count: 4096))
        bound.clear()
        // The first chunk was wiped and freed; the current one is kept for the next use, wiped.
        #expect(UnsafeRawBufferPointer(start: large.baseAddress, count: 4097).allSatisfy { $0 == 0 })
        #expect(bound.reserve(8).baseAddress == large.baseAddress, "the kept chunk is reused from its start")
    }
}
