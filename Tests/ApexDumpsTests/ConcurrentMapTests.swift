import ApexDumps
import Foundation
import Testing

/// `concurrentMap`: the same results as `map`, in order, whatever the chunking.
@Suite("Concurrent map")
struct ConcurrentMapTests {
    @Test("every index is mapped once, in order, across chunk boundaries", arguments: [0, 1, 7, 2047, 4096, 10_001])
    func sameAsMap(count: Int) {
        let mapped = concurrentMap(count: count, minimumChunk: 3) { "item \($0)" }
        #expect(mapped == (0..<count).map { "item \($0)" })
    }

    @Test("an array's concurrent map equals its map")
    func arrays() {
        let values = (0..<20_000).map { String($0 * 7) }
        #expect(values.concurrentMap { $0 + "!" } == values.map { $0 + "!" })
    }
}
