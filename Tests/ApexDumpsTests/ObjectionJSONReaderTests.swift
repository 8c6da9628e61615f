import ApexKeychain
import Foundation
import Testing

@testable import ApexDumps

@Suite("ObjectionJSONReader")
struct ObjectionJSONReaderTests {
    /// One objection item: every field objection writes, empty, then the overrides.
    static func item(_ overrides: [String: String] = [:]) -> [String: String] {
        let names = [
            "access_control", "accessible_attribute", "account", "alias", "comment", "create_date", "creator",
            "custom_icon",
            "data", "dataHex", "description", "entitlement_group", "generic", "invisible", "label", "modification_date",
            "negative", "protected", "script_code", "service", "type",
        ]
        var fields = Dictionary(uniqueKeysWithValues: names.map { ($0, "") })
        fields["item_class"] = "kSecClassGenericPassword"
        fields.merge(overrides) { $1 }
        return fields
    }

    static func json(_ items: [Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: items, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }

    static func read(_ items: [Any]) throws -> [KeychainRecord] {
        try ObjectionJSONReader.read(json(items), path: "keychain.json")
    }

    static func date(_ text: String) -> Date? {
        ISO8601DateFormatter().date(from: text)
    }

    // MARK: Real and hand-made files

    @Test("the real objection dump reads as two genp items; the odd-length dataHex value is damaged")
    func realDump() throws {
        let data = try IOSFixtures.data("real-world", "objection-ios-keychain-dump-ipewpew.json")
        #expect(ObjectionJSONReader.looksLike(data.prefix(512)))
        let records = try ObjectionJSONReader.read(data, path: "keychain.json")
        #expect(records.count == 2)
        #expect(records.map(\.location) == ["item 1", "item 2"])
        #expect(records.map(\.itemClass) == ["genp", "genp"])
        #expect(records.map(\.service) == [.string("credentials"), .string("creds_as_string")])
        #expect(records.map(\.account) == [.string("credentials"), .string("creds_as_string")])
        #expect(records.map(\.generic) == [.string("credentials"), .string("creds_as_string")])
        #expect(records.allSatisfy { $0.protection == "akpu" })
        #expect(records.allSatisfy { $0.accessGroup == "8AH3PS2AS7.za.sensepost.ipewpew" })
        #expect(records.allSatisfy { $0.accessControl == AccessControlDescription(flags: [], raw: "None") })
        #expect(
            records.allSatisfy { $0.createdAt == Self.date("2019-04-01T06:17:32Z") && $0.modifiedAt == $0.createdAt })
        #expect(records.allSatisfy { $0.creator == nil && $0.label == nil && $0.extra.isEmpty && !$0.synchronizable })
        guard case .damaged(let reason) = records[0].value else {
            Issue.record("item 1 should be damaged")
            return
        }
        #expect(reason.contains("odd length"))
        #expect(records[1].value == .data(Data(#"{"username":"asd","password":"asd"}"#.utf8)))
    }

    @Test("the hand-made variants file covers short and constant class names, binary data and a key")
    func generatedVariants() throws {
        let data = try IOSFixtures.data("generated-ios", "objection-variants.json")
        let records = try ObjectionJSONReader.read(data, path: "variants.json")
        #expect(records.map(\.itemClass) == ["genp", "inet", "keys"])
        #expect(records.map(\.protection) == ["ck", "aku", "dku"])
        #expect(records[0].value == .data(Data("made-up-password-1".utf8)))
        #expect(records[0].creator == 0x6143_7274)
        #expect(records[1].value == .data(Data([0x00, 0xFF, 0x10])))
        #expect(records[1].accessControl?.flags == [.biometryAny, .or, .devicePasscode])
        // An internet password has no svce: objection's "" for it is not kept; its server is unknown.
        #expect(records[1].service == nil && records[1].server == nil && records[1].unrecorded.contains("srvr"))
        #expect(records[1].label == "api")
        #expect(records[1].extra == ["comment": "made-up comment", "invisible": "1"])
        #expect(records[2].value == .absent)
        #expect(records[2].account == .string(""))
    }

    // MARK: Fields

    @Test(
        "item_class reads as a constant name or a class code",
        arguments: [
            ("kSecClassGenericPassword", "genp"), ("genp", "genp"), ("kSecClassInternetPassword", "inet"),
            ("inet", "inet"),
            ("kSecClassCertificate", "cert"), ("kSecClassKey", "keys"), ("kSecClassIdentity", "idnt"),
            ("weird", "weird"),
        ])
    func itemClasses(found: String, expected: String) throws {
        #expect(try Self.read([Self.item(["item_class": found])]).first?.itemClass == expected)
    }

