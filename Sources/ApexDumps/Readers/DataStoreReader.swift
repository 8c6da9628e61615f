import Foundation

/// Reads an androidx Jetpack Preferences DataStore file (`*.preferences_pb`): one serialized `PreferenceMap`.
///
/// ### Structure
/// ```proto
/// message PreferenceMap { map<string, Value> preferences = 1; }
/// message Value { oneof value { bool boolean = 1; float float = 2; int32 integer = 3; int64 long = 4;
///                               string string = 5; StringSet string_set = 6; double double = 7; bytes bytes = 8; } }
/// message StringSet { repeated string strings = 1; }
/// ```
/// Each map entry is a message with the key in field 1 and the value in field 2.
///
/// The reader follows protobuf's rules where they decide a value: unknown fields are skipped by wire type, a key
/// that occurs twice keeps its first position and its last value, and a `Value` or `StringSet` that occurs twice
/// is merged. It refuses what androidx would refuse or what can't be trusted: an entry without a value, a known
/// field with the wrong wire type, invalid UTF-8 in a key or string, a varint longer than 10 bytes, a length that
/// runs past its message, and groups nested deeper than ``DumpLimits/maxDepth``. Empty input is an empty map.
public enum DataStoreReader {
    /// Reads the entries of a DataStore file, in file order.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - path: The file's path, for errors.
    /// - Returns: The preferences, in the order their keys first occur.
    /// - Throws: `DumpError(.malformed)` naming the path and the problem (never a value).
    public static func read(_ data: Data, path: String) throws(DumpError) -> [PreferenceEntry] {
        do {
            return try parse(data, strict: false)
        } catch {
            throw DumpError(.malformed, path: path, "not a valid DataStore PreferenceMap: \(error.message)")
        }
    }

    /// Whether the bytes are a DataStore file for certain: they parse completely as a `PreferenceMap` with at
    /// least one entry and no field the schema does not name (what content detection needs to tell them from
    /// arbitrary binary data).
    static func isPreferenceMap(_ data: Data) -> Bool {
        guard let entries = try? parse(data, strict: true) else { return false }
        return !entries.isEmpty
    }

    /// Parses a `PreferenceMap`; `strict` also refuses unknown fields.
    static func parse(_ data: Data, strict: Bool) throws(ProtobufError) -> [PreferenceEntry] {
        let bytes = [UInt8](data)
        var scanner = ProtobufScanner(bytes: bytes, start: 0, end: bytes.count, depth: 1)
        var entries: [PreferenceEntry] = []
        var indexByName: [String: Int] = [:]
        while !scanner.isAtEnd {
            let field = try scanner.fieldTag()
            guard field.number == 1 else {
                if strict { throw ProtobufError("unknown field \(field.number) at offset \(field.offset)") }
                try scanner.skip(field)
                continue
            }
            try field.expect(.lengthDelimited, "a map entry")
            var entryScanner = try scanner.message()
            let entry = try readEntry(&entryScanner, number: entries.count + 1, strict: strict)
            if let index = indexByName[entry.name] {
                entries[index].value = entry.value
            } else {
                indexByName[entry.name] = entries.count
                entries.append(entry)
            }
        }
        return entries
    }

    /// One map entry: key (field 1) and value (field 2).
    private static func readEntry(
        _ scanner: inout ProtobufScanner, number: Int, strict: Bool
    ) throws(ProtobufError) -> PreferenceEntry {
        var name = ""
        var value: PreferenceValue?
        while !scanner.isAtEnd {
            let field = try scanner.fieldTag()
            switch field.number {
            case 1:
                try field.expect(.lengthDelimited, "the key of entry \(number)")
                name = try scanner.string("the key of entry \(number)")
            case 2:
                try field.expect(.lengthDelimited, "the value of entry \(number)")
                var valueScanner = try scanner.message()
                try readValue(&valueScanner, into: &value, entry: number, strict: strict)
            default:
                if strict { throw ProtobufError("unknown field \(field.number) in entry \(number)") }
                try scanner.skip(field)
            }
        }
        guard let value else { throw ProtobufError("entry \(number) has no value") }
        return PreferenceEntry(name: name, value: value)
    }

