import CLibXML2
import CSQLite
import Foundation

/// The readers' floors: the least work that reads every byte of a dump once, done the most direct way.
enum ReadFloors {
    /// libxml2's SAX parse of the file with callbacks that only count the bytes of every element name, attribute
    /// and text: every byte tokenised once, nothing built (the readers build values from the same callbacks or
    /// from a tree).
    static func scanXML(_ data: Data) throws {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { user, name, _, _, _, _, attributeCount, _, attributes in
            guard let user, let name else { return }
            var bytes = strlen(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self))
            if let attributes {
                // Five pointers per attribute: name, prefix, URI, value start, value end.
                for index in 0..<Int(attributeCount) {
                    if let start = attributes[5 * index + 3], let end = attributes[5 * index + 4] {
                        bytes += end - start
                    }
                }
            }
            user.assumingMemoryBound(to: Int.self).pointee += bytes
        }
        handler.characters = { user, _, length in
            user?.assumingMemoryBound(to: Int.self).pointee += Int(length)
        }
        handler.serror = { _, _ in }
        var count = 0
        let status = data.withUnsafeBytes { bytes -> Int32 in
            guard let base = bytes.baseAddress else { return -1 }
            return withUnsafeMutablePointer(to: &count) { counter in
                xmlSAXUserParseMemory(&handler, counter, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
            }
        }
        guard status == 0 else { throw BenchError("libxml2 could not parse an XML file") }
        if count == -1 { print("") }
    }

    /// A binary plist's trailer and offset table read, and every object's marker, length and bytes touched once
    /// (no tree built).
    static func walkBinaryPlist(_ data: Data) throws {
        let sum: Int? = data.withUnsafeBytes { bytes -> Int? in
            guard bytes.count >= 40 else { return nil }
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6])
            func integer(_ start: Int, _ width: Int) -> Int {
                var value = 0
                for index in start..<(start + width) { value = value << 8 | Int(bytes[index]) }
                return value
            }
            let count = integer(trailer + 8, 8)
            let table = integer(trailer + 24, 8)
            guard offsetSize >= 1, offsetSize <= 8, table + count * offsetSize <= trailer else { return nil }
            var total = 0
            for index in 0..<count {
                let offset = integer(table + index * offsetSize, offsetSize)
                guard offset < table else { return nil }
                let marker = bytes[offset]
                var length = Int(marker & 0x0F)
                var start = offset + 1
                if length == 0x0F, start < table {
                    let width = 1 << Int(bytes[start] & 0x0F)
                    length = integer(start + 1, min(width, 8))
                    start += 1 + width
                }
                let end = min(table, start + length * (marker >> 4 == 0x6 ? 2 : 1))
                if start < end { for position in start..<end { total &+= Int(bytes[position]) } }
            }
            return total
        }
        guard let sum else { throw BenchError("not a binary plist the floor can walk") }
        if sum == -1 { print("") }
    }

    /// A bare `SELECT *` of `table`, every column's bytes touched.
    static func bareSelect(_ path: String, table: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw BenchError("open") }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT * FROM \(table)", -1, &statement, nil) == SQLITE_OK else {
            throw BenchError("\(path): no table \(table)")
        }
        defer { sqlite3_finalize(statement) }
        var bytes = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            for column in 0..<sqlite3_column_count(statement) { bytes += Int(sqlite3_column_bytes(statement, column)) }
        }
        if bytes == -1 { print("") }
    }
}
