import Foundation
import Testing

@testable import ApexDumps

/// ByteReader, the one bounds-checked way the parsers read bytes by offset: every read inside the window gives the
/// bytes there, every read outside it gives its ByteReadError (never a trap, never a byte from past the window).
@Suite struct ByteReaderTests {
    /// Sixteen bytes 0x10, 0x11, … 0x1F.
    static let bytes: [UInt8] = (0..<16).map { 0x10 + $0 }

    @Test("reads at an offset give the bytes there, in either byte order")
    func readsAtAnOffset() throws {
        try ByteReader.reading(Self.bytes) { reader throws(ByteReadError) in
            #expect(reader.count == 16 && reader.bounds == 0..<16 && reader.position == 0 && reader.remaining == 16)
            #expect(try reader.u8(at: 0) == 0x10)
            #expect(try reader.u8(at: 15) == 0x1F)
            #expect(try reader.u16(at: 1, .bigEndian) == 0x1112)
            #expect(try reader.u16(at: 1, .littleEndian) == 0x1211)
            #expect(try reader.u32(at: 12, .bigEndian) == 0x1C1D_1E1F)
            #expect(try reader.u32(at: 12, .littleEndian) == 0x1F1E_1D1C)
            #expect(try reader.u64(at: 8, .bigEndian) == 0x1819_1A1B_1C1D_1E1F)
            #expect(try reader.u64(at: 8, .littleEndian) == 0x1F1E_1D1C_1B1A_1918)
            #expect(try reader.uint(at: 13, width: 3) == 0x1D1E1F)
            #expect(try reader.uint(at: 13, width: 3, .littleEndian) == 0x1F1E1D)
            #expect(try reader.uint(at: 0, width: 1) == 0x10)
            #expect(try reader.uint(at: 8, width: 8) == 0x1819_1A1B_1C1D_1E1F)
            // Reads at an offset leave the cursor alone.
            #expect(reader.position == 0)
        }
    }

    @Test(
        "each read past the end, before the start or of a negative count is outOfBounds with its offset, count and bounds"
    )
    func outOfBoundsReads() throws {
        let bounds = 0..<16
        try ByteReader.reading(Self.bytes) { reader throws(ByteReadError) in
            func expectThrows(_ expected: ByteReadError, _ read: () throws -> Void) {
                do {
                    try read()
                    Issue.record("expected \(expected), the read succeeded")
                } catch {
                    #expect(error as? ByteReadError == expected)
                }
            }
            expectThrows(.outOfBounds(offset: 16, count: 1, bounds: bounds)) { _ = try reader.u8(at: 16) }
            expectThrows(.outOfBounds(offset: -1, count: 1, bounds: bounds)) { _ = try reader.u8(at: -1) }
            expectThrows(.outOfBounds(offset: Int.max, count: 1, bounds: bounds)) { _ = try reader.u8(at: Int.max) }
            expectThrows(.outOfBounds(offset: Int.min, count: 1, bounds: bounds)) { _ = try reader.u8(at: Int.min) }
            expectThrows(.outOfBounds(offset: 15, count: 2, bounds: bounds)) { _ = try reader.u16(at: 15, .bigEndian) }
            expectThrows(.outOfBounds(offset: 13, count: 4, bounds: bounds)) {
                _ = try reader.u32(at: 13, .littleEndian)
            }
            expectThrows(.outOfBounds(offset: 9, count: 8, bounds: bounds)) { _ = try reader.u64(at: 9, .bigEndian) }
            expectThrows(.outOfBounds(offset: -4, count: 8, bounds: bounds)) { _ = try reader.u64(at: -4, .bigEndian) }
            expectThrows(.outOfBounds(offset: 14, count: 3, bounds: bounds)) { _ = try reader.uint(at: 14, width: 3) }
            expectThrows(.outOfBounds(offset: Int.max - 2, count: 8, bounds: bounds)) {
                _ = try reader.uint(at: Int.max - 2, width: 8)
            }
            expectThrows(.outOfBounds(offset: 4, count: 13, bounds: bounds)) { _ = try reader.window(at: 4, count: 13) }
            expectThrows(.outOfBounds(offset: 4, count: -1, bounds: bounds)) { _ = try reader.window(at: 4, count: -1) }
            expectThrows(.outOfBounds(offset: 2, count: Int.max, bounds: bounds)) {
                _ = try reader.window(at: 2, count: Int.max)
            }
            expectThrows(.outOfBounds(offset: 17, count: 0, bounds: bounds)) { _ = try reader.window(at: 17, count: 0) }
            expectThrows(.unsupportedWidth(0)) { _ = try reader.uint(at: 0, width: 0) }
            expectThrows(.unsupportedWidth(9)) { _ = try reader.uint(at: 0, width: 9) }
            expectThrows(.unsupportedWidth(-1)) { _ = try reader.uint(at: 0, width: -1) }
        }
    }

