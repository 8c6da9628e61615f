import ApexKeychain
import Foundation
import Testing

@testable import ApexDumps

/// A property-list value for building access-control fixtures in DER and text form.
indirect enum ACLTestValue {
    case string(String)
    case data(Data)
    case boolean(Bool)
    case integer(Int64)
    case array([ACLTestValue])
    case dictionary([(String, ACLTestValue)])
    case null
}

/// A tiny DER encoder in `der_plist`'s shape: dictionaries as SET of SEQUENCE {key, value} sorted by their
/// encoding, arrays as SEQUENCE, UTF8String, OCTET STRING, INTEGER, BOOLEAN, NULL.
enum ACLTestDER {
    static func encode(_ value: ACLTestValue) -> Data { Data(element(value)) }

    static func element(_ value: ACLTestValue) -> [UInt8] {
        switch value {
        case .string(let text): return tlv(0x0C, Array(text.utf8))
        case .data(let data): return tlv(0x04, Array(data))
        case .boolean(let flag): return tlv(0x01, [flag ? 0xFF : 0x00])
        case .integer(let number): return tlv(0x02, integerBytes(number))
        case .null: return tlv(0x05, [])
        case .array(let elements): return tlv(0x30, elements.flatMap(element))
        case .dictionary(let entries):
            let pairs = entries.map { tlv(0x30, element(.string($0.0)) + element($0.1)) }
            return tlv(0x31, pairs.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
        }
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func integerBytes(_ number: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: number.bigEndian, Array.init)
        while bytes.count > 1, (bytes[0] == 0 && bytes[1] < 0x80) || (bytes[0] == 0xFF && bytes[1] >= 0x80) {
            bytes.removeFirst()
        }
        return bytes
    }

    /// `count` nested empty SEQUENCEs, built without recursion.
    static func nestedSequences(_ count: Int) -> Data {
        var totals = [2]  // the innermost `30 00`, then each enclosing SEQUENCE's size
        for _ in 1..<count { totals.append(1 + length(totals.last!).count + totals.last!) }
        var out: [UInt8] = []
        for level in stride(from: count - 1, to: 0, by: -1) { out += [0x30] + length(totals[level - 1]) }
        return Data(out + [0x30, 0x00])
    }
}

/// The access control Apple's `SecAccessControlCreateWithFlags` builds for flags (Security's SecAccessControl.m,
/// as the format reference §3.4 describes it), and its text form.
enum ACLTestBuilder {
    static let catacomb = ACLTestValue.data(Data([0x01, 0x02]))

    static func constraints(_ flags: AccessControlFlags) -> [(String, ACLTestValue)] {
        var list: [(String, ACLTestValue)] = []
        if flags.contains(.userPresence) { list.append(("cpo", .string("DeviceOwnerAuthentication"))) }
        if flags.contains(.devicePasscode) { list.append(("cup", .boolean(true))) }
        if flags.contains(.biometryAny) { list.append(("cbio", .dictionary([("pbioc", catacomb)]))) }
        if flags.contains(.biometryCurrentSet) {
            list.append(("cbio", .dictionary([("pbioc", catacomb), ("pbioh", .data(Data([0xAB, 0xCD])))])))
        }
        if flags.contains(.watch) { list.append(("cwtch", .boolean(true))) }
        return list
    }

    /// The ACL dictionary (operation → constraint).
    static func acl(_ flags: AccessControlFlags) -> [(String, ACLTestValue)] {
        let list = constraints(flags)
        let constraint: ACLTestValue
        switch list.count {
        case 0: constraint = .boolean(true)
        case 1: constraint = .dictionary(list)
        default:
            let k: Int64 = flags.contains(.or) ? 1 : Int64(list.count)
            constraint = .dictionary([("pkofn", .integer(k))] + list)
        }
        var acl: [(String, ACLTestValue)]
        if flags.contains(.privateKeyUsage) {
            acl = [("osgn", constraint), ("oa", .boolean(true)), ("odel", .boolean(true))]
        } else if list.isEmpty {
            acl = [("dacl", .boolean(true))]
        } else {
            acl = [("od", constraint), ("oe", .boolean(true)), ("odel", .boolean(true))]
        }
        if flags.contains(.applicationPassword) { acl.append(("prp", .boolean(true))) }
        return acl
    }

