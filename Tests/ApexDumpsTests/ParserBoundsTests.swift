import Foundation
import Testing

@testable import ApexDumps

/// The parsers that read bytes by offset read them through ByteReader: input that ends early, or an offset or
/// length that points past its bytes, is the parser's own error at the exact boundary, never a crash or a byte
/// read from beyond. (Each parser's suite has more malformed cases; these are the edges.)
@Suite("parsers on ByteReader: a read past the input is the parser's error")
struct ParserBoundsTests {
    // MARK: Binary plist

    /// The parse error of `data`, or nil when it parses.
    static func plistError(_ data: Data) -> PlistParseError? {
        do {
            _ = try PlistParser.parse(data)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "binary plist: an object that ends at the offset table parses; one that needs one byte more is binaryMalformed",
        arguments: [
            ([0x43, 1, 2, 3], [0x44, 1, 2, 3], "an object's length runs past the end of the objects"),
            ([0x12, 0, 0, 0, 1], [0x13, 0, 0, 0, 0, 0, 0, 1], "an integer past the end of the objects"),
            ([0x23, 0, 0, 0, 0, 0, 0, 0, 0], [0x33, 0, 0, 0, 0, 0, 0, 0], "a real past the end of the objects"),
            ([0x61, 0, 0x61], [0x62, 0, 0x61, 0], "an object's length runs past the end of the objects"),
            ([0x80, 7], [0x81, 7], "a UID object larger than 8 bytes or past the end of the objects"),
            ([0x4F, 0x10, 1, 9], [0x4F], "an object's length is past the end of the objects"),
            ([0x4F, 0x10, 0], [0x4F, 0x10], "an object's length is not a valid integer"),
            ([0x4F, 0x11, 0, 0], [0x4F, 0x11, 0], "an object's length is not a valid integer"),
        ] as [([UInt8], [UInt8], String)])
    func binaryPlistObjectAtTheTable(fits: [UInt8], over: [UInt8], detail: String) throws {
        #expect(Self.plistError(TinyBinaryPlist.build([fits])) == nil)
        let error = try #require(Self.plistError(TinyBinaryPlist.build([over])))
        #expect(error.kind == .binaryMalformed && error.detail == detail, "\(error.message)")
    }

    @Test("binary plist: an array or dictionary whose references end past the objects is binaryMalformed")
    func binaryPlistReferencesAtTheTable() throws {
        // [0xA2, 1, 1] holds two references to object 1; cut to one, the second would be the offset table's byte.
        #expect(Self.plistError(TinyBinaryPlist.build([[0xA2, 1, 1], [0x09]])) == nil)
        for object in [[0xA2, 1], [0xD1, 1], [0xA2, 0x00, 0x01]] as [[UInt8]] {
            let error = try #require(
                Self.plistError(TinyBinaryPlist.build([object], refSize: object.count == 3 ? 2 : 1)))
            #expect(error.kind == .binaryMalformed, "\(error.message)")
            #expect(error.detail == "an object's length runs past the end of the objects", "\(error.message)")
        }
    }

    @Test("binary plist: an offset table entry pointing at the table itself or past the file is binaryMalformed")
    func binaryPlistOffsetsPastTheObjects() throws {
        let valid = TinyBinaryPlist.build([[0xA2, 1, 2], [0x09], [0x51, 0x61]])
        #expect(Self.plistError(valid) == nil)
        let table = valid.count - 32 - 3 * 4
        for entry in 0..<3 {
            for target in [table, table + 1, valid.count, Int(UInt32.max)] {
                var bytes = [UInt8](valid)
                bytes.replaceSubrange(
                    (table + 4 * entry)..<(table + 4 * entry + 4), with: TinyBinaryPlist.bigEndian(target, 4))
                let error = try #require(Self.plistError(Data(bytes)))
                #expect(error.kind == .binaryMalformed && error.detail == "its offset table points outside its objects")
            }
        }
    }

    @Test(
        "binary plist: every prefix of a real file is a parse error, and binaryMalformed once it could hold a trailer")
    func binaryPlistPrefixes() throws {
        let file = try PropertyListSerialization.data(
            fromPropertyList: [
                ["class": "genp", "svce": "s", "v_Data": Data("made-up".utf8), "tags": ["é", 1.5, -7]]
            ],
            format: .binary, options: 0)
        #expect(Self.plistError(file) == nil)
        for length in 0..<file.count {
            let error = try #require(Self.plistError(file.prefix(length)), "prefix of \(length) bytes")
            if length >= BinaryPlistCheck.minimumSize {
                #expect(error.kind == .binaryMalformed, "prefix of \(length) bytes: \(error.message)")
            }
        }
    }

    // MARK: Protobuf (DataStore)

