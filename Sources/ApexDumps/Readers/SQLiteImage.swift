import Foundation

/// A SQLite database file's bytes in memory, as ``KeychainSQLiteReader`` hands them to SQLite's in-memory VFS:
/// one allocation, never moved while a connection reads it, freed with the image.
final class DatabaseImage {
    /// The allocation; its first ``count`` bytes are the database.
    private(set) var bytes: UnsafeMutableRawBufferPointer
    /// The database's size in bytes.
    var count: Int

    /// An image of `count` bytes, zero-filled.
    init(count: Int) {
        bytes = Self.allocate(count)
        self.count = count
    }

    deinit { bytes.deallocate() }

    /// Makes the image `count` bytes long: kept bytes are kept, new bytes are zero.
    func resize(to count: Int) {
        guard count > bytes.count else {
            // Bytes past a shrunken end are zeroed again when the image grows back over them.
            if count > self.count {
                (bytes.baseAddress! + self.count).initializeMemory(as: UInt8.self, repeating: 0, count: count - self.count)
            }
            self.count = count
            return
        }
        let grown = Self.allocate(count)
        grown.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: self.count)
        bytes.deallocate()
        bytes = grown
        self.count = count
    }

    private static func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        // At least a byte, so that there is always an address to hand over.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return buffer
    }
}

/// A SQLite write-ahead log (`-wal` file), applied to a database image the way SQLite's recovery reads it, so that
/// an image opened without the WAL (SQLite's in-memory VFS has none) holds every committed transaction.
///
/// The file is a 32-byte header (magic `0x377f0682` or `0x377f0683`, format version 3007000, page size, checkpoint
/// sequence, two salts, and a checksum of the first 24 bytes) and frames of a 24-byte header (page number, the
/// database size in pages for a commit frame or 0, the two salts, and a running checksum) followed by a page.
/// All integers are big-endian; the checksums add the data as 32-bit words, big-endian when the magic's low bit is
/// set, little-endian when not. A frame is valid when its salts are the header's and its checksum continues the
/// previous one's; the log ends at the first frame that is not. The transactions are the valid frames up to the
/// last commit frame; frames after it (a transaction not committed) are left out, and so is a log whose header is
/// not valid, as SQLite leaves them out.
enum WriteAheadLog {
    private static let headerSize = 32
    private static let frameHeaderSize = 24
    private static let version: UInt32 = 3_007_000

    /// Applies the committed frames of `wal` to `image`, and marks the image as a rollback-journal database
    /// (header bytes 18 and 19 from 2 to 1), which is what SQLite's in-memory VFS can open.
    ///
    /// - Throws: ``DumpError/Kind/malformed`` naming `path` when the log's header is valid but of another format
    ///   version or another page size than the database's, or when its transactions make a database larger than
    ///   ``DumpLimits/maxFileBytes``.
    static func apply(_ wal: UnsafeRawBufferPointer, to image: DatabaseImage, path: String) throws(DumpError) {
        defer { markRollbackJournal(image) }
        guard wal.count >= headerSize else { return }
        let magic = word(wal, 0)
        let pageSize = Int(word(wal, 8))
        guard magic & 0xFFFF_FFFE == 0x377F_0682, pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0
        else { return }
        let bigEndian = magic & 1 == 1
        var checksum = Self.checksum(wal, 0, 24, bigEndian: bigEndian, from: (0, 0))
        guard checksum == (word(wal, 24), word(wal, 28)) else { return }
        guard word(wal, 4) == version else {
            throw DumpError(.malformed, path: path, "its -wal file is of a format version SQLite does not know")
        }
        if image.count >= 18 {
            let stored = Int(image.bytes[16]) << 8 | Int(image.bytes[17])
            let databasePageSize = stored == 1 ? 65536 : stored
            guard databasePageSize == pageSize else {
                throw DumpError(
                    .malformed, path: path,
                    "its -wal file's pages are \(pageSize) bytes and the database's \(databasePageSize): the -wal file belongs to another database, or one of them is damaged")
            }
        }

        // The frames up to the last commit frame, and the database's size in pages after it.
        var committed: [(page: Int, offset: Int)] = []
        var pending: [(page: Int, offset: Int)] = []
        var pageCount: Int?
        let frameSize = frameHeaderSize + pageSize
        var offset = headerSize
        while offset + frameSize <= wal.count {
            let page = Int(word(wal, offset))
            guard page != 0, word(wal, offset + 8) == word(wal, 16), word(wal, offset + 12) == word(wal, 20) else { break }
            checksum = Self.checksum(wal, offset, 8, bigEndian: bigEndian, from: checksum)
            checksum = Self.checksum(wal, offset + frameHeaderSize, pageSize, bigEndian: bigEndian, from: checksum)
            guard checksum == (word(wal, offset + 16), word(wal, offset + 20)) else { break }
            pending.append((page, offset + frameHeaderSize))
            let size = Int(word(wal, offset + 4))
            if size != 0 {
                committed += pending
                pending.removeAll(keepingCapacity: true)
                pageCount = size
            }
            offset += frameSize
        }
        guard let pageCount else { return }

        let (bytes, overflow) = pageCount.multipliedReportingOverflow(by: pageSize)
        guard !overflow, bytes <= DumpLimits.maxFileBytes else {
            throw DumpError(
                .malformed, path: path,
                "its -wal file makes the database larger than the \(DumpLimits.maxFileBytes >> 20) MiB limit for a dump")
        }
        image.resize(to: bytes)
        // In log order, so that the last committed copy of a page wins; pages past the end are cut off.
        for frame in committed where frame.page <= pageCount {
            let target = image.bytes.baseAddress! + (frame.page - 1) * pageSize
            target.copyMemory(from: wal.baseAddress! + frame.offset, byteCount: pageSize)
        }
    }

    /// The database header's write and read versions (bytes 18 and 19) say 2 in a WAL database; an image opened
    /// in memory must say 1, or SQLite refuses to open it (it would look for the log on disk).
    private static func markRollbackJournal(_ image: DatabaseImage) {
        guard image.count >= 20 else { return }
        if image.bytes[18] == 2 { image.bytes[18] = 1 }
        if image.bytes[19] == 2 { image.bytes[19] = 1 }
    }

    /// The big-endian 32-bit integer at `offset`.
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// SQLite's WAL checksum of `count` bytes (a multiple of 8) at `offset`, continuing `sums`.
    private static func checksum(
        _ bytes: UnsafeRawBufferPointer, _ offset: Int, _ count: Int, bigEndian: Bool, from sums: (UInt32, UInt32)
    ) -> (UInt32, UInt32) {
        var (first, second) = sums
        var position = offset
        let end = offset + count
        while position < end {
            var a = bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self)
            var b = bytes.loadUnaligned(fromByteOffset: position + 4, as: UInt32.self)
            if bigEndian {
                a = UInt32(bigEndian: a)
                b = UInt32(bigEndian: b)
            } else {
                a = UInt32(littleEndian: a)
                b = UInt32(littleEndian: b)
            }
            first = first &+ a &+ second
            second = second &+ b &+ first
            position += 8
        }
        return (first, second)
    }
}
