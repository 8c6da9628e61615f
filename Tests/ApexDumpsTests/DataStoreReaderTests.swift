import Foundation
import Testing

@testable import ApexDumps

/// A protobuf encoder for the tests, written apart from the generator's so that the two check each other.
enum DataStoreProto {
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var out: [UInt8] = []
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
        return out
    }

    static func tag(_ number: UInt64, _ wireType: UInt64) -> [UInt8] { varint(number << 3 | wireType) }

    static func field(_ number: UInt64, bytes: [UInt8]) -> [UInt8] {
        tag(number, 2) + varint(UInt64(bytes.count)) + bytes
    }

    static func field(_ number: UInt64, string: String) -> [UInt8] { field(number, bytes: Array(string.utf8)) }

    static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] { tag(number, 0) + varint(value) }

    static func field(_ number: UInt64, fixed32 value: UInt32) -> [UInt8] {
        tag(number, 5) + (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    static func field(_ number: UInt64, fixed64 value: UInt64) -> [UInt8] {
        tag(number, 1) + (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The `Value` message for a preference value.
    static func value(_ value: PreferenceValue) -> [UInt8] {
        switch value {
        case .boolean(let flag): field(1, varint: flag ? 1 : 0)
        case .float(let number): field(2, fixed32: number.bitPattern)
        case .int(let number): field(3, varint: UInt64(bitPattern: Int64(number)))
        case .long(let number): field(4, varint: UInt64(bitPattern: number))
        case .string(let text): field(5, string: text)
        case .stringSet(let strings): field(6, bytes: strings.flatMap { field(1, string: $0) })
        case .double(let number): field(7, fixed64: number.bitPattern)
        case .bytes(let data): field(8, bytes: Array(data))
        }
    }

    /// One map entry of a `PreferenceMap`, as field 1 of the top-level message.
    static func entry(_ name: String, _ preference: PreferenceValue) -> [UInt8] {
        field(1, bytes: field(1, string: name) + field(2, bytes: value(preference)))
    }

    static func map(_ entries: [PreferenceEntry]) -> Data {
        Data(entries.flatMap { entry($0.name, $0.value) })
    }
}

/// Short name for the encoder in the tables below.
private typealias PB = DataStoreProto

@Suite("DataStore reader")
struct DataStoreReaderTests {
    let path = "/dumps/files/datastore/RN_KEYCHAIN.preferences_pb"

    @Test("every Value type round-trips, in file order")
    func roundTrip() throws {
        let entries = [
            PreferenceEntry(name: "svc:u", value: .string("c2FtcGxl\n")),
            PreferenceEntry(name: "flag", value: .boolean(true)),
            PreferenceEntry(name: "off", value: .boolean(false)),
            PreferenceEntry(name: "ratio", value: .float(1.5)),
            PreferenceEntry(name: "count", value: .int(-42)),
            PreferenceEntry(name: "max", value: .int(Int32.max)),
            PreferenceEntry(name: "big", value: .long(Int64.min)),
            PreferenceEntry(name: "tags", value: .stringSet(["a", "", "ü"])),
            PreferenceEntry(name: "empty set", value: .stringSet([])),
            PreferenceEntry(name: "pi", value: .double(3.141592653589793)),
            PreferenceEntry(name: "blob", value: .bytes(Data([0, 1, 0xFF]))),
            PreferenceEntry(name: "", value: .string("")),
            PreferenceEntry(name: "https://api.example.com:8443:c", value: .string("KeystoreAESGCM")),
        ]
        let data = PB.map(entries)
        #expect(try DataStoreReader.read(data, path: path) == entries)
        #expect(DataStoreReader.isPreferenceMap(data))
    }

    @Test("empty input is an empty map")
    func empty() throws {
        #expect(try DataStoreReader.read(Data(), path: path) == [])
        #expect(!DataStoreReader.isPreferenceMap(Data()))
    }

    @Test("protobuf rules: unknown fields skipped, repeated key keeps its place and last value, sets merge")
    func protobufRules() throws {
        let unknownTop =
            PB.field(9, varint: 7) + PB.field(10, fixed64: 1) + PB.field(11, fixed32: 2)
            + PB.field(12, string: "x") + PB.tag(13, 3) + PB.field(1, varint: 1) + PB.tag(13, 4)
        let entryWithUnknown = PB.field(
            1,
            bytes: PB.field(1, string: "k") + PB.field(3, varint: 5)
                + PB.field(2, bytes: PB.field(9, varint: 1) + PB.value(.int(3))))
        let data = Data(
            unknownTop + entryWithUnknown + PB.entry("a", .string("first")) + PB.entry("k", .long(4))
                + PB.field(
                    1,
                    bytes: PB.field(1, string: "s") + PB.field(2, bytes: PB.value(.stringSet(["x"])))
                        + PB.field(2, bytes: PB.value(.stringSet(["y"])))))
        #expect(
            try DataStoreReader.read(data, path: path) == [
                PreferenceEntry(name: "k", value: .long(4)),
                PreferenceEntry(name: "a", value: .string("first")),
                PreferenceEntry(name: "s", value: .stringSet(["x", "y"])),
            ])
        // Detection is stricter: a buffer with fields the schema doesn't name is not taken for a DataStore file.
        #expect(!DataStoreReader.isPreferenceMap(data))
    }

    @Test("a negative int32 written as a 10-byte varint reads back")
    func negativeInt32() throws {
        let data = Data(
            PB.field(
                1, bytes: PB.field(1, string: "n") + PB.field(2, bytes: PB.field(3, varint: UInt64(bitPattern: -1)))))
        #expect(try DataStoreReader.read(data, path: path) == [PreferenceEntry(name: "n", value: .int(-1))])
    }

    /// A named malformed input; the name alone is shown in the test log.
    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = {
        let goodEntry = PB.entry("k", .string("v"))
        var nestedMessages = PB.field(5, string: "v")
        for _ in 0..<2000 { nestedMessages = PB.field(1, bytes: nestedMessages) }
        let nestedGroups = Array(repeating: PB.tag(7, 3), count: 5000).flatMap { $0 }
        let cases: [(String, [UInt8])] = [
            ("truncated varint", [0x0A, 0x85]),
            ("truncated tag", [0x8A]),
            ("11-byte varint", [0x08] + Array(repeating: 0xFF, count: 10) + [0x01]),
            ("varint over 64 bits", [0x08] + Array(repeating: 0xFF, count: 9) + [0x02]),
            ("length beyond buffer", [0x0A, 0x05, 0x0A, 0x01]),
            ("length beyond the enclosing message", PB.field(1, bytes: [0x0A, 0x09, 0x6B]) + goodEntry),
            ("huge length 0xFFFFFFFF", [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00]),
            ("huge 64-bit length", [0x0A] + PB.varint(UInt64.max)),
            ("wrong wire type for the map field", PB.field(1, varint: 3)),
            (
                "wrong wire type for the key",
                PB.field(1, bytes: PB.field(1, varint: 3) + PB.field(2, bytes: PB.value(.int(1))))
            ),
            (
                "wrong wire type for a boolean",
                PB.field(1, bytes: PB.field(1, string: "k") + PB.field(2, bytes: PB.field(1, fixed32: 1)))
            ),
            (
                "wrong wire type for a double",
                PB.field(1, bytes: PB.field(1, string: "k") + PB.field(2, bytes: PB.field(7, fixed32: 1)))
            ),
            (
                "invalid UTF-8 in a key",
                PB.field(1, bytes: PB.field(1, bytes: [0x6B, 0xC3]) + PB.field(2, bytes: PB.value(.int(1))))
            ),
            (
                "invalid UTF-8 in a string",
                PB.field(1, bytes: PB.field(1, string: "k") + PB.field(2, bytes: PB.field(5, bytes: [0xFF, 0xFE])))
            ),
            (
                "invalid UTF-8 in a string set",
                PB.field(
                    1,
                    bytes: PB.field(1, string: "k")
                        + PB.field(2, bytes: PB.field(6, bytes: PB.field(1, bytes: [0xED, 0xA0, 0x80]))))
            ),
            ("an entry without a value", PB.field(1, bytes: PB.field(1, string: "k"))),
            ("an empty Value", PB.field(1, bytes: PB.field(1, string: "k") + PB.field(2, bytes: []))),
            (
                "truncated fixed32",
                PB.field(1, bytes: PB.field(1, string: "k") + PB.field(2, bytes: [0x15, 0x00, 0x00]))
            ),
            ("truncated fixed64", goodEntry + [0x09, 0x00]),
            ("field number 0", [0x02, 0x00]),
            ("wire type 6", [0x0E]),
            ("wire type 7", [0x0F]),
            ("end group without start", [0x0C]),
            ("unclosed group", [0x0B, 0x08, 0x01]),
            ("mismatched group end", [0x0B, 0x14]),
            ("deep nesting via nested messages", nestedMessages),
            ("deep nesting via groups", nestedGroups),
        ]
        return cases.map { Malformed(name: $0.0, bytes: $0.1) }
    }()

    @Test("malformed input is DumpError(.malformed) naming the path", arguments: malformed)
    func malformedInput(_ input: Malformed) {
        #expect {
            _ = try DataStoreReader.read(Data(input.bytes), path: path)
        } throws: { error in
            guard let error = error as? DumpError else { return false }
            return error.kind == .malformed && error.path == path && error.description.hasPrefix(path + ": ")
        }
        #expect(!DataStoreReader.isPreferenceMap(Data(input.bytes)))
    }

    @Test("errors never show values")
    func errorsHideValues() {
        let secret = "sample-token-0001"
        let data = Data(PB.field(1, bytes: PB.field(1, string: secret)))
        #expect {
            _ = try DataStoreReader.read(data, path: path)
        } throws: { error in
            guard let error = error as? DumpError else { return false }
            return !error.description.contains(secret)
        }
    }

    @Test("groups nested past the depth bound are refused as too deep")
    func depthBound() {
        let deep = Array(repeating: PB.tag(7, 3), count: DumpLimits.maxDepth + 1).flatMap { $0 }
        #expect {
            _ = try DataStoreReader.read(Data(deep), path: path)
        } throws: { error in
            (error as? DumpError)?.message.contains("deeper than \(DumpLimits.maxDepth)") ?? false
        }
        // Within the bound, nested unknown groups are skipped.
        let shallow = PB.tag(7, 3) + PB.tag(8, 3) + PB.tag(8, 4) + PB.tag(7, 4) + PB.entry("k", .boolean(true))
        #expect(throws: Never.self) { _ = try DataStoreReader.read(Data(shallow), path: path) }
    }

    @Test("random bytes never crash the reader")
    func randomBytes() {
        var generator = DumpTestRandom(seed: 0x5EED)
        for length in 0..<400 {
            let bytes = (0..<length % 97).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? DataStoreReader.read(Data(bytes), path: path)
        }
    }
}

/// A small deterministic generator for test inputs.
struct DumpTestRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
