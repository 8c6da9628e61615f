import ApexKeychain
import Foundation
import Testing

@testable import ApexDumps

/// Builds binary plists byte by byte, for inputs `PropertyListSerialization` won't write (deep nesting, lying
/// lengths, non-string keys). Objects are given already encoded, with one-byte object references unless
/// `refSize` says otherwise.
enum TinyBinaryPlist {
    static func build(_ objects: [[UInt8]], top: Int = 0, refSize: Int = 1) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        for offset in offsets { bytes += bigEndian(offset, 4) }
        bytes +=
            [0, 0, 0, 0, 0, 0, 4, UInt8(refSize)] + bigEndian(objects.count, 8) + bigEndian(top, 8)
            + bigEndian(tableOffset, 8)
        return Data(bytes)
    }

    static func bigEndian(_ value: Int, _ width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// `depth` arrays, each holding the next; the innermost is empty.
    static func nestedArrays(_ depth: Int) -> Data {
        let objects = (0..<depth).map { $0 == depth - 1 ? [UInt8(0xA0)] : [0xA1] + bigEndian($0 + 1, 2) }
        return build(objects, refSize: 2)
    }
}

/// Fixture files beside the tests.
enum IOSFixtures {
    static func data(_ folder: String, _ name: String) throws -> Data {
        let url = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/\(folder)/\(name)")
        return try Data(contentsOf: url)
    }
}

@Suite("IOSPlistReader")
struct IOSPlistReaderTests {
    static let secret = "s3cr3t-made-up"
    static let created = Date(timeIntervalSince1970: 1_532_196_675)
    static let modified = Date(timeIntervalSince1970: 1_554_099_452)