    static func der(_ flags: AccessControlFlags, protection: String) -> Data {
        ACLTestDER.encode(.dictionary([("prot", .string(protection)), ("acl", .dictionary(acl(flags)))]))
    }

    /// `prot;op(value);…` as `SecAccessControlCopyFormatDescription` writes it.
    static func text(_ flags: AccessControlFlags, protection: String) -> String {
        ([protection] + acl(flags).map { "\($0.0)(\(text($0.1)))" }).joined(separator: ";")
    }

    static func text(_ value: ACLTestValue) -> String {
        switch value {
        case .string(let text): text
        case .data(let data): data.map { String(format: "%02X", $0) }.joined()
        case .boolean(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .null: ""
        case .array(let elements): elements.map(text).joined()
        case .dictionary(let entries): entries.map { "\($0.0)(\(text($0.1)))" }.joined()
        }
    }

    /// Every flag combination of §3.4, with the flags a decoder must report for it.
    static let combinations: [(built: AccessControlFlags, decoded: AccessControlFlags)] = [
        ([], []),
        ([.userPresence], [.userPresence]),
        ([.devicePasscode], [.devicePasscode]),
        ([.biometryAny], [.biometryAny]),
        ([.biometryCurrentSet], [.biometryCurrentSet]),
        ([.watch], [.watch]),
        ([.biometryAny, .devicePasscode, .or], [.biometryAny, .devicePasscode, .or]),
        ([.biometryCurrentSet, .devicePasscode, .or], [.biometryCurrentSet, .devicePasscode, .or]),
        ([.biometryAny, .devicePasscode, .and], [.biometryAny, .devicePasscode, .and]),
        ([.biometryCurrentSet, .devicePasscode, .and], [.biometryCurrentSet, .devicePasscode, .and]),
        // Two constraints and no operator: Apple requires all of them (k = n).
        ([.biometryCurrentSet, .devicePasscode], [.biometryCurrentSet, .devicePasscode, .and]),
        ([.biometryAny, .watch, .or], [.biometryAny, .watch, .or]),
        ([.devicePasscode, .watch, .and], [.devicePasscode, .watch, .and]),
        ([.biometryAny, .devicePasscode, .watch, .or], [.biometryAny, .devicePasscode, .watch, .or]),
        // One constraint with an operator: Apple writes no k-of-n, so the operator is gone.
        ([.biometryAny, .or], [.biometryAny]),
        ([.applicationPassword], [.applicationPassword]),
        ([.userPresence, .applicationPassword], [.userPresence, .applicationPassword]),
        ([.privateKeyUsage], [.privateKeyUsage]),
        ([.privateKeyUsage, .biometryCurrentSet], [.privateKeyUsage, .biometryCurrentSet]),
        ([.privateKeyUsage, .userPresence], [.privateKeyUsage, .userPresence]),
        (
            [.privateKeyUsage, .devicePasscode, .biometryAny, .or],
            [.privateKeyUsage, .devicePasscode, .biometryAny, .or]
        ),
        (
            [.biometryCurrentSet, .applicationPassword, .privateKeyUsage],
            [.biometryCurrentSet, .applicationPassword, .privateKeyUsage]
        ),
    ]
}

@Suite("AccessControlDecoder")
struct AccessControlDecoderTests {
    @Test("the worked example 31 0D 30 0B … decodes to protection dku without constraints")
    func workedExample() throws {
        let bytes = Data([0x31, 0x0D, 0x30, 0x0B, 0x0C, 0x04, 0x70, 0x72, 0x6F, 0x74, 0x0C, 0x03, 0x64, 0x6B, 0x75])
        let description = try AccessControlDecoder.decode(der: bytes)
        #expect(
            description
                == AccessControlDescription(flags: [], protection: "dku", raw: "der:310d300b0c0470726f740c03646b75"))
        #expect(ACLTestDER.encode(.dictionary([("prot", .string("dku"))])) == bytes)
    }

