import ApexKeychain
import ApexTestSupport
import Foundation
import Testing

/// The rule "only its own items": every item the core writes carries the package's creator mark and its
/// metadata, and another library's items in the same service are never read, listed, replaced or removed.
@Suite("Only its own items")
struct OwnershipTests {
    /// Another library's creator code ('RNKC').
    static let otherLibrary: UInt32 = 0x524E_4B43
    /// The creators a foreign item can have: none, or another library's.
    static let foreignCreators: [UInt32?] = [nil, otherLibrary]
    static let defaultGroup = "ABCDE12345.com.example.app"

    /// The fields of the metadata text in an item's generic attribute; nil when it is absent or not UTF-8 text.
    static func metadata(_ item: ItemAttributes) -> [String: String]? {
        guard let data = item.generic, let text = String(data: data, encoding: .utf8) else { return nil }
        var fields: [String: String] = [:]
        for field in text.split(separator: ";") {
            let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            fields[String(parts[0])] = String(parts[1])
        }
        return fields
    }

    /// The one item under `account`; fails the test when there is not exactly one.
    static func item(_ f: Fixture, _ account: String) throws -> ItemAttributes {
        let found = try f.allItems().filter { $0.account == account }
        try #require(found.count == 1, "expected one item under '\(account)', found \(found.count)")
        return found[0]
    }

    // MARK: What every item carries

    @Test(
        "every item written carries creator 'ApxK', class genp, the service, the key as account and the default group",
        arguments: DatabaseKind.allCases)
    func stampsOwnership(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let tokens = try f.keychain(KeychainOptions(service: "svc.tokens"))
        try await tokens.setItem("token", "abc")
        try await tokens.setBytes("blob", Data([0, 1, 2]))
        try await tokens.setCredentials(
            Credentials(username: "ann", password: "pw"), CredentialsOptions(server: "example.com"))
        try await tokens.setItem("guarded", "g", SetOptions(accessControl: .biometryAny))
        try await f.keychain().setItem("plain", "p")

        let items = try f.allItems()
        #expect(Set(items.map(\.account)) == ["token", "blob", "credentials:example.com", "guarded", "plain"])
        #expect(apexCreator == 0x4170_784B)
        for item in items {
            #expect(item.creator == 0x4170_784B, "\(item.account)")
            #expect(item.isApexItem)
            #expect(item.itemClass == .genericPassword)
            #expect(item.service == (item.account == "plain" ? "com.example.app" : "svc.tokens"))
            #expect(item.accessGroup == Self.defaultGroup)
        }
    }