    static func plist(_ object: Any, _ format: PropertyListSerialization.PropertyListFormat) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
    }

    static func xml(_ object: Any) -> Data {
        (try? plist(object, .xml)) ?? Data()
    }

    static let biometryOrPasscode = ACLTestBuilder.der([.biometryCurrentSet, .devicePasscode, .or], protection: "akpu")

    /// A generic password with every attribute the reader maps and a few it keeps in `extra`.
    static var genericItem: [String: Any] {
        [
            "class": "genp", "svce": "com.example.app", "acct": Data("user@example.com".utf8), "gena": "generic-field",
            "v_Data": Data(secret.utf8), "pdmn": "akpu", "agrp": "TEAM123.com.example.app", "labl": "Example label",
            "crtr": 1_097_889_867, "sync": 0, "cdat": created, "mdat": modified, "accc": biometryOrPasscode,
            "desc": "a description", "invi": 1, "nega": true, "v_PersistentRef": Data([0x67, 0x65, 0x6E, 0x70, 0, 1]),
            "tags": ["a", 1, Data([0xFF])], "sdat": created,
        ]
    }

    static var genericRecord: KeychainRecord {
        KeychainRecord(
            location: "item 1", itemClass: "genp", service: .string("com.example.app"),
            account: .data(Data("user@example.com".utf8)), generic: .string("generic-field"),
            value: .data(Data(secret.utf8)),
            protection: "akpu", accessGroup: "TEAM123.com.example.app", label: "Example label", creator: 0x4170_784B,
            synchronizable: false, createdAt: created, modifiedAt: modified,
            accessControl: AccessControlDescription(
                flags: [.biometryCurrentSet, .devicePasscode, .or], protection: "akpu",
                raw: "der:" + biometryOrPasscode.map { String(format: "%02x", $0) }.joined()),
            extra: [
                "desc": "a description", "invi": "1", "nega": "true", "v_PersistentRef": "hex:67656e700001",
                "tags": "[\"a\", 1, \"hex:ff\"]", "sdat": "2018-07-21T18:11:15Z",
            ])
    }

    static var internetItem: [String: Any] {
        [
            "class": "inet", "srvr": "example.com", "ptcl": "htps", "port": 443, "path": "/login", "atyp": "form",
            "sdmn": "realm", "acct": "user", "v_Data": Data("made-up-password".utf8), "pdmn": "ak", "sync": true,
            "accc": "<SecAccessControlRef: ak;od(cup(true));odel(true);oe(true)>",
        ]
    }

    static var internetRecord: KeychainRecord {
        KeychainRecord(
            location: "item 2", itemClass: "inet", account: .string("user"),
            value: .data(Data("made-up-password".utf8)),
            protection: "ak", synchronizable: true, server: "example.com", protocolCode: "htps", port: 443,
            path: "/login",
            authenticationType: "form", securityDomain: "realm",
            accessControl: AccessControlDescription(
                flags: [.devicePasscode], protection: "ak",
                raw: "<SecAccessControlRef: ak;od(cup(true));odel(true);oe(true)>"))
    }

    // MARK: Real files

    @Test("the real iTunes keychain-backup.plist is refused as an encrypted backup, naming its 12 sealed items")
    func realBackup() throws {
        let data = try IOSFixtures.data("real-world", "itunes-backup-keychain-backup-OTAPKI.plist")
        #expect(IOSPlistReader.looksLike(data.prefix(64)))
        let error = try #require(throws: DumpError.self) { try IOSPlistReader.read(data, path: "backup.plist") }
        #expect(error.kind == .unsupported)
        #expect(error.path == "backup.plist")
        #expect(error.message.contains("encrypted keychain backup"))
        #expect(error.message.contains("12 items"))
        #expect(error.message.contains("blob version 3"))
    }

    @Test("the real device-keys plist is not a keychain dump: it holds device keys and a keybag, not items")
    func realDeviceKeys() throws {
        let data = try IOSFixtures.data("real-world", "ios-device-keys-keybag-passcode0000.plist")
        #expect(IOSPlistReader.looksLike(data.prefix(256)))
        let error = try #require(throws: DumpError.self) { try IOSPlistReader.read(data, path: "keys.plist") }
        #expect(error.kind == .notADump)
        #expect(error.path == "keys.plist")
        #expect(error.message.contains("device-keys plist"))
        #expect(!error.message.contains("0000"))
    }

    @Test("the hand-made fixture holds a generic and an internet password by class")
    func generatedFixture() throws {
        let data = try IOSFixtures.data("generated-ios", "keychain-by-class.plist")
        let records = try IOSPlistReader.read(data, path: "keychain-by-class.plist")
        #expect(records.map(\.location) == ["genp item 1", "genp item 2", "inet item 1"])
        #expect(records.map(\.itemClass) == ["genp", "genp", "inet"])
        #expect(records[0].service == .string("com.example.rnkeychain"))
        #expect(records[0].creator == 0x6143_7274)
        #expect(records[0].accessControl?.flags == [.biometryAny, .devicePasscode, .or])
        #expect(records[1].account == .data(Data("expo-key".utf8)))
        #expect(records[2].server == "api.example.com")
        #expect(records.allSatisfy { $0.extra["keybag-uuid"] == nil })
    }

    @Test("an attribute written twice in one item takes its last value, in small and large items", arguments: [0, 20])
    func repeatedAttribute(padding: Int) throws {
        var item = "<key>svce</key><string>first</string><key>acct</key><string>a</string>"
        for index in 0..<padding { item += "<key>x\(index)</key><string>\(index)</string>" }
        item += "<key>svce</key><string>last</string><key>class</key><string>genp</string>"
        let xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><array><dict>\(item)</dict></array></plist>"
        let records = try IOSPlistReader.read(Data(xml.utf8), path: "repeated.plist")
        #expect(records.count == 1)
        #expect(records.first?.service == .string("last"))
        #expect(records.first?.account == .string("a"))
        #expect(records.first?.extra.count == padding)
    }

    // MARK: Round trips

    @Test(
        "every attribute survives an XML and a binary round trip",
        arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func roundTrip(format: PropertyListSerialization.PropertyListFormat) throws {
        let data = try Self.plist([Self.genericItem, Self.internetItem], format)
        let records = try IOSPlistReader.read(data, path: "dump.plist")
        #expect(records == [Self.genericRecord, Self.internetRecord])
    }

    @Test("a dictionary by class takes each item's class from its key unless the item has one, and skips other keys")
    func dictionaryByClass() throws {
        var unclassed = Self.genericItem
        unclassed["class"] = nil
        var classed = Self.internetItem
        classed["class"] = "kSecClassInternetPassword"
        let top: [String: Any] = [
            "genp": [unclassed, ["svce": "second", "v_Data": Data([1])]], "inet": [classed],
            "keybag-uuid": "2f0e1f3a-0000-4000-8000-000000000000", "ctkp": [["svce": "ignored"]],
        ]
        let records = try IOSPlistReader.read(try Self.plist(top, .binary), path: "d.plist")
        #expect(records.map(\.location) == ["genp item 1", "genp item 2", "inet item 1"])
        #expect(records.map(\.itemClass) == ["genp", "genp", "inet"])
        #expect(records[1].service == .string("second"))
        #expect(records.allSatisfy { $0.extra["keybag-uuid"] == nil && $0.service != .string("ignored") })
    }

    @Test(
        "crtr reads as an integer, a decimal string, four characters or a signed 32-bit value",
        arguments: [
            (1_097_889_867 as any Sendable, UInt32(0x4170_784B)), ("1097889867", 0x4170_784B), ("ApxK", 0x4170_784B),
            ("aCrt", 0x6143_7274), (0, 0), (-1, 0xFFFF_FFFF), (4_294_967_295, 0xFFFF_FFFF), ("0", 0),
        ] as [(any Sendable, UInt32)])
    func creatorForms(creator: any Sendable, expected: UInt32) throws {
        let data = try Self.plist([["class": "genp", "crtr": creator]], .xml)
        #expect(try IOSPlistReader.read(data, path: "c.plist").first?.creator == expected)
    }

    @Test(
        "sync reads as 0/1 or a boolean",
        arguments: [(0 as any Sendable, false), (1, true), (false, false), (true, true)] as [(any Sendable, Bool)])
    func syncForms(sync: any Sendable, expected: Bool) throws {
        for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
            let data = try Self.plist([["class": "genp", "sync": sync]], format)
            #expect(try IOSPlistReader.read(data, path: "s.plist").first?.synchronizable == expected)
        }
    }

    @Test(
        "dates read as plist dates, CFAbsoluteTime numbers, ISO 8601 or NSDate-description text",
        arguments: [
            created as any Sendable, created.timeIntervalSinceReferenceDate, "2018-07-21T18:11:15Z",
            "2018-07-21T20:11:15+02:00",
            "2018-07-21 18:11:15 +0000",
        ] as [any Sendable])
    func dateForms(date: any Sendable) throws {
        let data = try Self.plist([["class": "genp", "cdat": date, "mdat": date]], .binary)
        let record = try #require(try IOSPlistReader.read(data, path: "d.plist").first)
        #expect(record.createdAt == Self.created)
        #expect(record.modifiedAt == Self.created)
    }

    @Test("a binary plist keeps fractional seconds")
    func fractionalDates() throws {
        let date = Date(timeIntervalSinceReferenceDate: 553_885_475.25)
        let data = try Self.plist([["class": "genp", "cdat": date]], .binary)
        #expect(try IOSPlistReader.read(data, path: "d.plist").first?.createdAt == date)
    }

    @Test("dates far outside the calendar are kept as absolute times in extra, and refused as cdat")
    func extremeDates() throws {
        let far = Date(timeIntervalSinceReferenceDate: 1e15)
        let data = try Self.plist(
            [["class": "genp", "sdat": far, "edat": Date(timeIntervalSinceReferenceDate: -1e15)]], .binary)
        let record = try #require(try IOSPlistReader.read(data, path: "d.plist").first)
        #expect(
            record.extra == ["sdat": "absolute-time:1000000000000000.0", "edat": "absolute-time:-1000000000000000.0"])
        #expect(
            try IOSPlistReader.read(try Self.plist([["class": "genp", "cdat": far]], .binary), path: "d").first?
                .createdAt == far)
        let error = try #require(throws: DumpError.self) {
            try IOSPlistReader.read(try Self.plist([["class": "genp", "cdat": 1e300]], .binary), path: "d")
        }
        #expect(error.message == "item 1: cdat is out of range")
    }

    @Test("text attributes accept UTF-8 data; label data that is not UTF-8 is kept in extra as hex")
    func textAsData() throws {
        let item: [String: Any] = [
            "class": Data("genp".utf8), "pdmn": Data("cku".utf8), "agrp": Data("group".utf8),
            "labl": Data([0xFF, 0x00]),
            "srvr": Data("host".utf8), "svce": Data([0xC3, 0x28]), "pdmnx": "kept",
        ]
        let record = try #require(try IOSPlistReader.read(try Self.plist([item], .xml), path: "t.plist").first)
        #expect(record.itemClass == "genp")
        #expect(record.protection == "cku")
        #expect(record.accessGroup == "group")
        #expect(record.label == nil)
        #expect(record.extra == ["labl": "hex:ff00", "pdmnx": "kept"])
        #expect(record.server == "host")
        #expect(record.service == .data(Data([0xC3, 0x28])))
        #expect(record.service?.text == nil)
        #expect(record.value == .absent)
    }

    @Test("protection constant names read as pdmn codes, and other text as found")
    func protectionNames() throws {
        let items: [[String: Any]] = [
            ["class": "genp", "pdmn": "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly"],
            ["class": "genp", "pdmn": "dku"],
            ["class": "genp", "pdmn": "zz"],
        ]
        let records = try IOSPlistReader.read(try Self.plist(items, .xml), path: "p.plist")
        #expect(records.map(\.protection) == ["cku", "dku", "zz"])
    }

    @Test("an item without class is genp with svce, inet with an internet attribute, else refused")
    func classInference() throws {
        let records = try IOSPlistReader.read(
            try Self.plist([["svce": "s", "acct": "a"], ["srvr": "h", "acct": "a"], ["gena": Data()]], .xml),
            path: "i.plist")
        #expect(records.map(\.itemClass) == ["genp", "inet", "genp"])
        let error = try #require(throws: DumpError.self) {
            try IOSPlistReader.read(try Self.plist([["acct": "a", "v_Data": Data()]], .xml), path: "i.plist")
        }
        #expect(
            error.message
                == "item 1: has no class, and no attribute that tells a generic password from an internet password")
    }

    /// A backup item: `v_Data` starting with a version-3 header (key class 11, 40-byte wrapped key).
    static var sealedPair: [String: Any] {
        var blob = Data([3, 0, 0, 0, 11, 0, 0, 0, 40, 0, 0, 0])
        blob.append(Data(repeating: 0xA5, count: 40 + 32 + 16))
        return ["v_Data": blob, "v_PersistentRef": Data("genp".utf8) + Data(repeating: 0, count: 7) + Data([1])]
    }

    @Test("a backup-shaped plist is refused; one sealed item among readable items is reported damaged")
    func sealedItems() throws {
        let backup: [String: Any] = [
            "genp": [Self.sealedPair, Self.sealedPair], "keybag-uuid": "00000000-0000-4000-8000-000000000000",
        ]
        let error = try #require(throws: DumpError.self) {
            try IOSPlistReader.read(try Self.plist(backup, .binary), path: "b")
        }
        #expect(error.kind == .unsupported)
        #expect(error.message.contains("2 items"))

        let mixed: [String: Any] = ["genp": [Self.genericItem, Self.sealedPair]]
        let records = try IOSPlistReader.read(try Self.plist(mixed, .binary), path: "m")
        #expect(records[0].value == .data(Data(Self.secret.utf8)))
        #expect(
            records[1].value == .damaged("v_Data is a sealed keychain blob (version 3, key class 11), not the secret"))
        #expect(records[1].extra["v_PersistentRef"] != nil)
    }

    @Test("looksLike knows binary and XML plists and nothing else")
    func looksLike() throws {
        #expect(IOSPlistReader.looksLike(try Self.plist([Self.genericItem], .binary).prefix(16)))
        #expect(IOSPlistReader.looksLike(try Self.plist([Self.genericItem], .xml).prefix(200)))
        #expect(IOSPlistReader.looksLike(Data("\u{FEFF}\n<plist version=\"1.0\"><array/></plist>".utf8)))
        #expect(!IOSPlistReader.looksLike(Data("<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>".utf8)))
        #expect(!IOSPlistReader.looksLike(Data("[{\"item_class\": \"genp\"}]".utf8)))
        #expect(!IOSPlistReader.looksLike(Data()))
        #expect(!IOSPlistReader.looksLike(Data("SQLite format 3\0".utf8)))
    }

    // MARK: Malformed input

    static let malformed: [(name: String, data: Data, message: String)] = {
        let item = ["class": "genp", "v_Data": Data(secret.utf8)] as [String: Any]
        func with(_ key: String, _ value: Any) -> Data { xml([item.merging([key: value]) { $1 }]) }
        let valid = xml([item])
        let validBinary = (try? plist([item], .binary)) ?? Data()
        let deepXML =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\">"
            + String(repeating: "<array>", count: 10_000) + String(repeating: "</array>", count: 10_000) + "</plist>"
        var deepExtra: Any = ["s3cr3t"]
        for _ in 0..<40 { deepExtra = [deepExtra] }
        var invalidUTF8 = Data(
            String(decoding: valid, as: UTF8.self).replacingOccurrences(of: "genp", with: "ge\u{1}p").utf8)
        invalidUTF8 = Data(invalidUTF8.map { $0 == 0x01 ? 0xFF : $0 })
        return [
            ("empty", Data(), "the file is empty"),
            ("truncated XML", valid.prefix(valid.count / 2), "an XML property list that is malformed"),
            (
                "truncated binary", validBinary.prefix(validBinary.count - 10),
                "a binary property list that is malformed"
            ),
            (
                "wrong binary magic", Data("bplist99".utf8) + validBinary.dropFirst(8),
                "a binary property list that is malformed"
            ),
            ("not a plist", Data("cplist00\u{0}\u{1}\u{2}".utf8), "not a property list"),
            ("OpenStep text", Data("hello".utf8), "not an XML or binary property list"),
            ("magic only", Data("bplist00".utf8), "not an XML or binary property list"),
            ("item not a dictionary", xml([item, "s3cr3t"]), "item 2 is a string, expected a dictionary"),
            ("item without a class", xml([["acct": "a"]]), "item 1: has no class"),
            ("svce a number", with("svce", 12), "item 1: svce is a number, expected a string or data"),
            ("acct a date", with("acct", created), "item 1: acct is a date, expected a string or data"),
            ("v_Data a number", xml([["class": "genp", "v_Data": 5]]), "item 1: v_Data is a number, expected data"),
            (
                "crtr bad text", with("crtr", "Apx"),
                "item 1: crtr is text that is neither a decimal number nor four characters"
            ),
            (
                "crtr too large", with("crtr", 1 << 40),
                "item 1: crtr is a number that is not a 32-bit four-character code"
            ),
            ("crtr data", with("crtr", Data([1, 2, 3, 4])), "item 1: crtr is data, expected an integer"),
            ("cdat bad text", with("cdat", "yesterday"), "item 1: cdat is text that is not a date"),
            ("mdat data", with("mdat", Data()), "item 1: mdat is data, expected a date"),
            ("port out of range", with("port", 70_000), "item 1: port is not a port number"),
            ("port a boolean", with("port", true), "item 1: port is a boolean, expected an integer"),
            ("agrp a number", with("agrp", 1), "item 1: agrp is a number, expected a string"),
            ("labl an array", with("labl", ["x"]), "item 1: labl is an array, expected a string or data"),
            ("class not an array", xml(["genp": "s3cr3t"]), "genp is a string, expected an array of items"),
            // Every class is checked to be an array before any item is read.
            (
                "later class not an array", xml(["genp": ["s3cr3t"], "inet": "s3cr3t"]),
                "inet is a string, expected an array of items"
            ),
            (
                "class item not a dictionary", xml(["inet": [["class": "inet"], 3]]),
                "inet item 2 is a number, expected a dictionary"
            ),
            (
                "XML nested 10000 deep", Data(deepXML.utf8),
                "an XML property list that is malformed, truncated or nested too deeply"
            ),
            (
                "binary nested 10000 deep", TinyBinaryPlist.nestedArrays(10_000),
                "a binary property list that is malformed"
            ),
            ("extra nested 42 deep", with("tags", deepExtra), "item 1: tags nests deeper than 32 levels"),
            (
                "binary data length 0xFFFFFFFF",
                TinyBinaryPlist.build([[0xA1, 1], [0x4F, 0x12, 0xFF, 0xFF, 0xFF, 0xFF]]), "a binary property list"
            ),
            (
                "binary array length 2^60",
                TinyBinaryPlist.build([[0xAF, 0x13, 0x10, 0, 0, 0, 0, 0, 0, 0, 1], [0x08]]), "a binary property list"
            ),
            (
                "binary non-string key",
                TinyBinaryPlist.build([[0xA1, 1], [0xD1, 2, 3], [0x10, 0x01], [0x51, 0x78]]),
                "item 1 has a key that is not a string"
            ),
            ("invalid UTF-8 in XML", invalidUTF8, "an XML property list that is malformed"),
            // A `<data>` that is not valid Base64 outside v_Data: the item's identity or attributes can't be trusted.
            (
                "acct <data> not Base64", xmlItems([xmlItem(data: "acct", "s3cr3t")]),
                "item 1: acct is <data> that is not valid Base64"
            ),
            (
                "svce <data> not Base64", xmlItems([xmlItem(data: "svce", "!!!!")]),
                "item 1: svce is <data> that is not valid Base64"
            ),
            (
                "extra <data> not Base64", xmlItems([xmlItem(data: "v_PersistentRef", "QUJDRA==QUJD")]),
                "item 1: v_PersistentRef is <data> that is not valid Base64 (Base64 text after the padding)"
            ),
            (
                "nested extra <data> not Base64",
                xmlItems([
                    xmlItem(data: "v_PersistentRef", "QUJD", more: "<key>tags</key><array><data>s3cr3t</data></array>")
                ]),
                "item 1: tags holds <data> that is not valid Base64"
            ),
            // One shared object referred to over and over: read out, far more bytes than the file (issue 16).
            (
                "one 1 MiB <data> in the v_Data of 520 items",
                sharedValue(items: 520, key: "v_Data", dataObject(1 << 20)), overLimit
            ),
            (
                "one 64 KiB <data> in the v_Data of 9000 items, read on every core",
                sharedValue(items: 9000, key: "v_Data", dataObject(64 << 10)), overLimit
            ),
            (
                "one 1 MiB string as the svce of 520 items", sharedValue(items: 520, key: "svce", asciiObject(1 << 20)),
                overLimit
            ),
        ]
    }()

    /// Values that are written out as text take the text's bytes: data as `hex:…` in `extra`, and every string of
    /// a container in `extra`. A file of some 17 KB may write out about 1.3 MiB (16 times its size, and 1 MiB):
    /// each attack fits as found, not as text, and its half fits as text.
    static let textBudgetAttacks: [(name: String, data: Data, half: Data)] = [
        // 0.9 MiB of data, but twice that as hex text.
        (
            "one 16 KiB <data> in an extra attribute of 60 items",
            sharedValue(items: 60, key: "sha1", dataObject(16 << 10)),
            sharedValue(items: 30, key: "sha1", dataObject(16 << 10))
        ),
        (
            "one 16 KiB string 100 times in an extra array", sharedInArray(count: 100, asciiObject(16 << 10)),
            sharedInArray(count: 50, asciiObject(16 << 10))
        ),
        (
            "one 16 KiB <data> 60 times in an extra array", sharedInArray(count: 60, dataObject(16 << 10)),
            sharedInArray(count: 30, dataObject(16 << 10))
        ),
    ]

    @Test(
        "values written out as text in extra take their text's bytes from the budget",
        arguments: textBudgetAttacks.indices)
    func textBudget(index: Int) throws {
        let (name, data, half) = Self.textBudgetAttacks[index]
        let error = try #require(throws: DumpError.self, "\(name)") {
            try IOSPlistReader.read(data, path: "in/dump.plist")
        }
        #expect(error.kind == .malformed)
        #expect(error.path == "in/dump.plist")
        #expect(error.message.hasPrefix(Self.overLimit), "\(name): \(error.message)")
        #expect(
            error.message.hasSuffix(" MiB (16 times the file's size, and 1 MiB), and it is refused"),
            "\(name): \(error.message)")
        #expect(throws: Never.self, "\(name)") { try IOSPlistReader.read(half, path: "in/dump.plist") }
    }

    /// What a file whose shared values would write out far more bytes than it holds is told.
    static let overLimit =
        "the file refers to the same objects over and over: read out, its keys and values would take more than "

    /// An XML plist of the items' `<dict>` texts.
    static func xmlItems(_ items: [String]) -> Data {
        Data(
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<array>\n" + items.joined()
                + "</array>\n</plist>\n").utf8)
    }

    /// A generic password of service `svce` whose attribute `key` is the `<data>` element of `text` (as written,
    /// Base64 or not), then `more`.
    static func xmlItem(svce: String = "s", data key: String, _ text: String, more: String = "") -> String {
        "\t<dict>\n\t\t<key>class</key>\n\t\t<string>genp</string>\n\t\t<key>svce</key>\n\t\t<string>\(svce)</string>\n"
            + "\t\t<key>\(key)</key>\n\t\t<data>\(text)</data>\n\t\t\(more)\n\t</dict>\n"
    }

    /// A binary `<data>` object of `count` bytes.
    static func dataObject(_ count: Int) -> [UInt8] {
        [0x4F, 0x12] + TinyBinaryPlist.bigEndian(count, 4) + (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    }

    /// A binary ASCII string object of `count` bytes.
    static func asciiObject(_ count: Int) -> [UInt8] {
        [0x5F, 0x12] + TinyBinaryPlist.bigEndian(count, 4) + [UInt8](repeating: UInt8(ascii: "a"), count: count)
    }

    /// `items` references to one item `{class: genp, <key>: shared}`: the file holds `shared` once.
    static func sharedValue(items: Int, key: String, _ shared: [UInt8]) -> Data {
        TinyBinaryPlist.build(
            [
                [0xAF, 0x11] + TinyBinaryPlist.bigEndian(items, 2)
                    + Array(repeating: [0, 1], count: items).flatMap { $0 },
                [0xD2, 0, 2, 0, 4, 0, 3, 0, 5], [0x55] + Array("class".utf8), [0x54] + Array("genp".utf8),
                [0x50 | UInt8(key.utf8.count)] + Array(key.utf8), shared,
            ], refSize: 2)
    }

    /// One item `{class: genp, tags: [shared, shared, …]}` with `count` references to `shared`.
    static func sharedInArray(count: Int, _ shared: [UInt8]) -> Data {
        TinyBinaryPlist.build(
            [
                [0xA1, 0, 1], [0xD2, 0, 2, 0, 4, 0, 3, 0, 5], [0x55] + Array("class".utf8), [0x54] + Array("genp".utf8),
                [0x54] + Array("tags".utf8),
                [0xAF, 0x11] + TinyBinaryPlist.bigEndian(count, 2)
                    + Array(repeating: [0, 6], count: count).flatMap { $0 },
                shared,
            ], refSize: 2)
    }

    @Test(
        "malformed input is refused with DumpError(.malformed) naming the path and the problem",
        arguments: malformed.indices)
    func malformedInput(index: Int) throws {
        let (name, data, message) = Self.malformed[index]
        let error = try #require(throws: DumpError.self, "\(name)") {
            try IOSPlistReader.read(data, path: "in/dump.plist")
        }
        #expect(error.kind == .malformed, "\(name)")
        #expect(error.path == "in/dump.plist", "\(name)")
        #expect(error.message.contains(message), "\(name): \(error.message)")
        #expect(!error.message.contains("s3cr3t"), "\(name)")
    }

    /// Plists that hold no keychain data at all: an app's own plists.
    static let notDumps: [(name: String, data: Data, message: String)] = [
        (
            "top-level string", xml("s3cr3t"),
            "not a keychain dump: the top level is a string, expected an array of items"
        ),
        ("top-level number", xml(7), "not a keychain dump: the top level is a number"),
        ("an array of strings", xml(["s3cr3t"]), "not a keychain dump: the top-level array holds no keychain item"),
        (
            "an array of settings", xml([["Title": "s3cr3t", "Type": "PSToggleSwitchSpecifier"]]),
            "not a keychain dump: the top-level array holds no keychain item"
        ),
        (
            "an Info.plist", xml(["CFBundleIdentifier": "com.example.s3cr3t", "CFBundleVersion": "1"]),
            "not a keychain dump: the top-level dictionary has none of the class arrays genp, inet, cert, keys, idnt"
        ),
    ]

    @Test("a plist that holds no keychain data is refused as not a dump", arguments: notDumps.indices)
    func notADump(index: Int) throws {
        let (name, data, message) = Self.notDumps[index]
        let error = try #require(throws: DumpError.self, "\(name)") {
            try IOSPlistReader.read(data, path: "in/Info.plist")
        }
        #expect(error.kind == .notADump, "\(name)")
        #expect(error.path == "in/Info.plist", "\(name)")
        #expect(error.message.hasPrefix(message), "\(name): \(error.message)")
        #expect(!error.message.contains("s3cr3t"), "\(name)")
        // An empty array is an empty dump.
        #expect(try IOSPlistReader.read(Self.xml([Any]()), path: "in/empty.plist").isEmpty)
    }

    @Test("one value shared by many items reads while the whole stays within 16 times the file's size and 1 MiB")
    func sharedValueWithinTheLimit() throws {
        // 1 MiB and 16 times 1 MiB: 17 MiB, 16 items of 1 MiB and their keys.
        let large = try IOSPlistReader.read(
            Self.sharedValue(items: 16, key: "v_Data", Self.dataObject(1 << 20)), path: "in.plist")
        #expect(large.count == 16)
        #expect(large.allSatisfy { $0.value == large[0].value })
        if case .data(let data) = large[0].value { #expect(data.count == 1 << 20) } else { Issue.record("no value") }
        let over = try #require(throws: DumpError.self) {
            try IOSPlistReader.read(
                Self.sharedValue(items: 18, key: "v_Data", Self.dataObject(1 << 20)), path: "in.plist")
        }
        #expect(over.message.hasPrefix(Self.overLimit))
        // 64 KiB: 2 MiB for 32 items.
        let many = try IOSPlistReader.read(
            Self.sharedValue(items: 30, key: "v_Data", Self.dataObject(64 << 10)), path: "in.plist")
        #expect(many.count == 30)
    }

    // MARK: Base64 of XML <data>

    /// `<data>` texts that are not Base64, and what the value's reason says.
    static let damagedBase64: [(name: String, text: String, reason: String)] = [
        ("characters outside the alphabet", "!!!!", "a character outside the Base64 alphabet"),
        ("a last group cut short", "QUJ", "a last group shorter than four characters, without its padding"),
        ("a single character", "Q", "a last group shorter than four characters, without its padding"),
        ("text after the padding", "QUJDRA==QUJD", "Base64 text after the padding"),
        ("one = where two are needed", "QQ=", "padding that does not complete its group of four"),
        ("padding alone", "====", "padding that does not complete its group of four"),
        ("three =", "QQ===", "padding that does not complete its group of four"),
        ("stray bits in the last character", "QR==", "stray bits in its last character"),
        ("stray bits before one =", "QUJ=", "stray bits in its last character"),
        ("a non-breaking space", "QUJD\u{A0}", "a character outside the Base64 alphabet"),
        ("the URL-safe alphabet", "-_-_", "a character outside the Base64 alphabet"),
    ]

    @Test(
        "v_Data <data> that is not valid Base64 is a damaged value: that item only, never other bytes",
        arguments: damagedBase64.indices)
    func damagedBase64Value(index: Int) throws {
        let (name, text, reason) = Self.damagedBase64[index]
        let data = Self.xmlItems([
            Self.xmlItem(svce: "first", data: "v_Data", "b2s="), Self.xmlItem(svce: "damaged", data: "v_Data", text),
            Self.xmlItem(svce: "last", data: "v_Data", "\n\t\tb2s=\n\t\t"),
        ])
        let records = try IOSPlistReader.read(data, path: "in.plist")
        #expect(records.map(\.service) == [.string("first"), .string("damaged"), .string("last")], "\(name)")
        #expect(records[0].value == .data(Data("ok".utf8)), "\(name)")
        #expect(records[2].value == .data(Data("ok".utf8)), "\(name)")
        #expect(
            records[1].value == .damaged("damaged value: v_Data is <data> that is not valid Base64 (\(reason))"),
            "\(name)")
    }

    /// `<data>` texts that are Base64 as Apple's and other writers lay it out, and their bytes.
    static let validBase64: [(name: String, text: String, bytes: [UInt8])] = {
        let long = (0..<100).map { UInt8($0) }
        let wrapped = Data(long).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed])
        return [
            ("empty", "", []),
            ("white space only", "\n\t\t", []),
            ("Apple's layout: a line of its own, indented with tabs", "\n\tQUJD\n\tRA==\n\t", Array("ABCD".utf8)),
            ("CRLF line ends", "\r\nQUJDRA==\r\n", Array("ABCD".utf8)),
            ("spaces inside", "QU JD RA ==", Array("ABCD".utf8)),
            ("a line break between the = signs", "QQ=\n\t=", Array("A".utf8)),
            ("one =", "QUI=", Array("AB".utf8)),
            ("no padding needed", "QUJD", Array("ABC".utf8)),
            (
                "all 64 characters", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                Array(Data(base64Encoded: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")!)
            ),
            ("76-character lines", "\n" + wrapped + "\n", long),
        ]
    }()

    @Test("v_Data <data> in Base64 laid out with white space reads as its bytes", arguments: validBase64.indices)
    func validBase64Value(index: Int) throws {
        let (name, text, bytes) = Self.validBase64[index]
        let records = try IOSPlistReader.read(Self.xmlItems([Self.xmlItem(data: "v_Data", text)]), path: "in.plist")
        #expect(records.map(\.value) == [.data(Data(bytes))], "\(name)")
    }
}