    @Test(
        "DER of every flag combination decodes to its flags and protection",
        arguments: ACLTestBuilder.combinations.indices)
    func derCombinations(index: Int) throws {
        let (built, decoded) = ACLTestBuilder.combinations[index]
        let der = ACLTestBuilder.der(built, protection: "akpu")
        let description = try AccessControlDecoder.decode(der: der)
        #expect(description.flags == decoded)
        #expect(description.protection == "akpu")
        #expect(description.raw == "der:" + der.map { String(format: "%02x", $0) }.joined())
    }

    @Test(
        "the text form of every flag combination decodes like its DER, bare and wrapped",
        arguments: ACLTestBuilder.combinations.indices)
    func textCombinations(index: Int) throws {
        let (built, decoded) = ACLTestBuilder.combinations[index]
        let text = ACLTestBuilder.text(built, protection: "cku")
        for form in [text, "<SecAccessControlRef: \(text)>"] {
            let description = try #require(AccessControlDecoder.decode(text: form), "\(form)")
            #expect(description.flags == decoded, "\(form)")
            #expect(description.protection == "cku")
            #expect(description.raw == form)
        }
    }

    @Test(
        "text forms from Apple's help text, published descriptions and dumps decode",
        arguments: [
            ("ak;od(cpo(DeviceOwnerAuthentication));odel(true);oe(true)", AccessControlFlags.userPresence, "ak"),
            (
                "ak;od(cpo(DeviceOwnerAuthentication));odel(true);oe(true);prp(true)",
                [.userPresence, .applicationPassword], "ak"
            ),
            (
                "ak;od(cup(true)pkofn(1)cbio(pbioc(<>)pbioh(<>)));odel(true);oe(true)",
                [.devicePasscode, .biometryCurrentSet, .or], "ak"
            ),
            ("<SecAccessControlRef: akpu;od(cbio(pbioc()pbioh()));odel(true);oe(true)>", [.biometryCurrentSet], "akpu"),
            ("<SecAccessControlRef: aku;dacl(true)>", [], "aku"),
            ("cku;dacl(true)", [], "cku"),
            ("ak;od(cbio(pbioc(0011223344556677...(32b))));odel(true);oe(true)", [.biometryAny], "ak"),
            ("ak;od(cbio(pbioc(00)pbioh(0011223344...(64b))));odel(true);oe(true)", [.biometryCurrentSet], "ak"),
            ("  ak;od(cup(true));odel(true);oe(true)\n", [.devicePasscode], "ak"),
        ] as [(String, AccessControlFlags, String)])
    func publishedTextForms(text: String, flags: AccessControlFlags, protection: String) throws {
        let description = try #require(AccessControlDecoder.decode(text: text))
        #expect(description.flags == flags)
        #expect(description.protection == protection)
    }

    @Test(
        "text that is not an access-control description decodes to nil",
        arguments: [
            "", "   ", "hello world", "ak;od(cpo(DeviceOwnerAuthentication)", "ak;od(cpo(x)));oe(true)", "ak;",
            "<SecAccessControlRef: 0x2834a8f00>", "AK;dacl(true)", "ak;od(cxyz(true));oe(true)", "ak;(true)",
            "ak;od(cpo(x))junk", "<SecAccessControlRef: ak;dacl(true)", "ak;od(pkofn(many)cup(true)cbio())",
            String(repeating: "a(", count: 10_000) + String(repeating: ")", count: 10_000),
            "ak;" + String(repeating: "od(", count: 40) + String(repeating: ")", count: 40),
        ])
    func invalidText(text: String) {
        #expect(AccessControlDecoder.decode(text: text) == nil)
    }