    /// The protobuf error of `bytes`, or nil when they parse.
    static func protobufError(_ bytes: [UInt8]) -> String? {
        do {
            _ = try DataStoreReader.parse(Data(bytes), strict: false)
            return nil
        } catch {
            return error.message
        }
    }

    @Test(
        "protobuf: a field that ends at its message's end parses; one byte more is refused, though the file goes on",
        arguments: [
            // An entry (offset 0) holding key "k" (offset 2) and a Value (offset 5) whose field starts at offset 7.
            ([0x15, 1, 0, 0, 0], [0x15, 1, 0, 0], "fixed32 at offset 8 runs past the end of its message"),
            (
                [0x39, 1, 0, 0, 0, 0, 0, 0, 0], [0x39, 1, 0, 0, 0, 0, 0, 0],
                "fixed64 at offset 8 runs past the end of its message"
            ),
            (
                [0x2A, 2, 0x61, 0x62], [0x2A, 3, 0x61, 0x62],
                "length 3 at offset 8 runs past the end of its message (2 bytes left)"
            ),
            ([0x08, 0x81, 0x01], [0x08, 0x81], "truncated varint at offset 8"),
        ] as [([UInt8], [UInt8], String)])
    func protobufFieldAtTheMessageEnd(fits: [UInt8], over: [UInt8], message: String) {
        let following = DataStoreProto.entry("next", .boolean(true))
        func file(_ value: [UInt8]) -> [UInt8] {
            DataStoreProto.field(1, bytes: DataStoreProto.field(1, string: "k") + DataStoreProto.field(2, bytes: value))
                + following
        }
        #expect(Self.protobufError(file(fits)) == nil)
        #expect(Self.protobufError(file(over)) == message)
    }

