// Protobuf/: the protobuf wire format, read field by field with every bound checked (used by DataStoreReader).

import Foundation

/// Why protobuf bytes can't be read: the problem, with offsets and entry numbers but never a value.
struct ProtobufError: Error {
    let message: String

    init(_ message: String) { self.message = message }
}

/// A protobuf wire type.
enum ProtobufWireType: UInt8 {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case startGroup = 3
    case endGroup = 4
    case fixed32 = 5

    var name: String {
        switch self {
        case .varint: "varint"
        case .fixed64: "fixed64"
        case .lengthDelimited: "length-delimited"
        case .startGroup: "start-group"
        case .endGroup: "end-group"
        case .fixed32: "fixed32"
        }
    }
}

/// A field's tag: its number, wire type, and where it starts.
struct ProtobufField {
    let number: UInt64
    let wireType: ProtobufWireType
    let offset: Int

    /// Refuses a known field written with another wire type than the schema's.
    func expect(_ wireType: ProtobufWireType, _ what: String) throws(ProtobufError) {
        guard self.wireType == wireType else {
            throw ProtobufError(
                "\(what) (field \(number) at offset \(offset)) has wire type \(self.wireType.name), expected \(wireType.name)"
            )
        }
    }
}

/// Reads the fields of one message: a `ByteReader` window of the file's bytes (offsets stay the file's), with
/// bounds checked on every read.
struct ProtobufScanner {
    /// The message's bytes; its cursor is the next field's.
    private var reader: ByteReader
    /// How deep this message is nested (the top-level message is 1).
    private let depth: Int

    init(_ reader: ByteReader, depth: Int) {
        self.reader = reader
        self.depth = depth
    }

    var isAtEnd: Bool { reader.isAtEnd }

    /// A base-128 varint of at most 10 bytes whose value fits in 64 bits.
    mutating func varint() throws(ProtobufError) -> UInt64 {
        let start = reader.position
        var result: UInt64 = 0
        for index in 0..<10 {
            guard let byte = try? reader.readU8() else { throw ProtobufError("truncated varint at offset \(start)") }
            if index == 9 {
                guard byte & 0x80 == 0 else { throw ProtobufError("varint longer than 10 bytes at offset \(start)") }
                guard byte <= 1 else { throw ProtobufError("varint larger than 64 bits at offset \(start)") }
            }
            result |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return result }
        }
        throw ProtobufError("varint longer than 10 bytes at offset \(start)")
    }

    /// A field tag; field number 0 and wire types 6 and 7 don't exist.
    mutating func fieldTag() throws(ProtobufError) -> ProtobufField {
        let offset = reader.position
        let key = try varint()
        let number = key >> 3
        guard number >= 1, number <= 0x1FFF_FFFF else {
            throw ProtobufError("invalid field number \(number) at offset \(offset)")
        }
        guard let wireType = ProtobufWireType(rawValue: UInt8(key & 7)) else {
            throw ProtobufError("invalid wire type \(key & 7) at offset \(offset)")
        }
        return ProtobufField(number: number, wireType: wireType, offset: offset)
    }

    /// A little-endian `fixed32`.
    mutating func fixed32() throws(ProtobufError) -> UInt32 {
        guard let value = try? reader.readU32(.littleEndian) else { throw pastTheEnd("fixed32") }
        return value
    }

    /// A little-endian `fixed64`.
    mutating func fixed64() throws(ProtobufError) -> UInt64 {
        guard let value = try? reader.readU64(.littleEndian) else { throw pastTheEnd("fixed64") }
        return value
    }

    private func pastTheEnd(_ what: String) -> ProtobufError {
        ProtobufError("\(what) at offset \(reader.position) runs past the end of its message")
    }

    /// The payload of a length-delimited field, its length checked against what is left of the message.
    mutating func lengthDelimited() throws(ProtobufError) -> ByteReader {
        let offset = reader.position
        let length = try varint()
        guard length <= UInt64(reader.remaining), let payload = try? reader.read(count: Int(length)) else {
            throw ProtobufError(
                "length \(length) at offset \(offset) runs past the end of its message (\(reader.remaining) bytes left)"
            )
        }
        return payload
    }

    /// A length-delimited field holding UTF-8 text.
    mutating func string(_ what: String) throws(ProtobufError) -> String {
        let offset = reader.position
        guard let text = String(validating: try lengthDelimited().unsafeBytes, as: UTF8.self) else {
            throw ProtobufError("\(what) at offset \(offset) is not valid UTF-8")
        }
        return text
    }

    /// A length-delimited field read as an embedded message, one level deeper.
    mutating func message() throws(ProtobufError) -> ProtobufScanner {
        let payload = try lengthDelimited()
        guard depth < DumpLimits.maxDepth else {
            throw ProtobufError("messages nested deeper than \(DumpLimits.maxDepth) levels")
        }
        return ProtobufScanner(payload, depth: depth + 1)
    }

    /// Skips an unknown field by its wire type; a group is skipped to its matching end, nested groups counted
    /// against the depth bound.
    mutating func skip(_ field: ProtobufField) throws(ProtobufError) {
        switch field.wireType {
        case .varint: _ = try varint()
        case .fixed64: _ = try fixed64()
        case .fixed32: _ = try fixed32()
        case .lengthDelimited: _ = try lengthDelimited()
        case .endGroup: throw ProtobufError("end-group without a start at offset \(field.offset)")
        case .startGroup:
            var open: [UInt64] = [field.number]
            while let number = open.last {
                guard depth + open.count <= DumpLimits.maxDepth else {
                    throw ProtobufError("groups nested deeper than \(DumpLimits.maxDepth) levels")
                }
                guard !isAtEnd else { throw ProtobufError("group \(number) is not closed") }
                let inner = try fieldTag()
                switch inner.wireType {
                case .startGroup: open.append(inner.number)
                case .endGroup:
                    guard inner.number == number else {
                        throw ProtobufError(
                            "end-group \(inner.number) at offset \(inner.offset) closes group \(number)")
                    }
                    open.removeLast()
                default: try skip(inner)
                }
            }
        }
    }
}
