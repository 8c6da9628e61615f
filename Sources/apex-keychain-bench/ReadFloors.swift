import CLibXML2
import CSQLite
import Foundation

/// The readers' floors: the least work that reads every byte of a dump once, done the most direct way.
enum ReadFloors {
    /// libxml2's parse of the file, each element's attributes and text read once, in place: the root's children
    /// (a prefs file), or every element at any depth (a plist).
    static func walkXML(_ data: Data, recursive: Bool) throws {
        let document = data.withUnsafeBytes { bytes in
            xmlReadMemory(
                bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil,
                Int32(XML_PARSE_NONET.rawValue | XML_PARSE_COMPACT.rawValue))
        }
        guard let document else { throw BenchError("libxml2 could not parse an XML file") }
        defer { xmlFreeDoc(document) }
        var bytes = 0
        var pending: [xmlNodePtr] = []
        if let first = xmlDocGetRootElement(document)?.pointee.children { pending.append(first) }
        while let start = pending.popLast() {
            var node: xmlNodePtr? = start
            while let current = node {
                if current.pointee.type == XML_ELEMENT_NODE {
                    var attribute = current.pointee.properties
                    while let property = attribute {
                        if let value = property.pointee.children?.pointee.content {
                            bytes += strlen(UnsafeRawPointer(value).assumingMemoryBound(to: CChar.self))
                        }
                        attribute = property.pointee.next
                    }
                    if let child = current.pointee.children {
                        if child.pointee.type == XML_TEXT_NODE, child.pointee.next == nil {
                            if let text = child.pointee.content {
                                bytes += strlen(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self))
                            }
                        } else if recursive {
                            pending.append(child)
                        }
                    }
                }
                node = current.pointee.next
            }
        }
        if bytes == -1 { print("") }
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