    /// The `Value` oneof; a later field replaces an earlier one, except that two string sets merge.
    private static func readValue(
        _ scanner: inout ProtobufScanner, into value: inout PreferenceValue?, entry: Int, strict: Bool
    ) throws(ProtobufError) {
        let what = "the value of entry \(entry)"
        while !scanner.isAtEnd {
            let field = try scanner.fieldTag()
            switch field.number {
            case 1:
                try field.expect(.varint, what)
                value = .boolean(try scanner.varint() != 0)
            case 2:
                try field.expect(.fixed32, what)
                value = .float(Float(bitPattern: try scanner.fixed32()))
            case 3:
                try field.expect(.varint, what)
                value = .int(Int32(truncatingIfNeeded: try scanner.varint()))
            case 4:
                try field.expect(.varint, what)
                value = .long(Int64(bitPattern: try scanner.varint()))
            case 5:
                try field.expect(.lengthDelimited, what)
                value = .string(try scanner.string(what))
            case 6:
                try field.expect(.lengthDelimited, what)
                var setScanner = try scanner.message()
                var strings: [String] = []
                if case .stringSet(let earlier) = value { strings = earlier }
                try readStringSet(&setScanner, into: &strings, what: what, strict: strict)
                value = .stringSet(strings)
            case 7:
                try field.expect(.fixed64, what)
                value = .double(Double(bitPattern: try scanner.fixed64()))
            case 8:
                try field.expect(.lengthDelimited, what)
                value = .bytes(Data(try scanner.lengthDelimited()))
            default:
                if strict { throw ProtobufError("unknown field \(field.number) in \(what)") }
                try scanner.skip(field)
            }
        }
    }

    /// `StringSet { repeated string strings = 1; }`.
    private static func readStringSet(
        _ scanner: inout ProtobufScanner, into strings: inout [String], what: String, strict: Bool
    ) throws(ProtobufError) {
        while !scanner.isAtEnd {
            let field = try scanner.fieldTag()
            guard field.number == 1 else {
                if strict { throw ProtobufError("unknown field \(field.number) in the string set of \(what)") }
                try scanner.skip(field)
                continue
            }
            try field.expect(.lengthDelimited, "the string set of \(what)")
            strings.append(try scanner.string("the string set of \(what)"))
        }
    }
}

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

/// Reads the fields of one message: a window `start..<end` of the file's bytes, with bounds checked on every read.
struct ProtobufScanner {
    private let bytes: [UInt8]
    private var position: Int
    private let end: Int
    /// How deep this message is nested (the top-level message is 1).
    private let depth: Int

    init(bytes: [UInt8], start: Int, end: Int, depth: Int) {
        self.bytes = bytes
        self.position = start
        self.end = end
        self.depth = depth
    }

    var isAtEnd: Bool { position >= end }

    /// A base-128 varint of at most 10 bytes whose value fits in 64 bits.
    mutating func varint() throws(ProtobufError) -> UInt64 {
        let start = position
        var result: UInt64 = 0
        for index in 0..<10 {
            guard position < end else { throw ProtobufError("truncated varint at offset \(start)") }
            let byte = bytes[position]
            position += 1
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
        let offset = position
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

    /// `count` raw bytes.
    private mutating func take(_ count: Int, _ what: String) throws(ProtobufError) -> ArraySlice<UInt8> {
        guard count <= end - position else {
            throw ProtobufError("\(what) at offset \(position) runs past the end of its message")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func fixed32() throws(ProtobufError) -> UInt32 {
        try take(4, "fixed32").reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func fixed64() throws(ProtobufError) -> UInt64 {
        try take(8, "fixed64").reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The payload of a length-delimited field, its length checked against what is left of the message.
    mutating func lengthDelimited() throws(ProtobufError) -> ArraySlice<UInt8> {
        let offset = position
        let length = try varint()
        guard length <= UInt64(end - position) else {
            throw ProtobufError(
                "length \(length) at offset \(offset) runs past the end of its message (\(end - position) bytes left)")
        }
        return try take(Int(length), "length-delimited field")
    }

    /// A length-delimited field holding UTF-8 text.
    mutating func string(_ what: String) throws(ProtobufError) -> String {
        let offset = position
        guard let text = String(validating: try lengthDelimited(), as: UTF8.self) else {
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
        return ProtobufScanner(bytes: bytes, start: payload.startIndex, end: payload.endIndex, depth: depth + 1)
    }

    /// Skips an unknown field by its wire type; a group is skipped to its matching end, nested groups counted
    /// against the depth bound.
    mutating func skip(_ field: ProtobufField) throws(ProtobufError) {
        switch field.wireType {
        case .varint: _ = try varint()
        case .fixed64: _ = try take(8, "fixed64")
        case .fixed32: _ = try take(4, "fixed32")
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
