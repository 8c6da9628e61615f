import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// The storage model: what keys and services may be, how values are stored, what a write replaces, and how
/// items are listed and cleared.
@Suite("Storage model")
struct StorageModelTests {
    /// A key or service the rules refuse, named for the test report.
    struct BadName: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let value: String

        static let all: [BadName] = [
            BadName(testDescription: "empty", value: ""),
            BadName(testDescription: "257 code units", value: String(repeating: "k", count: 257)),
            BadName(
                testDescription: "256 characters, 257 code units",
                value: String(repeating: "k", count: 255) + "\u{1F600}"),
            BadName(testDescription: "U+0000", value: "a\u{0}b"),
        ]
    }

    static let longestNames = [
        String(repeating: "k", count: 256),
        String(repeating: "k", count: 254) + "\u{1F600}",
    ]

    // MARK: Keys and services

    @Test("a bad key is refused by every call and nothing is written", arguments: DatabaseKind.allCases, BadName.all)
    func badKeyRefused(kind: DatabaseKind, key: BadName) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        let bad = key.value
        #expect(await errorCode { try await kc.setItem(bad, "v") } == .INVALID_ARGUMENT)
        #expect(await errorCode { _ = try await kc.getItem(bad) } == .INVALID_ARGUMENT)
        #expect(await errorCode { _ = try await kc.hasItem(bad) } == .INVALID_ARGUMENT)
        #expect(await errorCode { _ = try await kc.getItemInfo(bad) } == .INVALID_ARGUMENT)
        #expect(await errorCode { try await kc.removeItem(bad) } == .INVALID_ARGUMENT)
        #expect(await errorCode { try await kc.setBytes(bad, Data([1])) } == .INVALID_ARGUMENT)
        #expect(await errorCode { _ = try await kc.getBytes(bad) } == .INVALID_ARGUMENT)
        #expect(try f.allItems().isEmpty)
    }

    @Test("a key of exactly 256 UTF-16 code units is accepted by every call", arguments: DatabaseKind.allCases)
    func longestKeyAccepted(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        for key in Self.longestNames {
            try await kc.setItem(key, "v")
            #expect(try await kc.getItem(key) == "v")
            #expect(try await kc.hasItem(key))
            #expect(try await kc.getItemInfo(key)?.key == key)
            try await kc.setBytes(key, Data([9]))
            #expect(try await kc.getBytes(key) == Data([9]))
            try await kc.removeItem(key)
            #expect(try await kc.hasItem(key) == false)
        }
    }

    @Test("a bad service is refused by Keychain.init", arguments: DatabaseKind.allCases, BadName.all)
    func badServiceRefused(kind: DatabaseKind, service: BadName) async throws {
        let f = try Fixture(kind)
        #expect(await errorCode { _ = try f.keychain(KeychainOptions(service: service.value)) } == .INVALID_ARGUMENT)
    }

    @Test("a service of exactly 256 UTF-16 code units is accepted", arguments: DatabaseKind.allCases)
    func longestServiceAccepted(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        for service in Self.longestNames {
            let kc = try f.keychain(KeychainOptions(service: service))
            #expect(kc.service == service)
            try await kc.setItem("k", service)
            #expect(try await kc.getItem("k") == service)
        }
    }

    @Test("the default service is the device's bundle identifier", arguments: DatabaseKind.allCases)
    func defaultServiceIsBundleID(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(bundleIdentifier: "org.example.notes"))
        let kc = try f.keychain()
        #expect(kc.service == "org.example.notes")
        try await kc.setItem("k", "v")
        #expect(try f.allItems().map(\.service) == ["org.example.notes"])
    }

    // MARK: Services

    @Test("two keychains of the same service see the same items", arguments: DatabaseKind.allCases)
    func sameServiceShares(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let one = try f.keychain(KeychainOptions(service: "shared"))
        let two = try f.keychain(KeychainOptions(service: "shared"))
        try await one.setItem("k", "from one")
        #expect(try await two.getItem("k") == "from one")
        try await two.setItem("k", "from two")
        #expect(try await one.getItem("k") == "from two")
        try await two.removeItem("k")
        #expect(try await one.hasItem("k") == false)
    }

    @Test("two services never meet", arguments: DatabaseKind.allCases)
    func servicesNeverMeet(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let a = try f.keychain(KeychainOptions(service: "service.a"))
        let b = try f.keychain(KeychainOptions(service: "service.b"))
        try await a.setItem("k", "value a")
        try await b.setItem("k", "value b")
        try await a.setItem("only-a", "x")
        #expect(try await a.getItem("k") == "value a")
        #expect(try await b.getItem("k") == "value b")
        #expect(try await a.getAllKeys() == ["k", "only-a"])
        #expect(try await b.getAllKeys() == ["k"])
        try await a.clear()
        #expect(try await a.getAllKeys().isEmpty)
        #expect(try await b.getItem("k") == "value b")
    }

    @Test("services that differ only in Unicode normalization never meet", arguments: DatabaseKind.allCases)
    func normalizationVariantServicesNeverMeet(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let composed = try f.keychain(KeychainOptions(service: "caf\u{E9}"))
        let decomposed = try f.keychain(KeychainOptions(service: "cafe\u{301}"))
        try await composed.setItem("k", "composed")
        #expect(try await decomposed.hasItem("k") == false)
        #expect(try await decomposed.getAllKeys().isEmpty)
    }

    // MARK: Values

    @Test("strings are stored as UTF-8", arguments: DatabaseKind.allCases)
    func stringsAreUTF8(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("emoji", "a\u{1F600}")
        #expect(try await kc.getBytes("emoji") == Data([0x61, 0xF0, 0x9F, 0x98, 0x80]))
        try await kc.setItem("combining", "e\u{301}")
        #expect(try await kc.getBytes("combining") == Data([0x65, 0xCC, 0x81]))
        #expect(try await kc.getItem("combining").map { Array($0.unicodeScalars) } == ["e", "\u{301}"])
    }

    @Test("U+0000 in a value or a label is refused and nothing is written", arguments: DatabaseKind.allCases)
    func nulInValueOrLabelRefused(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "old", SetOptions(label: "old label"))
        let before = try f.allItems()
        #expect(await errorCode { try await kc.setItem("k", "new\u{0}") } == .INVALID_ARGUMENT)
        #expect(await errorCode { try await kc.setItem("k", "new", SetOptions(label: "l\u{0}")) } == .INVALID_ARGUMENT)
        #expect(
            await errorCode { try await kc.setBytes("k", Data([1]), SetOptions(label: "\u{0}")) } == .INVALID_ARGUMENT)
        #expect(await errorCode { try await kc.setItem("fresh", "\u{0}") } == .INVALID_ARGUMENT)
        #expect(try f.allItems() == before)
        #expect(try await kc.getItem("k") == "old")
        #expect(try await kc.getItemInfo("k")?.label == "old label")
    }

    @Test("the empty string is a value", arguments: DatabaseKind.allCases)
    func emptyStringIsValue(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "")
        #expect(try await kc.getItem("k") == .some(""))
        #expect(try await kc.getBytes("k") == .some(Data()))
    }

    @Test("bytes round-trip exactly", arguments: DatabaseKind.allCases)
    func bytesRoundTrip(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        let every = Data((0...255).map { UInt8($0) })
        let large = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        try await kc.setBytes("every", every)
        try await kc.setBytes("empty", Data())
        try await kc.setBytes("large", large)
        #expect(try await kc.getBytes("every") == every)
        #expect(try await kc.getBytes("empty") == .some(Data()))
        #expect(try await kc.getBytes("large") == large)
    }

    @Test("getItem of bytes that are not UTF-8 is INVALID_ARGUMENT", arguments: DatabaseKind.allCases)
    func getItemOfNonUTF8Refused(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setBytes("k", Data([0x61, 0xFF, 0xC3]))
        #expect(await errorCode { _ = try await kc.getItem("k") } == .INVALID_ARGUMENT)
        #expect(try await kc.getBytes("k") == Data([0x61, 0xFF, 0xC3]))
    }

    @Test(
        "a string written as its UTF-8 bytes is stored as setItem stores it, and bytes that are not UTF-8 or hold U+0000 are refused with nothing written",
        arguments: DatabaseKind.allCases)
    func stringFromUTF8Bytes(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        let valid: [[UInt8]] = [
            [], Array("token-123".utf8), Array("café ☕️ 𝄞".utf8), [0xEF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        let invalid: [[UInt8]] = [
            [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0x61, 0xFF], [0x80],
            [0x61, 0x00, 0x62],
        ]
        for (index, bytes) in valid.enumerated() {
            #expect(try kc.setItem("v\(index)", utf8: Data(bytes), SetOptions(), expecting: .absent))
            let text = try #require(String(validating: bytes, as: UTF8.self))
            #expect(try await kc.getItem("v\(index)") == text)
            #expect(try await kc.getBytes("v\(index)") == Data(bytes))
        }
        for (index, bytes) in invalid.enumerated() {
            #expect(
                await errorCode { _ = try kc.setItem("i\(index)", utf8: Data(bytes), SetOptions(), expecting: .absent) }
                    == .INVALID_ARGUMENT, "\(bytes)")
            #expect(try await kc.hasItem("i\(index)") == false)
        }
        // Random bytes: refused exactly when Swift's own UTF-8 validation (or the U+0000 rule) refuses them.
        var generator = SystemRandomNumberGenerator()
        for index in 0..<300 {
            let bytes = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let accepted = String(validating: bytes, as: UTF8.self) != nil && !bytes.contains(0)
            let written = (try? kc.setItem("r\(index)", utf8: Data(bytes), SetOptions(), expecting: .absent)) == true
            #expect(written == accepted, "\(bytes)")
        }
    }

    // MARK: Missing items

    @Test("reads return nil only when there is no item", arguments: DatabaseKind.allCases)
    func missingItemIsNil(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        #expect(try await kc.getItem("k") == nil)
        #expect(try await kc.getBytes("k") == nil)
        #expect(try await kc.getItemInfo("k") == nil)
        #expect(try await kc.hasItem("k") == false)
        try await kc.setBytes("k", Data())
        #expect(try await kc.getItem("k") != nil)
        #expect(try await kc.getBytes("k") != nil)
        #expect(try await kc.getItemInfo("k") != nil)
        #expect(try await kc.hasItem("k"))
    }

    @Test("removeItem of a missing key is a no-op", arguments: DatabaseKind.allCases)
    func removeMissingIsNoOp(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("other", "v")
        try await kc.removeItem("missing")
        #expect(try await kc.getAllKeys() == ["other"])
    }

    // MARK: Writes replace

    @Test("a write without a label removes the label of the item it replaces", arguments: DatabaseKind.allCases)
    func writeReplacesLabel(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "v1", SetOptions(label: "first"))
        #expect(try await kc.getItemInfo("k")?.label == "first")
        try await kc.setItem("k", "v2")
        let info = try #require(try await kc.getItemInfo("k"))
        #expect(info.label == nil)
        #expect(try await kc.getItem("k") == "v2")
    }

    @Test("the empty label is distinct from no label", arguments: DatabaseKind.allCases)
    func emptyLabelIsLabel(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("empty", "v", SetOptions(label: ""))
        try await kc.setItem("none", "v")
        #expect(try await kc.getItemInfo("empty")?.label == .some(""))
        let none = try #require(try await kc.getItemInfo("none"))
        #expect(none.label == nil)
    }

    @Test("a rewrite with another accessible is reflected in getItemInfo", arguments: DatabaseKind.allCases)
    func rewriteChangesAccessible(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "v", SetOptions(accessible: .afterFirstUnlock))
        #expect(try await kc.getItemInfo("k")?.accessible == .afterFirstUnlock)
        try await kc.setItem("k", "v", SetOptions(accessible: .whenPasscodeSetThisDeviceOnly))
        #expect(try await kc.getItemInfo("k")?.accessible == .whenPasscodeSetThisDeviceOnly)
        try await kc.setItem("k", "v")
        #expect(try await kc.getItemInfo("k")?.accessible == .afterFirstUnlock)
    }

    @Test("createdAt is kept across rewrites while modifiedAt moves", arguments: DatabaseKind.allCases)
    func createdAtKeptModifiedAtMoves(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "v1")
        let first = try #require(try await kc.getItemInfo("k"))
        f.device.advanceClock(by: 90)
        try await kc.setItem("k", "v2", SetOptions(accessControl: .passcode))
        let second = try #require(try await kc.getItemInfo("k"))
        f.device.advanceClock(by: 30)
        try await kc.setBytes("k", Data([1]))
        let third = try #require(try await kc.getItemInfo("k"))
        if kind == .secItem {
            // A write to or from access control is staged (seed 000: "the new item is first added under a
            // temporary key …, then the old one goes, the new one is added under its key"), and a keychain sets
            // `cdat` to now on every add (`apple-secitem.md` §2.3 item 7): the item is created anew. Seed 001
            // promises no creation date across a rewrite ("replace the item under the key, value and attributes
            // together"); a rewrite in place keeps it on every database (below).
            #expect(second.createdAt == first.createdAt + 90_000)
            #expect(third.createdAt == first.createdAt + 120_000)
        } else {
            #expect(second.createdAt == first.createdAt)
            #expect(third.createdAt == first.createdAt)
        }
        // A rewrite in place (no access control before or after: SecItemUpdate, which keeps `cdat`, §2.5).
        try await kc.setItem("plain", "v1")
        let plain = try #require(try await kc.getItemInfo("plain"))
        f.device.advanceClock(by: 10)
        try await kc.setItem("plain", "v2")
        let rewritten = try #require(try await kc.getItemInfo("plain"))
        #expect(rewritten.createdAt == plain.createdAt)
        #expect(rewritten.modifiedAt == plain.modifiedAt + 10_000)
        #expect(second.modifiedAt == first.modifiedAt + 90_000)
        #expect(third.modifiedAt == first.modifiedAt + 120_000)
    }

    @Test("createdAt and modifiedAt are milliseconds since 1970 on the device clock", arguments: DatabaseKind.allCases)
    func datesAreDeviceMilliseconds(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(now: Date(timeIntervalSince1970: 1_700_000_000.25))
        let f = try Fixture(kind, device: device)
        let kc = try f.keychain()
        try await kc.setItem("k", "v")
        let info = try #require(try await kc.getItemInfo("k"))
        #expect(info.createdAt == 1_700_000_000_250)
        #expect(info.modifiedAt == 1_700_000_000_250)
        device.advanceClock(by: 1.5)
        try await kc.setItem("k", "v")
        #expect(try await kc.getItemInfo("k")?.modifiedAt == 1_700_000_001_750)
    }

    // MARK: Listing and clearing

    @Test("getAllKeys is sorted by UTF-16 code units", arguments: DatabaseKind.allCases)
    func getAllKeysSortedByUTF16(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        let keys = ["z", "\u{FFFF}", "a", "\u{E9}", "\u{1F600}", "B", "e\u{301}t"]
        for key in keys { try await kc.setItem(key, "v") }
        let expected = ["B", "a", "e\u{301}t", "z", "\u{E9}", "\u{1F600}", "\u{FFFF}"]
        #expect(try await kc.getAllKeys().map { Array($0.utf16) } == expected.map { Array($0.utf16) })
    }

    @Test("getAllKeys lists each key once", arguments: DatabaseKind.allCases)
    func getAllKeysListsOnce(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("k", "1")
        try await kc.setItem("k", "2", SetOptions(accessControl: .passcode))
        try await kc.setItem("k", "3", SetOptions(synchronizable: true))
        try await kc.setBytes("k", Data([4]))
        try await kc.setItem("j", "1")
        #expect(try await kc.getAllKeys() == ["j", "k"])
        #expect(try f.allItems().count == 2)
    }

    @Test("clear removes every item of the service", arguments: DatabaseKind.allCases)
    func clearRemovesAll(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try f.keychain()
        try await kc.setItem("a", "v")
        try await kc.setBytes("b", Data([1]), SetOptions(accessControl: .biometryAny))
        try await kc.setItem("c", "v", SetOptions(synchronizable: true))
        try await kc.clear()
        #expect(try await kc.getAllKeys().isEmpty)
        #expect(try await kc.hasItem("b") == false)
        #expect(try f.allItems().isEmpty)
    }

    // MARK: Calls that never prompt

    /// Writes one item under each prompting protection, and queues a cancel for the first prompt.
    private func protectedKeychain(_ f: Fixture) async throws -> Keychain {
        let kc = try f.keychain()
        try await kc.setItem("current", "v", SetOptions(accessControl: .biometryCurrentSet))
        try await kc.setItem("passcode", "v", SetOptions(accessControl: .passcode))
        try await kc.setItem("either", "v", SetOptions(accessControl: .biometryAnyOrPasscode))
        f.device.answerNextPrompts(.canceled)
        return kc
    }

    @Test("hasItem never prompts", arguments: DatabaseKind.allCases)
    func hasItemNeverPrompts(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try await protectedKeychain(f)
        for key in ["current", "passcode", "either"] { #expect(try await kc.hasItem(key)) }
        #expect(f.device.promptCount == 0)
        #expect(await errorCode { _ = try await kc.getItem("passcode") } == .USER_CANCELED)
    }

    @Test("getItemInfo never prompts", arguments: DatabaseKind.allCases)
    func getItemInfoNeverPrompts(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try await protectedKeychain(f)
        #expect(try await kc.getItemInfo("current")?.accessControl == .biometryCurrentSet)
        #expect(try await kc.getItemInfo("passcode")?.accessControl == .passcode)
        #expect(try await kc.getItemInfo("either")?.accessControl == .biometryAnyOrPasscode)
        #expect(f.device.promptCount == 0)
        #expect(await errorCode { _ = try await kc.getItem("passcode") } == .USER_CANCELED)
    }

    @Test("getAllKeys never prompts", arguments: DatabaseKind.allCases)
    func getAllKeysNeverPrompts(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try await protectedKeychain(f)
        #expect(try await kc.getAllKeys() == ["current", "either", "passcode"])
        #expect(f.device.promptCount == 0)
        #expect(await errorCode { _ = try await kc.getItem("passcode") } == .USER_CANCELED)
    }

    @Test("clear never prompts", arguments: DatabaseKind.allCases)
    func clearNeverPrompts(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let kc = try await protectedKeychain(f)
        try await kc.clear()
        #expect(try await kc.getAllKeys().isEmpty)
        #expect(f.device.promptCount == 0)
    }
}
