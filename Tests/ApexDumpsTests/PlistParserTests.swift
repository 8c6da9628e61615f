import ApexKeychain
import Foundation
import Testing

@testable import ApexDumps

/// A canonical, type-tagged text of a plist tree, for comparing the project's parsers with Foundation's.
enum PlistCanonical {
    static func text(_ node: PlistNode) -> String {
        switch node {
        case .string(let text): "s(\(text.debugDescription))"
        case .data(let data): "d(\(Hex.lowercase(data)))"
        case .damagedData(let why): "x(\(why))"
        case .date(let date): "t(\(date.timeIntervalSinceReferenceDate))"
        case .integer(let number): "i(\(number))"
        case .unsignedInteger(let number): "i(\(number))"
        case .real(let number): "r(\(number))"
        case .boolean(let flag): "b(\(flag))"
        case .uid(let number): "u(\(number))"
        case .null: "null"
        case .array(let elements): "[" + elements.map(text).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            "{" + dictionary.uniqueEntries().map { text($0.key) + ":" + text($0.value) }.sorted().joined(separator: ",")
                + "}"
        }
    }

    /// What Foundation's decoder handed back, by kind. A plist `<true/>` comes back as `Bool` on Linux, while
    /// `NSNumber(1) as? Bool` also succeeds, so booleans are told apart by their dynamic type.
    enum FoundationValue {
        case string(String), data(Data), date(Date), boolean(Bool), integer(Int64), unsignedInteger(UInt64)
        case real(Double), array([Any]), dictionary([AnyHashable: Any]), null, other

        init(_ any: Any) {
            if let text = any as? String {
                self = .string(text)
            } else if let data = any as? Data {
                self = .data(data)
            } else if let date = any as? Date {
                self = .date(date)
            } else if type(of: any) == Bool.self, let flag = any as? Bool {
                self = .boolean(flag)
            } else if let number = any as? NSNumber {
                switch String(cString: number.objCType) {
                case "f", "d": self = .real(number.doubleValue)
                case "Q", "L", "I":
                    let value = number.uint64Value
                    self = value <= UInt64(Int64.max) ? .integer(Int64(value)) : .unsignedInteger(value)
                default: self = .integer(number.int64Value)
                }
            } else if let array = any as? [Any] {
                self = .array(array)
            } else if let dictionary = any as? [AnyHashable: Any] {
                self = .dictionary(dictionary)
            } else if any is NSNull {
                self = .null
            } else {
                self = .other
            }
        }
    }

    /// Foundation's value as the project's tree, so that both are written by ``text(_:)-(PlistNode)``; nil for a
    /// kind no plist holds.
    static func node(_ any: Any) -> PlistNode? {
        switch FoundationValue(any) {
        case .string(let text): return .string(text)
        case .data(let data): return .data(data)
        case .date(let date): return .date(date)
        case .integer(let number): return .integer(number)
        case .unsignedInteger(let number): return .unsignedInteger(number)
        case .real(let number): return .real(number)
        case .boolean(let flag): return .boolean(flag)
        case .null: return .null
        case .other: return nil
        case .array(let elements):
            var nodes: [PlistNode] = []
            for element in elements {
                guard let node = node(element) else { return nil }
                nodes.append(node)
            }
            return .array(nodes)
        case .dictionary(let entries):
            var pairs: [(key: PlistNode, value: PlistNode)] = []
            for (key, value) in entries {
                guard let key = node(key.base), let value = node(value) else { return nil }
                pairs.append((key, value))
            }
            return .dictionary(PlistDictionary(pairs))
        }
    }

    static func text(_ any: Any) -> String { node(any).map(text) ?? "other" }
}

@Suite("PlistParser")
struct PlistParserTests {
    static let secret = "s3cr3t-made-up"

    static func parse(_ data: Data) throws -> PlistNode { try PlistParser.parse(data) }

