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
/// runs past its message, and groups nested deeper than `DumpLimits/maxDepth`. Empty input is an empty map.
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

    /// Whether a file of `size` bytes whose first bytes are `prefix` may be a DataStore file (``isPreferenceMap(_:)``
    /// needs it whole): it starts with a map entry (field 1, length-delimited) that fits in the file, and that
    /// parses strictly when the prefix holds all of it. Most other files fail on their first byte, so they are
    /// never read whole.
    static func mayBePreferenceMap(prefix: Data, size: Int) -> Bool {
        guard let (start, length) = firstEntry(prefix), length <= size - start else { return false }
        let end = start + length
        return end > prefix.count || isPreferenceMap(prefix.prefix(end))
    }

    /// Where the first map entry's bytes start and how many there are, when `bytes` start with field 1,
    /// length-delimited, and a length that fits in an `Int` (nil otherwise).
    private static func firstEntry(_ prefix: Data) -> (start: Int, length: Int)? {
        let bytes = [UInt8](prefix.prefix(11))
        guard bytes.first == 0x0A else { return nil }
        var length = 0
        var index = 1
        while true {
            guard index < bytes.count, index <= 10 else { return nil }
            length |= Int(bytes[index] & 0x7F) << (7 * (index - 1))
            index += 1
            if bytes[index - 1] & 0x80 == 0 { break }
        }
        return length >= 0 ? (index, length) : nil
    }

    /// The ending of a DataStore file's name: androidx names each file `<name>.preferences_pb`.
    static let fileNameSuffix = ".preferences_pb"

    /// Whether a file is recognisably meant to be a DataStore file, though it may not parse: its name ends in
    /// ``fileNameSuffix``, or its first bytes are a whole map entry that parses strictly (see
    /// ``startsWithPreferenceEntry(_:)``). Such a file that fails the full parse is damaged (an interrupted
    /// `adb pull` cuts it short), not another kind of file: skipped, the stale copy of its entries in
    /// SharedPreferences would be migrated in its place.
    static func isRecognisable(_ data: Data, path: String) -> Bool {
        path.hasSuffix(fileNameSuffix) || startsWithPreferenceEntry(data)
    }

    /// Whether `data` starts with a whole `PreferenceMap` entry (field 1, length-delimited) that parses strictly,
    /// with a key and a value: a start that arbitrary binary data or text does not have by chance.
    static func startsWithPreferenceEntry(_ data: Data) -> Bool {
        guard let (start, length) = firstEntry(data), length > 0, length <= data.count - start else { return false }
        return isPreferenceMap(data.prefix(start + length))
    }

    /// Parses a `PreferenceMap`; `strict` also refuses unknown fields.
    static func parse(_ data: Data, strict: Bool) throws(ProtobufError) -> [PreferenceEntry] {
        try ByteReader.reading(data) { bytes throws(ProtobufError) in try parse(bytes, strict: strict) }
    }

    private static func parse(_ bytes: ByteReader, strict: Bool) throws(ProtobufError) -> [PreferenceEntry] {
        var scanner = ProtobufScanner(bytes, depth: 1)
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
                value = .bytes(try scanner.lengthDelimited().data)
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
