// Support/: ByteReader (this file) is the one way a parser reads bytes by offset, in this module and in the
// importers: every read is checked against a window in release builds too, and a read outside it is a
// ByteReadError, never a trap and never a read past the buffer.

import Foundation

/// Why a ``ByteReader`` read failed. It holds offsets and counts, never a byte of the input, so a parser may put
/// it in its own error's text.
package enum ByteReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `count` bytes at `offset` are not all inside the reader's window `bounds` (a negative count, or an offset
    /// before the window, included).
    case outOfBounds(offset: Int, count: Int, bounds: Range<Int>)
    /// An integer of `width` bytes was asked for; the reader reads widths 1 to 8.
    case unsupportedWidth(Int)

    package var description: String {
        switch self {
        case .outOfBounds(let offset, let count, let bounds):
            "a read of \(count) byte\(count == 1 ? "" : "s") at offset \(offset), outside bytes \(bounds.lowerBound)..<\(bounds.upperBound)"
        case .unsupportedWidth(let width):
            "an integer of \(width) bytes (1 to 8 are read)"
        }
    }
}

/// The order of a fixed-width integer's bytes.
package enum ByteOrder: Sendable {
    /// Most significant byte first (plists, SQLite, DER lengths).
    case bigEndian
    /// Least significant byte first (protobuf's fixed32 and fixed64, keychain blob headers).
    case littleEndian
}

