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

    /// The database's bytes (the first ``count``), to read; nil only if ``count`` outgrew the allocation, which
    /// ``resize(to:)`` prevents.
    var reader: ByteReader? { try? ByteReader(UnsafeRawBufferPointer(bytes)).window(at: 0, count: count) }

    /// Writes `source` over the database's bytes at `offset`; it must lie inside the database.
    func write(_ source: UnsafeRawBufferPointer, at offset: Int) {
        precondition(offset >= 0 && offset <= count && source.count <= count - offset, "a write outside the image")
        guard let base = source.baseAddress else { return }
        (bytes.baseAddress! + offset).copyMemory(from: base, byteCount: source.count)
    }

    /// Sets the byte at `offset`, which must lie inside the database.
    func set(_ byte: UInt8, at offset: Int) {
        precondition(offset >= 0 && offset < count, "a write outside the image")
        bytes.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
    }

    /// Makes the image `count` bytes long: kept bytes are kept, new bytes are zero.
    func resize(to count: Int) {
        guard count > bytes.count else {
            // Bytes past a shrunken end are zeroed again when the image grows back over them.
            if count > self.count {
                (bytes.baseAddress! + self.count).initializeMemory(
                    as: UInt8.self, repeating: 0, count: count - self.count)
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
    /// - Throws: `DumpError/Kind/malformed` naming `path` when the log's header is valid but of another format
    ///   version or another page size than the database's, or when its transactions make a database larger than
    ///   `DumpLimits/maxFileBytes`.
    static func apply(_ wal: ByteReader, to image: DatabaseImage, path: String) throws(DumpError) {
        defer { markRollbackJournal(image) }
        guard let magic = word(wal, 0), let pageSize = word(wal, 8).map(Int.init),
            magic & 0xFFFF_FFFE == 0x377F_0682, pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0
        else { return }
        let order: ByteOrder = magic & 1 == 1 ? .bigEndian : .littleEndian
        guard let header = try? wal.window(at: 0, count: 24), let sums = checksum(header, order, from: (0, 0)),
            let stored = word(wal, 24), let storedSecond = word(wal, 28), sums == (stored, storedSecond),
            let salts = word(wal, 16).flatMap({ first in word(wal, 20).map { (first, $0) } })
        else { return }
        var running = sums
        guard word(wal, 4) == version else {
            throw DumpError(.malformed, path: path, "its -wal file is of a format version SQLite does not know")
        }
        if let stored = try? image.reader?.u16(at: 16, .bigEndian) {
            let databasePageSize = stored == 1 ? 65536 : Int(stored)
            guard databasePageSize == pageSize else {
                throw DumpError(
                    .malformed, path: path,
                    "its -wal file's pages are \(pageSize) bytes and the database's \(databasePageSize): the -wal file belongs to another database, or one of them is damaged"
                )
            }
        }

        // The frames up to the last commit frame, and the database's size in pages after it.
        var committed: [(page: Int, bytes: ByteReader)] = []
        var pending: [(page: Int, bytes: ByteReader)] = []
        var pageCount: Int?
        let frameSize = frameHeaderSize + pageSize
        var offset = headerSize
        while let frame = try? wal.window(at: offset, count: frameSize),
            let frameHeader = try? frame.window(at: offset, count: frameHeaderSize),
            let content = try? frame.window(at: offset + frameHeaderSize, count: pageSize)
        {
            guard let number = word(frameHeader, offset).map(Int.init), number != 0,
                word(frameHeader, offset + 8) == salts.0, word(frameHeader, offset + 12) == salts.1,
                let headerSums = checksum(try? frameHeader.window(at: offset, count: 8), order, from: running),
                let frameSums = checksum(content, order, from: headerSums),
                let stored = word(frameHeader, offset + 16), let storedSecond = word(frameHeader, offset + 20),
                frameSums == (stored, storedSecond),
                let size = word(frameHeader, offset + 4).map(Int.init)
            else { break }
            running = frameSums
            pending.append((number, content))
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
                "its -wal file makes the database larger than the \(DumpLimits.maxFileBytes >> 20) MiB limit for a dump"
            )
        }
        image.resize(to: bytes)
        // In log order, so that the last committed copy of a page wins; pages past the end are cut off.
        for frame in committed where frame.page <= pageCount {
            image.write(frame.bytes.unsafeBytes, at: (frame.page - 1) * pageSize)
        }
    }

    /// The database header's write and read versions (bytes 18 and 19) say 2 in a WAL database; an image opened
    /// in memory must say 1, or SQLite refuses to open it (it would look for the log on disk).
    private static func markRollbackJournal(_ image: DatabaseImage) {
        for offset in [18, 19] where (try? image.reader?.u8(at: offset)) == 2 {
            image.set(1, at: offset)
        }
    }

    /// The big-endian 32-bit integer at `offset`, or nil when it is not inside `bytes`.
    private static func word(_ bytes: ByteReader, _ offset: Int) -> UInt32? {
        try? bytes.u32(at: offset, .bigEndian)
    }

    /// SQLite's WAL checksum of `bytes` (a multiple of 8 long) read as 32-bit words in `order`, continuing `sums`;
    /// nil when there are no bytes or they are not a multiple of 8 long.
    private static func checksum(
        _ bytes: ByteReader?, _ order: ByteOrder, from sums: (UInt32, UInt32)
    ) -> (UInt32, UInt32)? {
        guard var words = bytes, words.count % 8 == 0 else { return nil }
        var (first, second) = sums
        while !words.isAtEnd {
            guard let a = try? words.readU32(order), let b = try? words.readU32(order) else { return nil }
            first = first &+ a &+ second
            second = second &+ b &+ first
        }
        return (first, second)
    }
}
