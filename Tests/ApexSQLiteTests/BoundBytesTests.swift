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
}