/// A window of bytes that a parser reads by offset, with every read checked against the window.
///
/// `UnsafeRawBufferPointer`'s subscripts and loads check their bounds in debug builds only; a parser that computes
/// an offset from its input and reads it that way reads past the buffer in a release build when the offset is
/// wrong. A `ByteReader` checks each read, in every build, and throws ``ByteReadError`` instead: a parser maps it
/// to its own error. The reads are inlined and a check is a few compares: the binary plist parser runs about 3%
/// more instructions than it did on unchecked reads (`apex-keychain-bench readers --bplist-only` times it).
///
/// A reader is a window `bounds` over a buffer, with a cursor `position` inside it. Offsets are always the
/// buffer's (a window cut from another keeps the offsets of the whole file, so errors name file offsets). Two ways
/// to read:
/// - at an offset, leaving the cursor alone: ``u8(at:)``, ``uint(at:width:_:)``, ``u16(at:_:)``, ``u32(at:_:)``,
///   ``u64(at:_:)``, and ``window(_:)`` / ``window(at:count:)`` for a sub-window;
/// - at the cursor, moving it past what was read: ``readU8()``, ``readUInt(width:_:)``, ``readU16(_:)``,
///   ``readU32(_:)``, ``readU64(_:)``, ``read(count:)`` for a sub-window, ``skip(_:)`` and ``seek(to:)``.
///
/// A window's bytes as a whole (to copy them, decode them as text, hash them or hand them to C) are
/// ``unsafeBytes``; index them only through a reader.
///
/// A reader borrows its buffer: it must not outlive the `withUnsafeBytes` call (or the allocation) it was made
/// in. ``reading(_:_:)`` makes one over `Data` or `[UInt8]` for the length of a closure.
package struct ByteReader {
    /// The whole buffer; offsets are into it.
    private let buffer: UnsafeRawBufferPointer
    /// The offsets this reader may read.
    package let bounds: Range<Int>
    /// The offset the cursor reads next; from `bounds.lowerBound` to `bounds.upperBound`.
    package private(set) var position: Int

    /// A reader of all of `buffer`, its cursor at offset 0.
    package init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
        bounds = 0..<buffer.count
        position = 0
    }

    private init(buffer: UnsafeRawBufferPointer, bounds: Range<Int>) {
        self.buffer = buffer
        self.bounds = bounds
        position = bounds.lowerBound
    }

    /// Runs `body` with a reader of `bytes` (for example `Data` or `[UInt8]`); the reader must not escape it.
    package static func reading<Bytes: ContiguousBytes, Value, Failure: Error>(
        _ bytes: Bytes, _ body: (ByteReader) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(Failure) -> Value in try body(ByteReader(raw)) }
        }
        return try result.get()
    }

    // MARK: The window

    /// How many bytes the window holds.
    package var count: Int { bounds.count }

    /// How many bytes are left from the cursor to the window's end.
    package var remaining: Int { bounds.upperBound - position }

    /// Whether the cursor is at the window's end.
    package var isAtEnd: Bool { position >= bounds.upperBound }

    /// The window's bytes, for work on them as a whole: copying, decoding as text, iterating, handing to C.
    /// Reading one of them by an offset goes through the reader instead.
    package var unsafeBytes: UnsafeRawBufferPointer {
        // The bounds were checked against the buffer when the window was cut.
        UnsafeRawBufferPointer(rebasing: buffer[bounds])
    }

    /// A copy of the window's bytes.
    package var data: Data { Data(unsafeBytes) }

    /// Throws unless the `count` bytes at `offset` are inside the window.
    @inline(__always)
    private func check(_ offset: Int, _ count: Int) throws(ByteReadError) {
        // `offset <= upperBound` first, so that `upperBound - offset` can't overflow.
        guard offset >= bounds.lowerBound, offset <= bounds.upperBound, count >= 0, count <= bounds.upperBound - offset
        else { throw .outOfBounds(offset: offset, count: count, bounds: bounds) }
    }

    // MARK: Reads at an offset

    /// The byte at `offset`.
    @inline(__always)
    package func u8(at offset: Int) throws(ByteReadError) -> UInt8 {
        guard offset >= bounds.lowerBound, offset < bounds.upperBound else {
            throw .outOfBounds(offset: offset, count: 1, bounds: bounds)
        }
        return buffer.load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The unsigned integer of `width` bytes (1 to 8) at `offset`.
    @inline(__always)
    package func uint(at offset: Int, width: Int, _ order: ByteOrder = .bigEndian) throws(ByteReadError) -> UInt64 {
        guard width >= 1, width <= 8 else { throw .unsupportedWidth(width) }
        try check(offset, width)
        // One byte (a small plist's references and offsets) needs no loop.
        if width == 1 { return UInt64(buffer.load(fromByteOffset: offset, as: UInt8.self)) }
        var value: UInt64 = 0
        switch order {
        case .bigEndian:
            for index in offset..<(offset + width) {
                value = value << 8 | UInt64(buffer.load(fromByteOffset: index, as: UInt8.self))
            }
        case .littleEndian:
            for index in (offset..<(offset + width)).reversed() {
                value = value << 8 | UInt64(buffer.load(fromByteOffset: index, as: UInt8.self))
            }
        }
        return value
    }

    /// The 16-bit integer at `offset`.
    package func u16(at offset: Int, _ order: ByteOrder) throws(ByteReadError) -> UInt16 {
        try fixed(at: offset, order)
    }

    /// The 32-bit integer at `offset`.
    package func u32(at offset: Int, _ order: ByteOrder) throws(ByteReadError) -> UInt32 {
        try fixed(at: offset, order)
    }

    /// The 64-bit integer at `offset`.
    package func u64(at offset: Int, _ order: ByteOrder) throws(ByteReadError) -> UInt64 {
        try fixed(at: offset, order)
    }

    @inline(__always)
    private func fixed<Value: FixedWidthInteger>(at offset: Int, _ order: ByteOrder) throws(ByteReadError) -> Value {
        try check(offset, MemoryLayout<Value>.size)
        let raw = buffer.loadUnaligned(fromByteOffset: offset, as: Value.self)
        return order == .bigEndian ? Value(bigEndian: raw) : Value(littleEndian: raw)
    }

    /// The `count` bytes at `offset` as a reader of their own (offsets stay the buffer's), its cursor at `offset`.
    @inline(__always)
    package func window(at offset: Int, count: Int) throws(ByteReadError) -> ByteReader {
        try check(offset, count)
        return ByteReader(buffer: buffer, bounds: offset..<(offset + count))
    }

    /// The bytes at the offsets `range` as a reader of their own, its cursor at the range's start.
    package func window(_ range: Range<Int>) throws(ByteReadError) -> ByteReader {
        try window(at: range.lowerBound, count: range.count)
    }

    // MARK: Reads at the cursor

    /// The byte at the cursor; the cursor moves past it.
    @inline(__always)
    package mutating func readU8() throws(ByteReadError) -> UInt8 {
        let byte = try u8(at: position)
        position += 1
        return byte
    }

    /// The unsigned integer of `width` bytes (1 to 8) at the cursor; the cursor moves past it.
    package mutating func readUInt(width: Int, _ order: ByteOrder = .bigEndian) throws(ByteReadError) -> UInt64 {
        let value = try uint(at: position, width: width, order)
        position += width
        return value
    }

    /// The 16-bit integer at the cursor; the cursor moves past it.
    package mutating func readU16(_ order: ByteOrder) throws(ByteReadError) -> UInt16 {
        let value = try u16(at: position, order)
        position += 2
        return value
    }

    /// The 32-bit integer at the cursor; the cursor moves past it.
    package mutating func readU32(_ order: ByteOrder) throws(ByteReadError) -> UInt32 {
        let value = try u32(at: position, order)
        position += 4
        return value
    }

    /// The 64-bit integer at the cursor; the cursor moves past it.
    package mutating func readU64(_ order: ByteOrder) throws(ByteReadError) -> UInt64 {
        let value = try u64(at: position, order)
        position += 8
        return value
    }

    /// The next `count` bytes as a reader of their own; the cursor moves past them.
    @inline(__always)
    package mutating func read(count: Int) throws(ByteReadError) -> ByteReader {
        let window = try window(at: position, count: count)
        position += count
        return window
    }

    /// Moves the cursor `count` bytes on.
    package mutating func skip(_ count: Int) throws(ByteReadError) {
        try check(position, count)
        position += count
    }

    /// Moves the cursor to `offset`, anywhere from the window's start to its end.
    package mutating func seek(to offset: Int) throws(ByteReadError) {
        try check(offset, 0)
        position = offset
    }
}