    @Test(
        "objection's flag words decode to flags",
        arguments: [
            ("None", AccessControlFlags()),
            ("kSecAccessControlUserPresence", [.userPresence]),
            ("kSecAccessControlDevicePasscode", [.devicePasscode]),
            ("kSecAccessControlBiometryAny", [.biometryAny]),
            ("kSecAccessControlBiometryCurrentSet", [.biometryCurrentSet]),
            ("kSecAccessControlDevicePasscode Or kSecAccessControlBiometryAny", [.devicePasscode, .or, .biometryAny]),
            (
                "And kSecAccessControlBiometryCurrentSet kSecAccessControlDevicePasscode",
                [.and, .biometryCurrentSet, .devicePasscode]
            ),
            ("kSecAttrKeyClassPrivate", [.privateKeyUsage]),
            ("kSecAttrKeyClassPrivate kSecAccessControlBiometryCurrentSet", [.privateKeyUsage, .biometryCurrentSet]),
            (
                "kSecAccessControlUserPresence kSecAccessControlApplicationPassword",
                [.userPresence, .applicationPassword]
            ),
        ] as [(String, AccessControlFlags)])
    func objectionWords(words: String, flags: AccessControlFlags) throws {
        let description = try #require(AccessControlDecoder.decode(objectionWords: words))
        #expect(description.flags == flags)
        #expect(description.protection == nil)
        #expect(description.raw == words)
    }

    @Test(
        "objection words that are empty, unknown or contradictory decode to nil",
        arguments: [
            "", " ", "kSecAccessControlFaceID", "None kSecAccessControlUserPresence",
            "Or And kSecAccessControlDevicePasscode", "none",
        ])
    func invalidObjectionWords(words: String) {
        #expect(AccessControlDecoder.decode(objectionWords: words) == nil)
    }

    @Test("an unknown operation carries its constraint like od, and unknown top-level keys are ignored")
    func unknownOperation() throws {
        let acl: [(String, ACLTestValue)] = [
            ("osgn", .dictionary([("cup", .boolean(true))])), ("ock", .dictionary([("cup", .boolean(true))])),
            ("oa", .boolean(true)),
        ]
        let der = ACLTestDER.encode(
            .dictionary([("prot", .string("ak")), ("acl", .dictionary(acl)), ("bound", .boolean(true))]))
        #expect(try AccessControlDecoder.decode(der: der).flags == [.privateKeyUsage, .devicePasscode])
    }

    @Test("the ACL is found under any dictionary-valued key, since Apple's name for it is not public")
    func aclUnderOtherKey() throws {
        let der = ACLTestDER.encode(
            .dictionary([("prot", .string("ak")), ("kacl", .dictionary(ACLTestBuilder.acl([.devicePasscode])))]))
        #expect(try AccessControlDecoder.decode(der: der).flags == [.devicePasscode])
    }

    @Test("DER without acl decodes to no constraints, and long-form lengths are read")
    func longLengths() throws {
        let label = String(repeating: "x", count: 300)
        let der = ACLTestDER.encode(.dictionary([("prot", .string("ck")), ("note", .string(label))]))
        #expect(der[1] == 0x82)
        let description = try AccessControlDecoder.decode(der: der)
        #expect(description.flags.isEmpty)
        #expect(description.protection == "ck")
    }

