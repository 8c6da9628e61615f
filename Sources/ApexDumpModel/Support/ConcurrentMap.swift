import Dispatch
import Foundation

/// The results of `transform` for `0..<count`, in order, computed in contiguous chunks on the machine's cores:
/// mapping 100k items is pure work per item, so two cores take about half the time. Below `minimumChunk` items
/// per core it is a plain loop.
package func concurrentMap<T: Sendable>(count: Int, minimumChunk: Int = 2048, _ transform: @Sendable (Int) -> T) -> [T]
{
    precondition(minimumChunk >= 1, "minimumChunk must be at least 1")
    let chunks = min(ProcessInfo.processInfo.activeProcessorCount, count / minimumChunk)
    guard chunks > 1 else { return (0..<count).map(transform) }
    return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
        let out = ResultBuffer(buffer: buffer)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            // Each chunk initializes its own range of the buffer, and nothing reads it before all are done.
            for index in count * chunk / chunks..<count * (chunk + 1) / chunks {
                (out.buffer.baseAddress! + index).initialize(to: transform(index))
            }
        }
        initialized = count
    }
}

/// `body`'s results for consecutive ranges that together cover `0..<count` (about 512 indices each, at most
/// 64 ranges), in order, computed on the machine's cores: for output written in pieces and joined.
package func concurrentChunks<T: Sendable>(count: Int, _ body: @Sendable (Range<Int>) -> T) -> [T] {
    let chunks = max(1, min(64, count / 512))
    return concurrentMap(count: chunks, minimumChunk: 1) { chunk in
        body(count * chunk / chunks..<count * (chunk + 1) / chunks)
    }
}

extension Array where Element: Sendable {
    /// `map(transform)`, computed as ``concurrentMap(count:minimumChunk:_:)`` computes it.
    package func concurrentMap<T: Sendable>(_ transform: @Sendable (Element) -> T) -> [T] {
        ApexDumpModel.concurrentMap(count: count) { transform(self[$0]) }
    }
}

/// The uninitialized result buffer, shared by the chunks, each of which writes only its own range.
private struct ResultBuffer<T>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<T>
}