    static func plist(_ object: Any, _ format: PropertyListSerialization.PropertyListFormat) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
    }

    /// The error `IOSPlistReader.read` throws for `data`; the test fails when it does not throw one.
    static func readError(_ data: Data, _ name: String) throws -> DumpError {
        try #require(throws: DumpError.self, "\(name)") { try IOSPlistReader.read(data, path: "in/\(name).plist") }
    }

    /// A binary plist whose single top-level object is `object`.
    static func single(_ object: [UInt8]) -> Data { TinyBinaryPlist.build([object]) }

    // MARK: Same records from both forms, Foundation as the oracle

    static var sampleTree: [Any] {
        [
            [
                "class": "genp", "svce": "com.example.app", "acct": Data("user@example.com".utf8),
                "v_Data": Data(secret.utf8), "pdmn": "ak", "cdat": Date(timeIntervalSinceReferenceDate: 553_885_475),
                "sync": true, "crtr": 1_097_889_867, "tags": ["é", "日本", "😀", 1.5, -7, Int64.min, UInt64.max, false],
                "nest": ["a": ["b": [Data(), ""]]], "empty": [String: Any](), "none": [Any](),
            ] as [String: Any],
            ["class": "inet", "srvr": "example.com", "port": 443, "ptcl": "htps", "v_Data": Data([0, 0xFF, 0x80])],
        ]
    }

    @Test("the XML and binary forms of the same plist give the same records")
    func sameRecordsFromBothForms() throws {
        let xml = try IOSPlistReader.read(try Self.plist(Self.sampleTree, .xml), path: "x.plist")
        let binary = try IOSPlistReader.read(try Self.plist(Self.sampleTree, .binary), path: "x.plist")
        #expect(xml.count == 2)
        #expect(xml == binary)
        #expect(
            xml[0].extra["tags"] == "[\"é\", \"日本\", \"😀\", 1.5, -7, -9223372036854775808, 18446744073709551615, false]"
        )
        #expect(xml[0].extra["nest"] == "{\"a\": {\"b\": [\"hex:\", \"\"]}}")
        #expect(xml[1].value == .data(Data([0, 0xFF, 0x80])))
    }

    @Test(
        "both parsers give the tree Foundation gives, for XML and binary",
        arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func matchesFoundation(format: PropertyListSerialization.PropertyListFormat) throws {
        let fixtures = [
            ("generated-ios", "keychain-by-class.plist"), ("real-world", "itunes-backup-keychain-backup-OTAPKI.plist"),
            ("real-world", "ios-device-keys-keybag-passcode0000.plist"),
        ]
        var inputs: [Any] = [Self.sampleTree]
        for (folder, name) in fixtures {
            inputs.append(
                try PropertyListSerialization.propertyList(from: try IOSFixtures.data(folder, name), format: nil))
        }
        for input in inputs {
            let data = try Self.plist(input, format)
            let oracle = try PropertyListSerialization.propertyList(from: data, format: nil)
            #expect(PlistCanonical.text(try Self.parse(data)) == PlistCanonical.text(oracle))
        }
    }

    @Test("the real-world and generated fixture files parse as Foundation parses them")
    func fixturesMatchFoundation() throws {
        let files = [
            ("generated-ios", "keychain-by-class.plist"), ("real-world", "itunes-backup-keychain-backup-OTAPKI.plist"),
            ("real-world", "ios-device-keys-keybag-passcode0000.plist"),
            ("generated/react-native-keychain/ios", "keychain.plist"),
            ("generated/react-native-keychain/ios", "keychain-binary.plist"),
            ("generated/expo-secure-store/ios", "keychain.plist"),
        ]
        for (folder, name) in files {
            let data = try IOSFixtures.data(folder, name)
            let oracle = try PropertyListSerialization.propertyList(from: data, format: nil)
            #expect(PlistCanonical.text(try Self.parse(data)) == PlistCanonical.text(oracle), "\(name)")
        }
    }

    // MARK: Binary object types

    @Test(
        "binary integers of every width: 1, 2 and 4 bytes unsigned, 8 bytes signed, 16 bytes 128-bit",
        arguments: [
            ([0x10, 0xFF], "i(255)"), ([0x11, 0xFF, 0xFE], "i(65534)"),
            ([0x12, 0xFF, 0xFF, 0xFF, 0xFF], "i(4294967295)"),
            ([0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE], "i(-2)"),
            ([0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], "i(9223372036854775807)"),
            (
                [0x14] + [UInt8](repeating: 0, count: 8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
                "i(18446744073709551615)"
            ),
            ([0x14] + [UInt8](repeating: 0, count: 15) + [0x05], "i(5)"),
            ([0x14] + [UInt8](repeating: 0xFF, count: 16), "i(-1)"),
        ] as [([UInt8], String)])
    func binaryIntegers(object: [UInt8], expected: String) throws {
        #expect(PlistCanonical.text(try Self.parse(Self.single(object))) == expected)
    }

    @Test(
        "binary scalars: null, booleans, reals of 4 and 8 bytes, dates, data, ASCII, UTF-16 and UIDs",
        arguments: [
            ([0x00], "null"), ([0x08], "b(false)"), ([0x09], "b(true)"),
            ([0x22, 0x3F, 0xC0, 0x00, 0x00], "r(1.5)"),
            ([0x23, 0xC0, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18], "r(-3.141592653589793)"),
            ([0x33, 0x41, 0xC0, 0x82, 0x7E, 0x98, 0x00, 0x00, 0x00], "t(553975088.0)"),
            ([0x42, 0x00, 0xFF], "d(00ff)"), ([0x40], "d()"), ([0x53, 0x61, 0x62, 0x63], "s(\"abc\")"),
            ([0x61, 0x00, 0xE9], "s(\"é\")"), ([0x62, 0xD8, 0x3D, 0xDE, 0x00], "s(\"😀\")"),
            ([0x80, 0x07], "u(7)"), ([0x81, 0x01, 0x00], "u(256)"),
            ([0x5F, 0x10, 0x03, 0x78, 0x79, 0x7A], "s(\"xyz\")"),
        ] as [([UInt8], String)])
    func binaryScalars(object: [UInt8], expected: String) throws {
        #expect(PlistCanonical.text(try Self.parse(Self.single(object))) == expected)
    }

    @Test("binary containers: arrays, dictionaries (keys then values), shared objects and two-byte references")
    func binaryContainers() throws {
        let shared = TinyBinaryPlist.build([[0xA3, 1, 1, 2], [0x51, 0x61], [0xD1, 1, 3], [0x10, 0x02]])
        #expect(PlistCanonical.text(try Self.parse(shared)) == "[s(\"a\"),s(\"a\"),{s(\"a\"):i(2)}]")
        let wide = TinyBinaryPlist.build([[0xA2, 0, 1, 0, 1], [0x09]], refSize: 2)
        #expect(PlistCanonical.text(try Self.parse(wide)) == "[b(true),b(true)]")
        let duplicateKeys = TinyBinaryPlist.build([[0xD2, 1, 1, 2, 3], [0x51, 0x6B], [0x10, 0x01], [0x10, 0x02]])
        guard case .dictionary(let dictionary) = try Self.parse(duplicateKeys) else {
            Issue.record("not a dictionary")
            return
        }
        #expect(dictionary["k"].map(PlistCanonical.text) == "i(2)")
    }

    @Test("UTF-16 text beyond the BMP and ASCII text read through the reader as records")
    func utf16ThroughTheReader() throws {
        // [{class: "genp", svce: "🔑 clé"}] with the service as UTF-16BE (surrogate pair) and the rest ASCII.
        let service: [UInt8] = [0x66, 0xD8, 0x3D, 0xDD, 0x11, 0x00, 0x20, 0x00, 0x63, 0x00, 0x6C, 0x00, 0xE9]
        let data = TinyBinaryPlist.build([
            [0xA1, 1], [0xD2, 2, 3, 4, 5], [0x55] + Array("class".utf8), [0x54] + Array("svce".utf8),
            [0x54] + Array("genp".utf8), service,
        ])
        let records = try IOSPlistReader.read(data, path: "u.plist")
        #expect(records.map(\.service) == [.string("🔑 clé")])
    }

    @Test("XML scalars: integers (decimal, hexadecimal, signed, unsigned), reals, dates, Base64 with line breaks")
    func xmlScalars() throws {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><array>
            <integer> 42 </integer><integer>-9223372036854775808</integer><integer>18446744073709551615</integer>
            <integer>0x1F</integer><real>2.5</real><real>-1e3</real><date>2018-07-21T18:11:15Z</date>
            <data>
            AP+A
            YQ==
            </data><string>a &amp; b<![CDATA[ <c> ]]></string><true/><false/><dict/><array/>
            </array></plist>
            """
        let expected =
            "[i(42),i(-9223372036854775808),i(18446744073709551615),i(31),r(2.5),r(-1000.0),t(553889475.0),d(00ff8061),"
            + "s(\"a & b <c> \"),b(true),b(false),{},[]]"
        #expect(PlistCanonical.text(try Self.parse(Data(body.utf8))) == expected)
    }

    @Test("dates: a binary plist keeps fractions; XML and binary give the same whole-second date")
    func dates() throws {
        let date = Date(timeIntervalSinceReferenceDate: 553_885_475)
        for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
            let record = try #require(
                try IOSPlistReader.read(try Self.plist([["class": "genp", "cdat": date]], format), path: "d").first)
            #expect(record.createdAt == date)
        }
        let fraction = Date(timeIntervalSinceReferenceDate: -12.75)
        #expect(PlistCanonical.text(try Self.parse(try Self.plist([fraction], .binary))) == "[t(-12.75)]")
    }

    // MARK: Malformed input

    /// A valid binary plist of one item, and the position of its trailer.
    static var validBinary: Data {
        (try? plist([["class": "genp", "v_Data": Data(secret.utf8)]], .binary)) ?? Data()
    }

    static func patched(_ data: Data, at offset: Int, _ bytes: [UInt8]) -> Data {
        var copy = data
        copy.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        return copy
    }

    /// A top-level array of two chains of `length` one-element arrays: the first ends in a string, the second in
    /// the first chain, which the parser has already decoded (at a shallow depth) when the second reaches it.
    static func sharedChains(_ length: Int) -> Data {
        var objects: [[UInt8]] = [[0xA2] + TinyBinaryPlist.bigEndian(1, 2) + TinyBinaryPlist.bigEndian(length + 1, 2)]
        for index in 0..<length {  // objects 1...length: the first chain
            let next = index == length - 1 ? 2 * length + 1 : index + 2
            objects.append([0xA1] + TinyBinaryPlist.bigEndian(next, 2))
        }
        for index in 0..<length {  // objects length+1...2*length: the second chain, ending in the first
            let next = index == length - 1 ? 1 : length + index + 2
            objects.append([0xA1] + TinyBinaryPlist.bigEndian(next, 2))
        }
        objects.append([0x51, 0x61])  // "a"
        return TinyBinaryPlist.build(objects, refSize: 2)
    }

    /// Two items, `{class: genp, svce: "a" + U+D800}` and `{class: genp, svce: "a" + U+D801}`.
    static func loneSurrogateServices() -> Data {
        TinyBinaryPlist.build([
            [0xA2, 1, 2], [0xD2, 3, 4, 5, 6], [0xD2, 3, 4, 5, 7], [0x55] + Array("class".utf8),
            [0x54] + Array("svce".utf8),
            [0x54] + Array("genp".utf8), [0x62, 0x00, 0x61, 0xD8, 0x00], [0x62, 0x00, 0x61, 0xD8, 0x01],
        ])
    }

    /// One object byte (`true`) and an offset table of three entries that all point at it.
    static func aliasedOffsets() -> Data {
        var bytes = Array("bplist00".utf8) + [0x09] + [8, 8, 8]
        bytes +=
            [0, 0, 0, 0, 0, 0, 1, 1] + TinyBinaryPlist.bigEndian(3, 8) + TinyBinaryPlist.bigEndian(0, 8)
            + TinyBinaryPlist.bigEndian(9, 8)
        return Data(bytes)
    }

    static let malformed: [(name: String, data: Data, message: String)] = {
        let valid = validBinary
        let trailer = valid.count - 32
        let deepBinary = TinyBinaryPlist.nestedArrays(PlistNode.maxNesting + 1)
        return [
            ("truncated trailer", valid.prefix(valid.count - 1), "its trailer does not fit the file"),
            ("trailer cut to 40 bytes", valid.prefix(40), "a binary property list that is malformed"),
            (
                "offset table past the end",
                patched(valid, at: trailer + 24, TinyBinaryPlist.bigEndian(valid.count, 8)),
                "its trailer does not fit the file"
            ),
            (
                "object count too large", patched(valid, at: trailer + 8, TinyBinaryPlist.bigEndian(1 << 40, 8)),
                "its trailer does not fit the file"
            ),
            (
                "top object out of range", patched(valid, at: trailer + 16, TinyBinaryPlist.bigEndian(1 << 20, 8)),
                "its trailer does not fit the file"
            ),
            ("offset size 0", patched(valid, at: trailer + 6, [0]), "its trailer does not fit the file"),
            ("reference size 9", patched(valid, at: trailer + 7, [9]), "its trailer does not fit the file"),
            (
                "offset into the offset table", TinyBinaryPlist.build([[0x09]]).map { $0 }.withOffset(0, 9),
                "its offset table points outside its objects"
            ),
            (
                "offset into the magic", TinyBinaryPlist.build([[0x09]]).map { $0 }.withOffset(0, 3),
                "its offset table points outside its objects"
            ),
            (
                "reference out of range", TinyBinaryPlist.build([[0xA1, 7]]),
                "an object reference to an object that does not exist"
            ),
            ("array containing itself", TinyBinaryPlist.build([[0xA1, 0]]), "contains itself"),
            (
                "cycle through a dictionary", TinyBinaryPlist.build([[0xA1, 1], [0xD1, 2, 0], [0x51, 0x6B]]),
                "contains itself"
            ),
            (
                "nested \(PlistNode.maxNesting + 1) deep", deepBinary,
                "nested deeper than \(PlistNode.maxNesting) levels"
            ),
            (
                "a shared chain reused below another chain", sharedChains(200),
                "nested deeper than \(PlistNode.maxNesting) levels"
            ),
            ("more objects than bytes (aliased offsets)", aliasedOffsets(), "more objects than its objects take bytes"),
            (
                "array count 2^62", TinyBinaryPlist.build([[0xAF, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0, 1]]),
                "runs past the end"
            ),
            (
                "dictionary count 2^62 (overflows the byte count)",
                TinyBinaryPlist.build([[0xDF, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]]), "runs past the end"
            ),
            (
                "negative length",
                TinyBinaryPlist.build([[0x4F, 0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]),
                "length is not a valid integer"
            ),
            (
                "length that is not an integer", TinyBinaryPlist.build([[0x4F, 0x51, 0x61]]),
                "length is not a valid integer"
            ),
            (
                "UTF-16 length past the end", TinyBinaryPlist.build([[0x6F, 0x12, 0x7F, 0xFF, 0xFF, 0xFF, 0x00]]),
                "runs past the end"
            ),
            ("integer past the end", TinyBinaryPlist.build([[0x13, 0x01]]), "an integer past the end of the objects"),
            (
                "integer of 32 bytes", TinyBinaryPlist.build([[0x15] + [UInt8](repeating: 0, count: 32)]),
                "an integer wider than 16 bytes"
            ),
            (
                "128-bit integer too large", TinyBinaryPlist.build([[0x14, 1] + [UInt8](repeating: 0, count: 15)]),
                "does not fit in 64 bits"
            ),
            ("real of 2 bytes", TinyBinaryPlist.build([[0x21, 0, 0]]), "a real that is neither 4 nor 8 bytes"),
            ("ASCII above 0x7F", TinyBinaryPlist.build([[0x51, 0xE9]]), "an ASCII string with a byte above 0x7F"),
            (
                "UTF-16 lone high surrogate", TinyBinaryPlist.build([[0x61, 0xD8, 0x00]]),
                "a UTF-16 string with a lone surrogate"
            ),
            (
                "UTF-16 lone low surrogate after a letter", TinyBinaryPlist.build([[0x62, 0x00, 0x61, 0xDC, 0x01]]),
                "a UTF-16 string with a lone surrogate"
            ),
            (
                "UTF-16 high surrogate before a letter", TinyBinaryPlist.build([[0x62, 0xD8, 0x3D, 0x00, 0x61]]),
                "a UTF-16 string with a lone surrogate"
            ),
            (
                "UTF-16 surrogates in the wrong order", TinyBinaryPlist.build([[0x62, 0xDE, 0x00, 0xD8, 0x3D]]),
                "a UTF-16 string with a lone surrogate"
            ),
            // Two services that differ only in their lone surrogates: as U+FFFD they were one service.
            (
                "UTF-16 lone surrogates in two items' svce", loneSurrogateServices(),
                "a UTF-16 string with a lone surrogate"
            ),
            ("fill byte as an object", TinyBinaryPlist.build([[0x0F]]), "a fill byte"),
            ("unknown marker", TinyBinaryPlist.build([[0x70]]), "an object of unknown type 0x7"),
            ("a set", TinyBinaryPlist.build([[0xA1, 1], [0xC1, 2], [0x51, 0x61]]), "holding a set"),
            ("a set reachable from nothing", TinyBinaryPlist.build([[0xA0], [0xC0]]), "holding a set"),
            ("version 01", Data("bplist01".utf8) + valid.dropFirst(8), "a format version other than 00"),
            (
                "bad XML", Data("<?xml version=\"1.0\"?><plist><array><string>s3cr3t</array></plist>".utf8),
                "an XML property list that is malformed"
            ),
            (
                "XML unknown element", Data("<plist><array><secret>s3cr3t</secret></array></plist>".utf8),
                "line 1: an element that is not a plist value: <secret>"
            ),
            (
                "XML key without value", Data("<plist><dict><key>s3cr3t</key></dict></plist>".utf8),
                "a <key> without a value"
            ),
            (
                "XML value without key", Data("<plist><dict><string>s3cr3t</string></dict></plist>".utf8),
                "a value without a <key>"
            ),
            (
                "XML text in an array", Data("<plist><array>s3cr3t</array></plist>".utf8),
                "text or a reference inside <array>"
            ),
            (
                "XML bad integer", Data("<plist><array><integer>12s3cr3t</integer></array></plist>".utf8),
                "an <integer> that is not a 64-bit integer"
            ),
            (
                "XML integer too large", Data("<plist><integer>18446744073709551616</integer></plist>".utf8),
                "not a 64-bit integer"
            ),
            ("XML bad real", Data("<plist><real>s3cr3t</real></plist>".utf8), "a <real> that is not a number"),
            ("XML bad date", Data("<plist><date>s3cr3t</date></plist>".utf8), "a <date> that is not an ISO 8601 date"),
            ("XML two values", Data("<plist><array/><array/></plist>".utf8), "holds more than one value"),
            ("XML empty plist", Data("<plist version=\"1.0\"></plist>".utf8), "holds no value"),
            (
                "XML entity declaration",
                Data(
                    "<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY e \"s3cr3t\">]><plist><string>&e;</string></plist>"
                        .utf8),
                "DOCTYPE declares entities"
            ),
            (
                "XML billion laughs",
                Data(
                    ("<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
                        + "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]><plist><string>&c;</string></plist>").utf8),
                "DOCTYPE declares entities"
            ),
            (
                "XML external entity",
                Data(
                    "<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><plist><string>&x;</string></plist>"
                        .utf8),
                "DOCTYPE declares entities"
            ),
            (
                "XML undeclared entity under the plist DOCTYPE",
                Data(
                    ("<?xml version=\"1.0\"?><!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">"
                        + "<plist><string>&x;</string></plist>").utf8),
                "holds an element or a reference"
            ),
            (
                "XML element declaration", Data("<!DOCTYPE plist [<!ELEMENT plist ANY>]><plist><array/></plist>".utf8),
                "DOCTYPE declares"
            ),
        ]
    }()

    @Test(
        "malformed input is a DumpError(.malformed) naming the file and what is wrong, never a value",
        arguments: malformed.indices)
    func malformedInput(index: Int) throws {
        let (name, data, message) = Self.malformed[index]
        let error = try Self.readError(data, name)
        #expect(error.kind == .malformed, "\(name)")
        #expect(error.path == "in/\(name).plist", "\(name)")
        #expect(error.message.hasPrefix("the file is "), "\(name): \(error.message)")
        #expect(error.message.contains(message), "\(name): \(error.message)")
        #expect(!error.message.contains("s3cr3t"), "\(name)")
        #expect(!error.message.contains("passwd"), "\(name)")
    }

    @Test("every malformed binary plist says the same kind: its offset table's error reads as the trailer's")
    func malformedBinaryKindsAgree() throws {
        let offsetError = try Self.readError(TinyBinaryPlist.build([[0x09]]).map { $0 }.withOffset(0, 9), "offset")
        let trailerError = try Self.readError(Self.validBinary.prefix(Self.validBinary.count - 1), "trailer")
        let kind = "the file is a binary property list that is malformed or truncated ("
        #expect(offsetError.message.hasPrefix(kind), "\(offsetError.message)")
        #expect(trailerError.message.hasPrefix(kind), "\(trailerError.message)")
    }

    @Test("objects shared exponentially are decoded once; an extra value that would expand enormously is refused")
    func exponentialSharing() throws {
        // Level k (k < 28) is an array holding level k + 1 twice: 2^28 leaves from 29 objects, within 32 levels.
        var objects: [[UInt8]] = [
            [0xA1, 1], [0xD2, 2, 3, 4, 5], [0x55] + Array("class".utf8), [0x54] + Array("tags".utf8),
        ]
        objects.append([0x54] + Array("genp".utf8))
        for level in 0..<28 { objects.append([0xA2, UInt8(6 + level), UInt8(6 + level)]) }
        objects.append([0x51, 0x78])
        let data = TinyBinaryPlist.build(objects)
        #expect(try Self.parse(data).kindName == "an array")
        let error = try Self.readError(data, "fan-out")
        #expect(error.message.hasPrefix("item 1: tags reaches the same container twice"), "\(error.message)")
    }

    @Test(
        "the expansion budget is one per read: many items sharing one large value, or one item referred to over and over, are refused"
    )
    func expansionBudgetPerRead() throws {
        // One item whose `tags` expands to 2^14 values (well within one entry's share), referred to 2^10 times.
        var objects: [[UInt8]] = [[0xAF, 0x11, 0x04, 0x00] + Array(repeating: 1, count: 1024)]
        objects.append([0xD2, 2, 3, 4, 5])
        objects += [[0x55] + Array("class".utf8), [0x54] + Array("tags".utf8), [0x54] + Array("genp".utf8)]
        for level in 0..<14 { objects.append([0xA2, UInt8(6 + level), UInt8(6 + level)]) }
        objects.append([0x51, 0x78])
        let shared = TinyBinaryPlist.build(objects)
        let error = try Self.readError(shared, "shared-item")
        #expect(error.message.hasPrefix("the file refers to the same objects over and over"))
        // The same item once, its tags the chain's last value, reads fine.
        objects[0] = [0xA1, 1]
        objects[1] = [0xD2, 2, 3, 4, 19]
        let once = try IOSPlistReader.read(TinyBinaryPlist.build(objects), path: "once.plist")
        #expect(once.count == 1 && once[0].extra["tags"] == "x")
    }

    @Test("items read on every core: the error named is still the first in file order, item or attribute")
    func firstErrorAmongManyItems() throws {
        // Enough items for several chunks; faults in later chunks than the first fault's.
        func document(faults: [Int: String]) -> Data {
            var xml = "<plist><array>"
            for index in 0..<9000 {
                let fault = faults[index] ?? ""
                xml +=
                    "<dict><key>class</key><string>genp</string><key>svce</key><string>s\(index)</string>\(fault)</dict>"
            }
            return Data((xml + "</array></plist>").utf8)
        }
        let wrongKind = "<key>acct</key><integer>1</integer>"
        let notADate = "<key>cdat</key><string>soon</string>"
        let first = try Self.readError(document(faults: [3500: wrongKind, 6000: notADate, 8999: wrongKind]), "faults")
        #expect(first.message.hasPrefix("item 3501: acct is a number, expected a string or data"))
        let second = try Self.readError(document(faults: [6000: notADate, 8999: wrongKind]), "faults")
        #expect(second.message.hasPrefix("item 6001: cdat"))
        // Every item is found a dictionary before any attribute is read: one that is not comes first, even after
        // a faulty attribute.
        var xml = String(decoding: document(faults: [2000: wrongKind]), as: UTF8.self)
        xml = xml.replacingOccurrences(of: "</array>", with: "<string>not an item</string></array>")
        let third = try Self.readError(Data(xml.utf8), "faults")
        #expect(third.message.hasPrefix("item 9001 is a string, expected a dictionary"))
        let records = try IOSPlistReader.read(document(faults: [:]), path: "fine.plist")
        #expect(records.count == 9000)
        #expect(records[8999].service == .string("s8999"))
    }

    @Test("the expansion budget is shared by items read on every core")
    func budgetAcrossChunks() throws {
        // 9000 items (several chunks) sharing one value: each item alone is far within the budget of a 140 KB
        // file (3.2 MiB of keys and values); all of them together are over it with 1 KiB of data, not with 256.
        let over = try Self.readError(ExpansionBudgetTests.sharedValue(items: 9000, size: 1024), "shared")
        #expect(over.message.hasPrefix("the file refers to the same objects over and over"), "\(over.message)")
        let within = try IOSPlistReader.read(
            ExpansionBudgetTests.sharedValue(items: 9000, size: 256), path: "within.plist")
        #expect(within.count == 9000)
    }

    @Test("the text classification of files that are no plist")
    func notAPlist() throws {
        #expect(
            try Self.readError(Data("{ a = b; }".utf8), "openstep").message
                == "the file is not an XML or binary property list")
        #expect(
            try Self.readError(Data([0x00, 0x01, 0x02]), "bytes").message
                == "the file is not a property list (XML or binary)")
        #expect(
            try Self.readError(Data("<?xml version=\"1.0\"?><map><string name=\"a\">b</string></map>".utf8), "prefs")
                .message
                == "the file is not a property list (XML or binary)")
        #expect(
            try Self.readError(Data("bplist00".utf8) + Data([0xFF]), "short").message.contains(
                "shorter than its header"))
    }

    @Test("the reader's errors for the items are unchanged by the parser: non-string keys, wrong kinds")
    func itemErrors() throws {
        let nonStringKey = TinyBinaryPlist.build([[0xA1, 1], [0xD1, 2, 3], [0x10, 0x01], [0x51, 0x78]])
        #expect(try Self.readError(nonStringKey, "k").message == "item 1 has a key that is not a string")
        let uid = TinyBinaryPlist.build([
            [0xA1, 1], [0xD2, 2, 3, 4, 5], [0x55] + Array("class".utf8), [0x54] + Array("svce".utf8),
            [0x54] + Array("genp".utf8), [0x80, 1],
        ])
        #expect(
            try Self.readError(uid, "u").message
                == "item 1: svce is a value of an unknown type, expected a string or data")
    }
}

extension Array where Element == UInt8 {
    /// A copy of a ``TinyBinaryPlist`` file with the 4-byte offset of object `index` set to `offset`.
    fileprivate func withOffset(_ index: Int, _ offset: Int) -> Data {
        let table = Int(self[(count - 8)...].reduce(0) { $0 << 8 | UInt64($1) })
        var copy = self
        copy.replaceSubrange((table + 4 * index)..<(table + 4 * index + 4), with: TinyBinaryPlist.bigEndian(offset, 4))
        return Data(copy)
    }
}