    @Test("a window keeps the buffer's offsets and refuses the bytes around it")
    func windows() throws {
        try ByteReader.reading(Self.bytes) { reader throws(ByteReadError) in
            let window = try reader.window(4..<8)
            #expect(window.bounds == 4..<8 && window.position == 4 && window.count == 4 && window.remaining == 4)
            #expect(try window.u8(at: 4) == 0x14)
            #expect(try window.u32(at: 4, .bigEndian) == 0x1415_1617)
            #expect(window.data == Data([0x14, 0x15, 0x16, 0x17]))
            #expect(Array(window.unsafeBytes) == [0x14, 0x15, 0x16, 0x17])
            // Inside the buffer but outside the window.
            #expect(throws: ByteReadError.outOfBounds(offset: 3, count: 1, bounds: 4..<8)) { try window.u8(at: 3) }
            #expect(throws: ByteReadError.outOfBounds(offset: 8, count: 1, bounds: 4..<8)) { try window.u8(at: 8) }
            #expect(throws: ByteReadError.outOfBounds(offset: 6, count: 4, bounds: 4..<8)) {
                try window.u32(at: 6, .bigEndian)
            }
            #expect(throws: ByteReadError.outOfBounds(offset: 2, count: 4, bounds: 4..<8)) { try window.window(2..<6) }
            // An empty window at the end is a window.
            #expect(try reader.window(at: 16, count: 0).isAtEnd)
        }
    }

    @Test("reads at the cursor move it past what they read; a failed read leaves it where it was")
    func cursor() throws {
        try ByteReader.reading(Self.bytes) { reader throws(ByteReadError) in
            var reader = reader
            #expect(try reader.readU8() == 0x10)
            #expect(try reader.readU16(.bigEndian) == 0x1112)
            #expect(try reader.readU32(.littleEndian) == 0x1615_1413)
            #expect(reader.position == 7)
            #expect(try reader.readUInt(width: 1) == 0x17)
            let next = try reader.read(count: 3)
            #expect(next.bounds == 8..<11 && reader.position == 11 && reader.remaining == 5)
            try reader.skip(1)
            #expect(throws: ByteReadError.outOfBounds(offset: 12, count: 8, bounds: 0..<16)) {
                try reader.readU64(.bigEndian)
            }
            #expect(throws: ByteReadError.outOfBounds(offset: 12, count: 5, bounds: 0..<16)) {
                try reader.read(count: 5)
            }
            #expect(throws: ByteReadError.outOfBounds(offset: 12, count: 5, bounds: 0..<16)) { try reader.skip(5) }
            #expect(throws: ByteReadError.outOfBounds(offset: 12, count: -13, bounds: 0..<16)) { try reader.skip(-13) }
            #expect(throws: ByteReadError.unsupportedWidth(12)) { try reader.readUInt(width: 12) }
            #expect(reader.position == 12)
            #expect(try reader.readU32(.bigEndian) == 0x1C1D_1E1F)
            #expect(reader.isAtEnd && reader.remaining == 0)
            #expect(throws: ByteReadError.outOfBounds(offset: 16, count: 1, bounds: 0..<16)) { try reader.readU8() }
            #expect(throws: ByteReadError.outOfBounds(offset: 16, count: 2, bounds: 0..<16)) {
                try reader.readU16(.littleEndian)
            }
            #expect(reader.position == 16)
            try reader.seek(to: 0)
            #expect(reader.position == 0)
            #expect(throws: ByteReadError.outOfBounds(offset: 17, count: 0, bounds: 0..<16)) { try reader.seek(to: 17) }
            var window = try reader.window(4..<8)
            #expect(throws: ByteReadError.outOfBounds(offset: 3, count: 0, bounds: 4..<8)) { try window.seek(to: 3) }
            try window.seek(to: 8)
            #expect(window.isAtEnd)
        }
    }

    @Test("an empty buffer (no base address) refuses every read")
    func emptyBuffer() throws {
        try ByteReader.reading(Data()) { reader throws(ByteReadError) in
            var reader = reader
            #expect(reader.isAtEnd && reader.count == 0 && reader.data.isEmpty && reader.unsafeBytes.isEmpty)
            #expect(throws: ByteReadError.outOfBounds(offset: 0, count: 1, bounds: 0..<0)) { try reader.u8(at: 0) }
            #expect(throws: ByteReadError.outOfBounds(offset: 0, count: 4, bounds: 0..<0)) {
                try reader.readU32(.bigEndian)
            }
            #expect(throws: ByteReadError.outOfBounds(offset: 0, count: 1, bounds: 0..<0)) { try reader.read(count: 1) }
            #expect(try reader.read(count: 0).count == 0)
        }
    }

    @Test("reading(_:_:) passes the body's own error through, typed")
    func readingPassesErrorsThrough() {
        struct ParserError: Error, Equatable { let offset: Int }
        #expect(throws: ParserError(offset: 3)) {
            try ByteReader.reading([UInt8]([1, 2, 3])) { reader throws(ParserError) in
                do throws(ByteReadError) {
                    _ = try reader.u8(at: 3)
                } catch {
                    throw ParserError(offset: 3)
                }
            }
        }
    }

    @Test("seeded random reads: in range they give what an array gives, out of range their error, never a crash")
    func randomReads() throws {
        var generator = DumpTestRandom(seed: 0xB17E_5EAD)
        let bytes = (0..<64).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        try ByteReader.reading(bytes) { whole throws(ByteReadError) in
            for _ in 0..<20_000 {
                let lower = Int(generator.next() % 70) - 3
                let upper = lower + Int(generator.next() % 40)
                guard lower >= 0, upper <= bytes.count else {
                    #expect(throws: ByteReadError.self) { try whole.window(lower..<upper) }
                    continue
                }
                let window = try whole.window(lower..<upper)
                let edges = [Int.min, -1, Int.max, Int.max - 3]
                let offset =
                    generator.next() % 8 == 0 ? edges[Int(generator.next() % 4)] : Int(generator.next() % 72) - 4
                let width = Int(generator.next() % 10)
                let inside = width >= 1 && width <= 8 && offset >= lower && offset <= upper && width <= upper - offset
                let bigEndian = generator.next() % 2 == 0
                do throws(ByteReadError) {
                    let value = try window.uint(at: offset, width: width, bigEndian ? .bigEndian : .littleEndian)
                    #expect(inside)
                    let expected = bytes[offset..<offset + width]
                    let ordered = bigEndian ? Array(expected) : expected.reversed()
                    #expect(value == ordered.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                } catch {
                    #expect(!inside)
                    if width >= 1, width <= 8 {
                        #expect(error == .outOfBounds(offset: offset, count: width, bounds: lower..<upper))
                    } else {
                        #expect(error == .unsupportedWidth(width))
                    }
                }
                do throws(ByteReadError) {
                    let byte = try window.u8(at: offset)
                    #expect(offset >= lower && offset < upper && byte == bytes[offset])
                } catch {
                    #expect(!(offset >= lower && offset < upper))
                }
            }
        }
    }

    @Test("the error's text names offsets and counts only")
    func errorText() {
        #expect(
            ByteReadError.outOfBounds(offset: 30, count: 4, bounds: 8..<32).description
                == "a read of 4 bytes at offset 30, outside bytes 8..<32")
        #expect(
            ByteReadError.outOfBounds(offset: 32, count: 1, bounds: 8..<32).description
                == "a read of 1 byte at offset 32, outside bytes 8..<32")
        #expect(ByteReadError.unsupportedWidth(9).description == "an integer of 9 bytes (1 to 8 are read)")
    }
}