    @Test("protobuf: a length that runs past its message or the file is refused with the bytes left")
    func protobufLengthPastTheEnd() {
        // The entry is 2 bytes (offsets 2 and 3): a key tag and a length of 2, with nothing left in the entry and more
        // in the file.
        let entry: [UInt8] = [0x0A, 0x02, 0x0A, 0x02] + DataStoreProto.entry("next", .boolean(true))
        #expect(Self.protobufError(entry) == "length 2 at offset 3 runs past the end of its message (0 bytes left)")
        #expect(
            Self.protobufError([0x0A, 0x03, 0x0A])
                == "length 3 at offset 1 runs past the end of its message (1 bytes left)")
        #expect(
            Self.protobufError([0x0A] + DataStoreProto.varint(UInt64(Int.max) + 1))
                == "length \(UInt64(Int.max) + 1) at offset 1 runs past the end of its message (0 bytes left)")
    }

    // MARK: SQLite WAL

    @Test("SQLite WAL: cut anywhere near a header or frame boundary, the reader applies what SQLite's recovery applies")
    func walCutAtEveryBoundary() throws {
        let folder = try DumpScratch()
        let path = folder.path + "/export.db"
        try WALFixture.make(path)
        let wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let frameSize = 24 + 4096
        #expect((wal.count - 32) % frameSize == 0 && wal.count > 32 + 2 * frameSize)
        var cuts: Set<Int> = [0, 1, 4, 11, 12, 23, 24, 27, 28, 31]
        for boundary in stride(from: 32, through: wal.count, by: frameSize) {
            for delta in [-1, 0, 1, 8, 23, 24, 25] where boundary + delta >= 0 && boundary + delta <= wal.count {
                cuts.insert(boundary + delta)
            }
        }
        var seen: Set<[String]> = []
        for cut in cuts.sorted() {
            try wal.prefix(cut).write(to: URL(fileURLWithPath: path + "-wal"))
            let accounts = try KeychainSQLiteReader.read(path: path).map { $0.account?.text ?? "?" }
            // SQLite itself, on a copy it may recover into.
            let oracle = folder.path + "/oracle-\(cut).db"
            try FileManager.default.copyItem(atPath: path, toPath: oracle)
            try wal.prefix(cut).write(to: URL(fileURLWithPath: oracle + "-wal"))
            #expect(accounts == WALFixture.accounts(oracle), "WAL cut to \(cut) bytes")
            if cut < 32 { #expect(accounts == KeychainSQLiteReaderTests.base, "WAL cut to \(cut) bytes") }
            seen.insert(accounts)
        }
        // The cuts reach each state: no transaction, the first, and both.
        #expect(seen.count == 3)
    }

    // MARK: DER (access control)

    /// The DER error of `bytes`, or nil when they decode.
    static func derError(_ bytes: [UInt8]) -> String? {
        do {
            _ = try AccessControlDecoder.DERParser.parse(Data(bytes))
            return nil
        } catch {
            return error.message
        }
    }

    @Test("DER: a value that ends at its container's end decodes; past it, it is refused though the data goes on")
    func derValueAtTheContainerEnd() {
        // SET { SEQUENCE { "a", "b" } }: the pair's value ends where the pair and the set end.
        #expect(Self.derError([0x31, 0x08, 0x30, 0x06, 0x0C, 0x01, 0x61, 0x0C, 0x01, 0x62]) == nil)
        // The value one byte longer than the pair: the set's next byte is there, but outside the pair.
        #expect(
            Self.derError([0x31, 0x09, 0x30, 0x06, 0x0C, 0x01, 0x61, 0x0C, 0x02, 0x62, 0x63])
                == "DER length 2 at byte 9 runs past the end of its container")
        // The pair holds the key only; the value that follows the set is not read as the pair's.
        #expect(
            Self.derError([0x31, 0x05, 0x30, 0x03, 0x0C, 0x01, 0x61, 0x0C, 0x01, 0x62])
                == "DER truncated: a value is missing at byte 7")
        #expect(
            Self.derError([0x31, 0x03, 0x30, 0x05, 0x0C, 0x01, 0x61])
                == "DER length 5 at byte 4 runs past the end of its container")
        #expect(Self.derError([0x31]) == "DER truncated: a length is missing at byte 1")
        #expect(Self.derError([0x04, 0x82, 0x01]) == "DER truncated inside a length at byte 1")
        #expect(
            Self.derError([0x31, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x30, 0x00])
                == "DER length 4294967295 at byte 6 runs past the end of its container")
        #expect(Self.derError([0x04, 0x01, 0x61, 0x00]) == "trailing bytes after the DER value at byte 3")
        // The parser names no caller; the access-control decoder says what the data was.
        #expect(Self.derError([]) == "the DER data is empty")
        #expect(throws: AccessControlDecoder.DecodingError("the access control data is empty")) {
            try AccessControlDecoder.decode(der: Data())
        }
    }

    // MARK: Sealed keychain blob header

    @Test(
        "sealed blob header: a blob that holds its wrapped key and tag exactly is sealed; a byte less, or a header alone, is data"
    )
    func sealedBlobAtItsLength() throws {
        func value(_ blob: Data) throws -> DumpValue? {
            let pair: [String: Any] = [
                "v_Data": blob, "v_PersistentRef": Data("genp".utf8) + Data(repeating: 0, count: 8),
            ]
            let plist = try PropertyListSerialization.data(
                fromPropertyList: ["genp": [IOSPlistReaderTests.genericItem, pair]], format: .binary, options: 0)
            return try IOSPlistReader.read(plist, path: "m").last?.value
        }
        // Version 2, key class 7, a wrapped key of 40 bytes: 12 + 40 + 16 bytes in all.
        let header = Data([2, 0, 0, 0, 7, 0, 0, 0, 40, 0, 0, 0])
        let exact = header + Data(repeating: 0xA5, count: 40 + 16)
        #expect(
            try value(exact) == .damaged("v_Data is a sealed keychain blob (version 2, key class 7), not the secret"))
        #expect(try value(exact.dropLast()) == .data(exact.dropLast()))
        #expect(try value(header) == .data(header))
        #expect(try value(header.prefix(5)) == .data(header.prefix(5)))
    }

    // MARK: XML split

    @Test("XML split: every prefix of a document it cuts is scanned to its last byte, and any cut lies inside it")
    func xmlSplitPrefixes() {
        let whole = Array(PlistXMLSplitTests.awkward.utf8)
        func plan(_ bytes: ArraySlice<UInt8>) -> PlistXMLSplit? {
            bytes.withUnsafeBytes { PlistXMLSplit.plan($0, pieces: 4, granularity: 1) }
        }
        #expect(plan(whole[...]) != nil)
        var uncut = 0
        for length in 0..<whole.count {
            guard let cut = plan(whole.prefix(length)) else {
                uncut += 1
                continue
            }
            #expect(cut.pieces.allSatisfy { $0.upperBound <= length }, "prefix of \(length) bytes")
        }
        // A prefix that ends before the root's end tag is never cut.
        #expect(uncut > whole.count - 40)
    }

    // MARK: SharedPreferences attribute values

    @Test("SharedPreferences: an ampersand reference at the very start or end of a name decodes, nothing read past it")
    func attributeReferenceAtTheEnd() throws {
        let names = ["&amp;", "a&amp;", "&amp;b", "&amp;&amp;", "a&amp;#38", "a&#38;#38"]
        let xml =
            "<map>" + names.enumerated().map { "<string name=\"\($0.element)\">v\($0.offset)</string>" }.joined()
            + "</map>"
        let entries = try SharedPreferencesReader.read(Data(xml.utf8), path: "p.xml")
        #expect(entries.map(\.name) == ["&", "a&", "&b", "&&", "a&#38", "a&#38"])
    }
}