    @Test(
        "accessible_attribute constant names read as pdmn codes",
        arguments: [
            ("kSecAttrAccessibleWhenUnlocked", "ak"), ("kSecAttrAccessibleAfterFirstUnlock", "ck"),
            ("kSecAttrAccessibleAlways", "dk"), ("kSecAttrAccessibleWhenUnlockedThisDeviceOnly", "aku"),
            ("kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly", "cku"),
            ("kSecAttrAccessibleAlwaysThisDeviceOnly", "dku"),
            ("kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly", "akpu"), ("ak", "ak"),
        ])
    func protections(name: String, code: String) throws {
        #expect(try Self.read([Self.item(["accessible_attribute": name])]).first?.protection == code)
    }

    @Test("empty fields are absent, except service and account, which keep the empty text")
    func emptyFields() throws {
        let record = try #require(try Self.read([Self.item()]).first)
        #expect(record.service == .string(""))
        #expect(record.account == .string(""))
        #expect(record.generic == nil && record.protection == nil && record.accessControl == nil && record.label == nil)
        #expect(record.createdAt == nil && record.creator == nil && record.accessGroup == nil)
        #expect(record.extra.isEmpty)
        #expect(record.value == .data(Data()))
    }

    @Test("an internet password's server, protocol, port and path are unrecorded unless the JSON has them")
    func internetFields() throws {
        let inet = "kSecClassInternetPassword"
        let records = try Self.read([
            Self.item(["item_class": inet]),
            Self.item([
                "item_class": inet, "server": "https://api.example.com:8443", "port": "8443", "protocol": "htps",
                "path": "/v1",
            ]),
            Self.item(["item_class": inet, "server": "", "port": ""]),
            Self.item(["server": "https://example.com"]),
        ])
        // objection's own output: no such fields, so the server is unknown, not empty; no svce either.
        #expect(records[0].server == nil && records[0].service == nil)
        #expect(records[0].unrecorded == ["srvr", "ptcl", "port", "path", "sync"])
        #expect(records[0].extra.isEmpty)
        #expect(records[1].server == "https://api.example.com:8443" && records[1].port == 8443)
        #expect(records[1].protocolCode == "htps" && records[1].path == "/v1" && records[1].unrecorded == ["sync"])
        #expect(records[1].extra.isEmpty)
        // An empty server is a server, as for service and account.
        #expect(records[2].server == "" && records[2].port == nil && records[2].unrecorded == ["ptcl", "path", "sync"])
        // A generic password has no server: the field stays an extra one. objection prints no `sync` for any item:
        // whether it synchronizes is unknown.
        #expect(records.allSatisfy { $0.synchronizableUnknown && !$0.synchronizable })
        #expect(
            records[3].server == nil && records[3].unrecorded == ["sync"]
                && records[3].extra == ["server": "https://example.com"])
        let error = try #require(throws: DumpError.self) {
            try Self.read([Self.item(["item_class": inet, "port": "s3cr3t"])])
        }
        #expect(error.message == "item 1: port is not a port number")
    }

    @Test("creator reads as a decimal string or four characters; extra fields keep their JSON names")
    func creatorAndExtra() throws {
        let records = try Self.read([
            Self.item(["creator": "1097889867", "protected": "p", "script_code": "0", "type": "1634953331"]),
            Self.item(["creator": "ApxK", "future_field": "x"]),
        ])
        #expect(records.map(\.creator) == [0x4170_784B, 0x4170_784B])
        #expect(records[0].extra == ["protected": "p", "script_code": "0", "type": "1634953331"])
        #expect(records[1].extra == ["future_field": "x"])
    }

    @Test("access_control words decode to flags; None is an access control without constraints")
    func accessControl() throws {
        let records = try Self.read([
            Self.item(["access_control": "None"]),
            Self.item(["access_control": "kSecAccessControlDevicePasscode And kSecAccessControlBiometryCurrentSet"]),
            Self.item(["access_control": "kSecAttrKeyClassPrivate"]),
        ])
        #expect(
            records.map { $0.accessControl?.flags } == [
                [], [.devicePasscode, .and, .biometryCurrentSet], [.privateKeyUsage],
            ])
    }

    @Test("access_control words that do not decode make that item's protection unknown; the dump reads")
    func unreadableAccessControl() throws {
        let records = try Self.read([
            Self.item(["access_control": "kSecAccessControlSomethingNew"]), Self.item(["access_control": "None"]),
        ])
        #expect(records.count == 2)
        #expect(records[0].accessControl == nil)
        #expect(
            records[0].unreadable
                == ["accc": "access_control (accc) is not a list of objection's access-control flag words"])
        #expect(records[0].extra["accc"] == "kSecAccessControlSomethingNew")
        #expect(records[0].unreadableProtection?.hasPrefix("the item's protection is unknown: access_control") == true)
        #expect(records[1].unreadable.isEmpty)
    }

    // MARK: data and dataHex

    static let valueCases: [(name: String, data: String?, hex: String?, itemClass: String, expected: DumpValue)] = [
        ("text confirmed by hex", "abc", "616263", "genp", .data(Data("abc".utf8))),
        ("text confirmed by upper-case hex", "abc", "616263".uppercased(), "genp", .data(Data("abc".utf8))),
        ("binary: empty data, even hex", "", "00ff10", "genp", .data(Data([0x00, 0xFF, 0x10]))),
        ("text confirmed by zero-dropping hex", "a\nb", "61a62", "genp", .data(Data("a\nb".utf8))),
        ("text confirmed by even zero-dropping hex", "\t\n", "9a", "genp", .data(Data("\t\n".utf8))),
        ("odd hex, empty data", "", "d41234561d1e5", "genp", .damaged("")),
        ("odd hex, data that does not match", "abc", "61626", "genp", .damaged("")),
        ("smart data, hex is the bytes", "{\"k\":\"v\"}", "62706c6973743030", "genp", .data(Data("bplist00".utf8))),
        ("data cut at NUL, hex is the bytes", "ab", "61620063", "genp", .data(Data([0x61, 0x62, 0x00, 0x63]))),
        ("hex not hexadecimal", "abc", "zz", "genp", .damaged("")),
        ("key placeholder", "(Key data not displayed)", "3082", "keys", .absent),
        ("placeholder text on a password", "(Key data not displayed)", "", "genp", .damaged("")),
        ("no dataHex, text", "abc", nil, "genp", .data(Data("abc".utf8))),
        ("no dataHex, empty data", "", nil, "genp", .damaged("")),
        ("both empty", "", "", "genp", .data(Data())),
        ("hex empty, data not", "abc", "", "genp", .damaged("")),
        ("neither field", nil, nil, "genp", .damaged("")),
    ]

    @Test("data and dataHex: the value is trusted only as the documented rules allow", arguments: valueCases.indices)
    func values(index: Int) throws {
        let (name, data, hex, itemClass, expected) = Self.valueCases[index]
        var fields = Self.item(["item_class": itemClass])
        fields["data"] = data
        fields["dataHex"] = hex
        let value = try #require(try Self.read([fields]).first).value
        switch (value, expected) {
        case (.damaged(let reason), .damaged):
            #expect(!reason.isEmpty, "\(name)")
            if let data, !data.isEmpty { #expect(!reason.contains(data), "\(name)") }
        default:
            #expect(value == expected, "\(name)")
        }
    }

    @Test("in a file with an odd-length dataHex, an unconfirmed even-length dataHex is not trusted either")
    func zeroDroppingFile() throws {
        let records = try Self.read([
            Self.item(["data": "", "dataHex": "123"]),
            Self.item(["data": "", "dataHex": "0102"]),
            Self.item(["data": "ab", "dataHex": "6162"]),
        ])
        guard case .damaged(let reason) = records[1].value else {
            Issue.record("item 2 should be damaged")
            return
        }
        #expect(reason.contains("odd-length"))
        #expect(records[2].value == .data(Data("ab".utf8)))
        #expect(try Self.read([Self.item(["data": "", "dataHex": "0102"])]).first?.value == .data(Data([1, 2])))
    }

    @Test("looksLike knows objection's JSON and nothing else")
    func looksLike() {
        #expect(ObjectionJSONReader.looksLike(Self.json([Self.item()])))
        #expect(ObjectionJSONReader.looksLike(Data("\u{FEFF} [ {\"item_class\": \"genp\"} ]".utf8)))
        #expect(!ObjectionJSONReader.looksLike(Data("{\"access_control\": 1}".utf8)))
        #expect(!ObjectionJSONReader.looksLike(Data("[1, 2]".utf8)))
        #expect(!ObjectionJSONReader.looksLike(Data("bplist00".utf8)))
        #expect(!ObjectionJSONReader.looksLike(Data()))
    }

    // MARK: Malformed input

    static let malformed: [(name: String, data: Data, message: String)] = {
        func with(_ key: String, _ value: Any) -> Data {
            var fields: [String: Any] = item(["data": "s3cr3t", "dataHex": "73336372337"])
            fields[key] = value
            return json([fields])
        }
        let valid = json([item(["data": "s3cr3t"])])
        var invalidUTF8 = valid
        invalidUTF8[invalidUTF8.count / 2] = 0xFF
        var deepField: Any = ["s3cr3t"]
        for _ in 0..<40 { deepField = [deepField] }
        return [
            ("truncated after the first field", Data("[{\"access_control\": \"None\",".utf8), "the file is not JSON"),
            ("truncated", valid.prefix(valid.count - 3), "the file is not JSON"),
            ("invalid UTF-8", invalidUTF8, "the file is not UTF-8 text"),
            (
                "item a string", Data("[{\"item_class\": \"genp\"}, \"s3cr3t\"]".utf8),
                "item 2 is a string, expected an object"
            ),
            ("item null", Data("[{\"item_class\": \"genp\"}, null]".utf8), "item 2 is null, expected an object"),
            ("service a number", with("service", 5), "item 1: service is a number, expected a string"),
            (
                "account an object", with("account", ["k": "s3cr3t"]),
                "item 1: account is a dictionary, expected a string"
            ),
            ("data a boolean", with("data", true), "item 1: data is a boolean, expected a string"),
            ("dataHex an array", with("dataHex", ["s3cr3t"]), "item 1: dataHex is an array, expected a string"),
            ("item_class missing", with("item_class", NSNull()), "item 1: has no item_class"),
            ("item_class empty", with("item_class", ""), "item 1: has no item_class"),
            ("create_date unreadable", with("create_date", "s3cr3t"), "item 1: create_date is not a date"),
            (
                "modification_date impossible", with("modification_date", "2019-02-30 10:00:00 +0000"),
                "item 1: modification_date is not a date"
            ),
            (
                "creator unreadable", with("creator", "s3cr3t"),
                "item 1: creator is neither a decimal number nor four characters"
            ),
            ("creator too large", with("creator", "4294967296"), "item 1: creator is neither"),
            ("unknown field nested 42 deep", with("future", deepField), "item 1: future nests deeper than 32 levels"),
        ]
    }()

    /// JSON (or not) that does not start like objection's output and holds no objection item.
    static let notDumps: [(name: String, data: Data, message: String)] = {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        return [
            ("empty", Data(), "the file is empty"),
            ("only a bracket", Data("[".utf8), "the file is not JSON"),
            ("UTF-16", Data("[]".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }), "the file is not"),
            (
                "a package.json", Data("{\"name\": \"s3cr3t\", \"version\": \"1.0.0\"}".utf8),
                "the top level is a dictionary, expected an array of objection's items"
            ),
            (
                "a top-level object with objection's names", Data("{\"item_class\": \"genp\"}".utf8),
                "the top level is a dictionary"
            ),
            ("top-level string", Data("\"s3cr3t\"".utf8), "the top level is a string"),
            ("an array of strings", Data("[\"s3cr3t\"]".utf8), "no element of the array has an item_class"),
            (
                "an array of other objects", Data("[{\"id\": 1, \"title\": \"s3cr3t\"}]".utf8),
                "no element of the array has an item_class"
            ),
            ("nested 10000 deep", Data(deep.utf8), "the file is not JSON"),
        ]
    }()

    @Test("JSON that is not objection's is refused as not a dump", arguments: notDumps.indices)
    func notADump(index: Int) throws {
        let (name, data, message) = Self.notDumps[index]
        let error = try #require(throws: DumpError.self, "\(name)") {
            try ObjectionJSONReader.read(data, path: "in/package.json")
        }
        #expect(error.kind == .notADump, "\(name)")
        #expect(error.path == "in/package.json", "\(name)")
        #expect(error.message.hasPrefix("not a keychain dump: "), "\(name): \(error.message)")
        #expect(error.message.contains(message), "\(name): \(error.message)")
        #expect(!error.message.contains("s3cr3t"), "\(name)")
    }

    @Test(
        "malformed input is refused with DumpError(.malformed) naming the path and the problem",
        arguments: malformed.indices)
    func malformedInput(index: Int) throws {
        let (name, data, message) = Self.malformed[index]
        let error = try #require(throws: DumpError.self, "\(name)") {
            try ObjectionJSONReader.read(data, path: "in/keychain.json")
        }
        #expect(error.kind == .malformed, "\(name)")
        #expect(error.path == "in/keychain.json", "\(name)")
        #expect(error.message.contains(message), "\(name): \(error.message)")
        #expect(!error.message.contains("s3cr3t"), "\(name)")
    }
}