    static let malformedDER: [(String, Data)] = [
        ("empty", Data()),
        ("truncated", Data([0x31, 0x0D, 0x30, 0x0B, 0x0C, 0x04, 0x70, 0x72, 0x6F, 0x74, 0x0C, 0x03, 0x64, 0x6B])),
        ("tag only", Data([0x31])),
        ("length 0xFFFFFFFF", Data([0x31, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x30, 0x00])),
        ("8-byte length", Data([0x04, 0x88, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])),
        ("9-byte length form", Data([0x04, 0x89, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00])),
        ("indefinite length", Data([0x31, 0x80, 0x00, 0x00])),
        ("child longer than parent", Data([0x31, 0x03, 0x30, 0x05, 0x0C, 0x01, 0x61])),
        ("trailing bytes", Data([0x31, 0x00, 0x00])),
        ("unsupported tag", Data([0x13, 0x02, 0x61, 0x6B])),
        ("not a dictionary", ACLTestDER.encode(.string("ak"))),
        ("array at the top", ACLTestDER.encode(.array([.string("prot")]))),
        ("invalid UTF-8 string", Data([0x31, 0x0B, 0x30, 0x09, 0x0C, 0x04, 0x70, 0x72, 0x6F, 0x74, 0x0C, 0x01, 0xFF])),
        ("key not a string", Data([0x31, 0x08, 0x30, 0x06, 0x02, 0x01, 0x01, 0x0C, 0x01, 0x61])),
        ("entry not a sequence", Data([0x31, 0x03, 0x0C, 0x01, 0x61])),
        (
            "entry with three elements",
            Data([0x31, 0x0B, 0x30, 0x09, 0x0C, 0x01, 0x61, 0x0C, 0x01, 0x62, 0x0C, 0x01, 0x63])
        ),
        ("duplicate key", ACLTestDER.encode(.dictionary([("prot", .string("ak")), ("prot", .string("ak"))]))),
        ("prot not a string", ACLTestDER.encode(.dictionary([("prot", .integer(1))]))),
        (
            "integer too large",
            Data([0x31, 0x11, 0x30, 0x0F, 0x0C, 0x01, 0x61, 0x02, 0x0A] + [UInt8](repeating: 0x7F, count: 10))
        ),
        ("empty integer", Data([0x31, 0x07, 0x30, 0x05, 0x0C, 0x01, 0x61, 0x02, 0x00])),
        ("boolean of length 2", Data([0x31, 0x09, 0x30, 0x07, 0x0C, 0x01, 0x61, 0x01, 0x02, 0xFF, 0xFF])),
        ("bad time", Data([0x31, 0x09, 0x30, 0x07, 0x0C, 0x01, 0x61, 0x18, 0x02, 0x39, 0x39])),
        (
            "unknown constraint",
            ACLTestDER.encode(.dictionary([("acl", .dictionary([("od", .dictionary([("cxyz", .boolean(true))]))]))]))
        ),
        (
            "pkofn not an integer",
            ACLTestDER.encode(.dictionary([("acl", .dictionary([("od", .dictionary([("pkofn", .string("one"))]))]))]))
        ),
        ("nesting 40 deep", ACLTestDER.nestedSequences(40)),
        ("nesting 10000 deep", ACLTestDER.nestedSequences(10_000)),
    ]

    @Test("malformed DER is refused with a DecodingError, never a crash", arguments: malformedDER.indices)
    func malformedDERIsRefused(index: Int) {
        let (name, bytes) = Self.malformedDER[index]
        #expect(throws: AccessControlDecoder.DecodingError.self, "\(name)") {
            try AccessControlDecoder.decode(der: bytes)
        }
    }

    @Test("the nesting builder and the depth limit agree: 32 levels decode, 33 don't")
    func depthLimit() {
        #expect(ACLTestDER.nestedSequences(3) == Data([0x30, 0x04, 0x30, 0x02, 0x30, 0x00]))
        // A top-level array is refused for not being a dictionary, not for its depth.
        #expect(throws: AccessControlDecoder.DecodingError("the access control is an array, expected a dictionary")) {
            try AccessControlDecoder.decode(der: ACLTestDER.nestedSequences(DumpLimits.maxDepth))
        }
        #expect(throws: AccessControlDecoder.DecodingError("DER nests deeper than 32 levels at byte 64")) {
            try AccessControlDecoder.decode(der: ACLTestDER.nestedSequences(DumpLimits.maxDepth + 1))
        }
    }

    @Test("error messages name the problem, never a value")
    func messagesHoldNoValue() {
        let secret = "s3cr3t-value"
        let inputs = [
            ACLTestDER.encode(.dictionary([("prot", .data(Data(secret.utf8)))])),
            ACLTestDER.encode(.dictionary([("acl", .dictionary([("od", .dictionary([(secret, .boolean(true))]))]))])),
            ACLTestDER.encode(.string(secret)),
            ACLTestDER.encode(.dictionary([("prot", .string(secret))])) + Data([0x00]),
        ]
        for input in inputs {
            do {
                _ = try AccessControlDecoder.decode(der: input)
                Issue.record("decoded")
            } catch {
                #expect(!error.message.contains(secret))
                #expect(!error.message.contains("s3cr3t"))
            }
        }
    }
}