    @Test(
        "the metadata text records format version 1, the value encoding, the label flag and the OS major version",
        arguments: DatabaseKind.allCases)
    func metadataRecordsEncoding(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .iOS(major: 17)))
        let keychain = try f.keychain()
        try await keychain.setItem("string", "text")
        try await keychain.setItem("labelled", "text", SetOptions(label: "a label"))
        try await keychain.setItem("empty-label", "text", SetOptions(label: ""))
        try await keychain.setBytes("bytes", Data([0xFF, 0x00]))
        try await keychain.setCredentials(Credentials(username: "ann", password: "pw"))

        let expected: [String: (enc: String, lbl: String)] = [
            "string": ("s", "0"), "labelled": ("s", "1"), "empty-label": ("s", "1"), "bytes": ("b", "0"),
            "credentials": ("c", "1"),
        ]
        for (account, want) in expected {
            let fields = try #require(Self.metadata(try Self.item(f, account)), "\(account) has no metadata text")
            #expect(fields["apx"] == "1", "\(account)")
            #expect(fields["enc"] == want.enc, "\(account)")
            #expect(fields["lbl"] == want.lbl, "\(account)")
            #expect(fields["os"] == "17", "\(account)")
            #expect(fields["ac"] == "none", "\(account)")
            #expect(fields["av"] == "0", "\(account)")
        }
    }

    @Test(
        "the metadata, pdmn and access-control flags record the protection the item was written with",
        arguments: DatabaseKind.allCases)
    func recordsProtection(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        // The platform's bit values, written out: userPresence 1, biometryAny 2, biometryCurrentSet 8,
        // devicePasscode 16, or 1<<14.
        let bits: [AccessControl: UInt32] = [
            .none: 0, .biometryAny: 2, .biometryCurrentSet: 8, .biometryAnyOrPasscode: 1,
            .biometryCurrentSetOrPasscode: 8 | 16 | 16384, .passcode: 16,
        ]
        for accessControl in AccessControl.allCases {
            let validity = accessControl.isBoundToCurrentSet ? 0 : 45
            let key = "ac-" + accessControl.rawValue
            try await keychain.setItem(key, "v", SetOptions(accessControl: accessControl, authValidity: validity))
            let item = try Self.item(f, key)
            let fields = try #require(Self.metadata(item))
            #expect(fields["ac"] == accessControl.rawValue)
            // With no access control authValidity has nothing to open: it is ignored, and kept as 0.
            #expect(fields["av"] == (accessControl == .none ? "0" : "\(validity)"))
            #expect(item.accessControl == accessControl.flags)
            #expect(item.accessControl.rawValue == bits[accessControl])
        }
        let codes: [Accessible: String] = [
            .whenUnlocked: "ak", .afterFirstUnlock: "ck", .whenUnlockedThisDeviceOnly: "aku",
            .afterFirstUnlockThisDeviceOnly: "cku", .whenPasscodeSetThisDeviceOnly: "akpu",
        ]
        for accessible in Accessible.allCases {
            let key = "pdmn-" + accessible.rawValue
            try await keychain.setItem(key, "v", SetOptions(accessible: accessible))
            let item = try Self.item(f, key)
            #expect(item.protectionDomain == accessible.protectionDomain)
            #expect(item.protectionDomain.rawValue == codes[accessible])
            #expect(item.accessControl == [])
        }
        // The keychain's defaults are what a write without options records.
        let defaults = try f.keychain(
            KeychainOptions(
                service: "svc.defaults", accessible: .afterFirstUnlock, accessControl: .passcode, authValidity: 10))
        try await defaults.setItem("d", "v")
        let item = try #require(try f.allItems().first { $0.service == "svc.defaults" })
        #expect(item.protectionDomain == .ck)
        #expect(item.accessControl == .devicePasscode)
        #expect(Self.metadata(item)?["ac"] == "passcode")
        #expect(Self.metadata(item)?["av"] == "10")
    }

    @Test(
        "a current-set item records the enrolled set in bio=, and a rewrite after a new enrolment records the new set",
        arguments: DatabaseKind.allCases)
    func recordsEnrolledSet(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        try await keychain.setItem("bound", "v1", SetOptions(accessControl: .biometryCurrentSet))
        try await keychain.setItem("bound-or-passcode", "v", SetOptions(accessControl: .biometryCurrentSetOrPasscode))
        try await keychain.setItem("any", "v", SetOptions(accessControl: .biometryAny))
        let first = try #require(Self.metadata(try Self.item(f, "bound"))?["bio"])
        #expect(!first.isEmpty)
        #expect(Self.metadata(try Self.item(f, "bound-or-passcode"))?["bio"] == first)
        #expect(Self.metadata(try Self.item(f, "any"))?["bio"] == nil)

        f.device.enrollBiometrics()
        try await keychain.setItem("bound", "v2", SetOptions(accessControl: .biometryCurrentSet))
        let second = try #require(Self.metadata(try Self.item(f, "bound"))?["bio"])
        #expect(!second.isEmpty)
        #expect(second != first)
    }

    /// Lowercase hex of the text's UTF-8 bytes.
    static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }

    @Test(
        "the metadata text is written byte for byte as format 1 lays it out, in field order, with bio, bh and sl",
        arguments: DatabaseKind.allCases)
    func metadataExactText(kind: DatabaseKind) async throws {
        let phone = try Fixture(kind, device: SimulatedDevice(platform: .iOS(major: 17)))
        try await phone.keychain().setItem("bound", "v", SetOptions(accessControl: .biometryCurrentSet))
        try await phone.keychain().setItem("plain", "v", SetOptions(label: "l"))
        let set = try #require(phone.device.state().enrolledSet)
        let hash = try #require(phone.device.state().biometryStateHash)
        #expect(
            try Self.item(phone, "bound").generic
                == Data(
                    "apx=1;enc=s;ac=biometryCurrentSet;av=0;lbl=0;os=17;bio=\(Self.hex(set));bh=\(Self.hex(hash))".utf8)
        )
        #expect(try Self.item(phone, "plain").generic == Data("apx=1;enc=s;ac=none;av=0;lbl=1;os=17".utf8))

        let android = try Fixture(kind, device: SimulatedDevice(platform: .android(apiLevel: 34)))
        try await android.keychain().setItem(
            "windowed", "v", SetOptions(accessControl: .passcode, authValidity: 2_147_483_647))
        #expect(
            try Self.item(android, "windowed").generic
                == Data("apx=1;enc=s;ac=passcode;av=2147483647;lbl=0;os=34;sl=tee".utf8))
    }

    @Test(
        "each write's metadata is its own, whatever the write before it: label, encoding, protection, biometrics, OS",
        arguments: DatabaseKind.allCases)
    func metadataOfEachWrite(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(platform: .iOS(major: 17))
        let f = try Fixture(kind, device: device)
        let kc = try f.keychain()
        let plain = "apx=1;enc=s;ac=none;av=0;lbl=0;os=17"
        try await kc.setItem("p1", "v")
        try await kc.setItem("l1", "v", SetOptions(label: "l"))
        try await kc.setItem("p2", "v")
        try await kc.setBytes("b1", Data([1]))
        try await kc.setItem("w1", "v", SetOptions(accessControl: .passcode, authValidity: 5))
        try await kc.setItem("w2", "v", SetOptions(accessControl: .passcode, authValidity: 6))
        try await kc.setItem("c1", "v", SetOptions(accessControl: .biometryCurrentSet))
        let first = try #require(device.state().enrolledSet)
        let firstHash = try #require(device.state().biometryStateHash)
        device.enrollBiometrics()
        let second = try #require(device.state().enrolledSet)
        let secondHash = try #require(device.state().biometryStateHash)
        try #require(first != second && firstHash != secondHash)
        try await kc.setItem("c2", "v", SetOptions(accessControl: .biometryCurrentSet))
        device.upgradeOS(to: .iOS(major: 18))
        try await kc.setItem("p3", "v")
        func bound(_ set: String, _ hash: String) -> String {
            "apx=1;enc=s;ac=biometryCurrentSet;av=0;lbl=0;os=17;bio=\(Self.hex(set));bh=\(Self.hex(hash))"
        }
        let expected = [
            ("p1", plain), ("l1", "apx=1;enc=s;ac=none;av=0;lbl=1;os=17"), ("p2", plain),
            ("b1", "apx=1;enc=b;ac=none;av=0;lbl=0;os=17"), ("w1", "apx=1;enc=s;ac=passcode;av=5;lbl=0;os=17"),
            ("w2", "apx=1;enc=s;ac=passcode;av=6;lbl=0;os=17"), ("c1", bound(first, firstHash)),
            ("c2", bound(second, secondHash)), ("p3", "apx=1;enc=s;ac=none;av=0;lbl=0;os=18"),
        ]
        for (key, text) in expected {
            #expect(try String(decoding: #require(Self.item(f, key).generic), as: UTF8.self) == text, "\(key)")
        }
    }

    @Test(
        "metadata is read field by field: unknown names (prefixes of known ones too) are skipped, a missing, extra-version or malformed field makes the item damaged",
        arguments: DatabaseKind.allCases)
    func metadataParsing(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(platform: .iOS(major: 17)))
        let keychain = try f.keychain()
        try await keychain.setItem("k", "v")
        let written = try Self.item(f, "k")
        let base = "apx=1;enc=s;ac=none;av=0;lbl=0;os=17"
        #expect(written.generic == Data(base.utf8))
        func read(withMetadata text: String) async throws -> String? {
            var attributes = try Self.item(f, "k")
            attributes.generic = Data(text.utf8)
            try f.database.replace(
                attributes.primaryKey, with: KeychainItem(attributes: attributes, value: Data("v".utf8)))
            return try await keychain.getItem("k")
        }
        for readable in [
            base, base + ";zz=9", "a=1;ap=2;apxx=3;" + base + ";s=1;sll=x", "os=17;lbl=0;av=0;ac=none;enc=s;apx=1",
        ] {
            #expect(try await read(withMetadata: readable) == "v", "\(readable)")
        }
        for damaged in [
            "apx=1;enc=s;ac=none;av=0;os=17", "apx=2;enc=s;ac=none;av=0;lbl=0;os=17", base + ";bio=zz",
            base + ";bh=abc", base + ";sl=mystery", "apx=1;enc=q;ac=none;av=0;lbl=0;os=17",
            "apx=1;enc=s;ac=none;av=-1;lbl=0;os=17", "apx=1;enc=s;ac=none;av=0;lbl=2;os=17", base + ";novalue",
        ] {
            await #expect(throws: KeychainError.self, "\(damaged)") { try await read(withMetadata: damaged) }
        }
    }

    // MARK: Foreign items in the same service

    @Test("foreign items in the same service are never read", arguments: DatabaseKind.allCases)
    func foreignNotRead(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        for (index, creator) in Self.foreignCreators.enumerated() {
            try f.seedForeign(service: keychain.service, account: "theirs-\(index)", creator: creator)
        }
        try f.seedForeign(service: keychain.service, account: "credentials", creator: Self.otherLibrary)
        for index in Self.foreignCreators.indices {
            let key = "theirs-\(index)"
            #expect(try await keychain.getItem(key) == nil)
            #expect(try await keychain.getBytes(key) == nil)
            #expect(try await keychain.hasItem(key) == false)
            #expect(try await keychain.getItemInfo(key) == nil)
        }
        #expect(try await keychain.getCredentials() == nil)
        #expect(f.device.promptCount == 0)
    }

    @Test("foreign items in the same service are never listed", arguments: DatabaseKind.allCases)
    func foreignNotListed(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        try await keychain.setItem("mine", "v")
        try f.seedForeign(service: keychain.service, account: "theirs-nil")
        try f.seedForeign(service: keychain.service, account: "theirs-other", creator: Self.otherLibrary)
        try f.seedForeign(service: keychain.service, account: "theirs-synced", synchronizable: true)
        #expect(try await keychain.getAllKeys() == ["mine"])
    }

    @Test("removeItem leaves a foreign item under the same key", arguments: DatabaseKind.allCases)
    func removeItemLeavesForeign(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        for (index, creator) in Self.foreignCreators.enumerated() {
            try f.seedForeign(service: keychain.service, account: "theirs-\(index)", creator: creator)
        }
        let before = Set(try f.allItems())
        for index in Self.foreignCreators.indices {
            try await keychain.removeItem("theirs-\(index)")
        }
        #expect(Set(try f.allItems()) == before)
    }

    @Test("clear removes the package's items and leaves foreign ones", arguments: DatabaseKind.allCases)
    func clearLeavesForeign(kind: DatabaseKind) async throws {
        let f = try Fixture(kind)
        let keychain = try f.keychain()
        for (index, creator) in Self.foreignCreators.enumerated() {
            try f.seedForeign(service: keychain.service, account: "theirs-\(index)", creator: creator)
        }
        try f.seedForeign(service: keychain.service, account: "theirs-synced", synchronizable: true)
        let foreign = Set(try f.allItems())
        try await keychain.setItem("mine", "v")
        try await keychain.setItem("mine-guarded", "v", SetOptions(accessControl: .passcode))
        try await keychain.clear()
        #expect(Set(try f.allItems()) == foreign)
        #expect(try await keychain.getAllKeys() == [])
    }

    /// Every way of writing `key`: plain, staged (with access control), bytes, with a label.
    static func writes(_ keychain: Keychain, _ key: String) -> [() async throws -> Void] {
        [
            { try await keychain.setItem(key, "mine") },
            { try await keychain.setItem(key, "mine", SetOptions(accessControl: .biometryAny)) },
            { try await keychain.setBytes(key, Data([1, 2, 3]), SetOptions(label: "l")) },
            { try await keychain.setItem(key, "mine", SetOptions(accessible: .afterFirstUnlockThisDeviceOnly)) },
        ]
    }

    /// Asserts that every write of `key` fails with INVALID_ARGUMENT and leaves the database as it was.
    static func expectWritesRefused(_ f: Fixture, _ keychain: Keychain, key: String) async throws {
        let before = Set(try f.allItems())
        let foreign = try #require(before.first { $0.account == key })
        let value = try f.database.value(for: foreign.primaryKey)
        for write in writes(keychain, key) {
            #expect(await errorCode(write) == .INVALID_ARGUMENT)
            #expect(Set(try f.allItems()) == before)
            #expect(try f.database.value(for: foreign.primaryKey) == value)
        }
    }

    @Test(
        "a write under a key a foreign item holds fails with INVALID_ARGUMENT and leaves it byte-for-byte unchanged",
        arguments: DatabaseKind.allCases)
    func writeOverForeignRefused(kind: DatabaseKind) async throws {
        for creator in Self.foreignCreators {
            let f = try Fixture(kind)
            let keychain = try f.keychain()
            try f.seedForeign(
                service: keychain.service, account: "held", value: Data([0xDE, 0xAD, 0x00, 0xBE]), creator: creator)
            try await Self.expectWritesRefused(f, keychain, key: "held")
            try f.seedForeign(service: keychain.service, account: "credentials", creator: creator)
            #expect(
                await errorCode { try await keychain.setCredentials(Credentials(username: "u", password: "p")) }
                    == .INVALID_ARGUMENT)
            #expect(try await keychain.getAllKeys() == [])
        }
    }

    @Test(
        "a write that is not synchronizable is refused under a key a synchronizable foreign item holds",
        arguments: DatabaseKind.allCases)
    func writeOverSynchronizableForeignRefused(kind: DatabaseKind) async throws {
        for creator in Self.foreignCreators {
            let f = try Fixture(kind)
            let keychain = try f.keychain()
            try f.seedForeign(service: keychain.service, account: "held", creator: creator, synchronizable: true)
            try await Self.expectWritesRefused(f, keychain, key: "held")
        }
    }

    @Test(
        "a foreign item in another access group with the same service and account neither blocks a write nor changes",
        arguments: DatabaseKind.allCases)
    func foreignInOtherGroupIgnored(kind: DatabaseKind) async throws {
        for creator in Self.foreignCreators {
            // The emulated app is entitled to the other group too, so its keychain takes the seeded item (it
            // refuses a group outside the app's with errSecMissingEntitlement, `apple-secitem.md` §2.8), and
            // the listings below see it.
            let device = SimulatedDevice()
            let f = try Fixture(
                kind, device: device, accessGroups: [device.defaultAccessGroup, "ZZZZZ99999.com.other.app"])
            let keychain = try f.keychain()
            try f.seedForeign(
                service: keychain.service, account: "k", value: Data("theirs".utf8), creator: creator,
                accessGroup: "ZZZZZ99999.com.other.app")
            let foreign = try #require(try f.allItems().first)
            #expect(try await keychain.hasItem("k") == false)
            try await keychain.setItem("k", "mine")
            try await keychain.setItem("k", "mine again", SetOptions(accessControl: .passcode))
            #expect(try await keychain.getItem("k") == "mine again")
            let items = try f.allItems()
            #expect(items.count == 2)
            #expect(items.contains(foreign))
            #expect(try f.database.value(for: foreign.primaryKey) == Data("theirs".utf8))
        }
    }

    // MARK: Access groups

    @Test("options.accessGroup puts items in that group", arguments: DatabaseKind.allCases)
    func accessGroupOption(kind: DatabaseKind) async throws {
        let f = try Fixture(kind, device: SimulatedDevice(accessGroups: .listed(["ABCDE12345.shared"])))
        let shared = try f.keychain(KeychainOptions(accessGroup: "ABCDE12345.shared"))
        #expect(shared.accessGroup == "ABCDE12345.shared")
        try await shared.setItem("k", "v")
        try await shared.setItem("guarded", "v", SetOptions(accessControl: .biometryAny))
        let items = try f.allItems()
        #expect(items.count == 2)
        #expect(items.allSatisfy { $0.accessGroup == "ABCDE12345.shared" })
        #expect(try await shared.getAllKeys() == ["guarded", "k"])
    }

    @Test("a keychain of a different access group doesn't see another group's items", arguments: DatabaseKind.allCases)
    func otherGroupBlind(kind: DatabaseKind) async throws {
        let f = try Fixture(
            kind, device: SimulatedDevice(accessGroups: .listed(["ABCDE12345.shared", "ABCDE12345.other"])))
        let shared = try f.keychain(KeychainOptions(accessGroup: "ABCDE12345.shared"))
        try await shared.setItem("k", "shared value")
        for options in [KeychainOptions(), KeychainOptions(accessGroup: "ABCDE12345.other")] {
            let other = try f.keychain(options)
            #expect(try await other.getItem("k") == nil)
            #expect(try await other.hasItem("k") == false)
            #expect(try await other.getItemInfo("k") == nil)
            #expect(try await other.getAllKeys() == [])
            try await other.setItem("k", "own value")
            try await other.removeItem("k")
            try await other.clear()
        }
        #expect(try await shared.getItem("k") == "shared value")
        #expect(try f.allItems().count == 1)
    }

    @Test("on Android accessGroup and synchronizable are ignored", arguments: DatabaseKind.allCases)
    func androidIgnoresGroupAndSync(kind: DatabaseKind) async throws {
        let device = SimulatedDevice(platform: .android(apiLevel: 34), biometry: .fingerprint)
        let f = try Fixture(kind, device: device)
        let keychain = try f.keychain(KeychainOptions(synchronizable: true, accessGroup: "ABCDE12345.shared"))
        #expect(keychain.accessGroup == device.defaultAccessGroup)
        try await keychain.setItem("by-default", "v")
        try await keychain.setItem("asked", "v", SetOptions(synchronizable: true))
        let items = try f.allItems()
        #expect(items.count == 2)
        for item in items {
            #expect(item.accessGroup == device.defaultAccessGroup)
            #expect(item.synchronizable == false)
        }
        #expect(try await keychain.getItemInfo("asked")?.synchronizable == false)
        #expect(try await f.keychain().getAllKeys() == ["asked", "by-default"])
    }
}
