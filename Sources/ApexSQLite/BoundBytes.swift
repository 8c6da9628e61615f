/// The bytes of a statement's bound parameters, copied here and bound `SQLITE_STATIC`: SQLite's own copy
/// (`SQLITE_TRANSIENT`) would cost an allocation per parameter each time a statement runs. A chunk never moves
/// while something is bound from it: when it is full, the next one is taken, and the full one is kept until
/// ``clear()``, which wipes every byte that was bound and keeps the current chunk for the next use (unless it grew
/// large for a large value). Reached through a pointer the statement owns, so that binding a parameter is a copy
/// and no more.
struct BoundBytes {
    /// The chunk bound from now, and how much of it is taken.
    private var current = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var used = 0
    /// Full chunks, still bound from until ``clear()``.
    private var full: [UnsafeMutableRawBufferPointer] = []
    private static let smallestChunk = 1024
    /// The largest chunk kept after ``clear()``.
    private static let keptChunk = 64 << 10

    /// A copy of `bytes`, followed by a 0 byte (a text's terminator), valid until ``clear()`` or ``release()``.
    mutating func keep(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        let target = reserve(bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            target.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
        }
        return UnsafeRawPointer(target.baseAddress!)
    }

    /// `count` bytes for the caller to fill, followed by a 0 byte, valid as ``keep(_:)``'s copy is.
    mutating func reserve(_ count: Int) -> UnsafeMutableRawBufferPointer {
        let needed = count + 1
        if current.count - used < needed { takeChunk(needed) }
        let target = current.baseAddress! + used
        target.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
        used += needed
        return UnsafeMutableRawBufferPointer(start: target, count: count)
    }

    private mutating func takeChunk(_ needed: Int) {
        if current.baseAddress != nil { full.append(current) }
        current = .allocate(byteCount: max(Self.smallestChunk, 2 * current.count, needed), alignment: 16)
        used = 0
    }

    /// Wipes what was bound; keeps the current chunk unless it is large. Nothing may be bound from it any more.
    mutating func clear() {
        for chunk in full { Self.free(chunk, wiping: chunk.count) }
        full.removeAll()
        if current.count > Self.keptChunk {
            Self.free(current, wiping: used)
            current = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        } else if used > 0 {
            current.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: used)
        }
        used = 0
    }

    /// Wipes and frees every chunk (the statement is finalised).
    mutating func release() {
        clear()
        if current.baseAddress != nil { current.deallocate() }
        current = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    private static func free(_ chunk: UnsafeMutableRawBufferPointer, wiping count: Int) {
        chunk.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        chunk.deallocate()
    }
}
