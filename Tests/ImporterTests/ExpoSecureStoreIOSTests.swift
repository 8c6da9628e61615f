import ApexDumps
import ApexKeychain
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import Testing

@Suite("expo-secure-store importer: iOS")
struct ExpoSecureStoreIOSTests {
    @Test("claims only generic passwords whose account and generic hold the same UTF-8 key")
    func claimsOnlyTheSignature() throws {
        var stringAccount = Expo.item("item 2", key: "plain")
        stringAccount.account = .string("plain")
        var otherGeneric = Expo.item("item 3", key: "user")
        otherGeneric.generic = .data(Data("something else".utf8))
        var noGeneric = Expo.item("item 4", key: "user2")
        noGeneric.generic = nil
        var internet = Expo.item("item 5", key: "web")
        internet.itemClass = "inet"
        var notUTF8 = Expo.item("item 6")
        notUTF8.account = .data(Data([0xFF, 0xFE]))
        notUTF8.generic = .data(Data([0xFF, 0xFE]))
        var noService = Expo.item("item 7", key: "lost")
        noService.service = nil
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("item 1"), stringAccount, otherGeneric, noGeneric, internet, notUTF8, noService,
            ])
        ])
        #expect(items.map(\.origin.location) == ["item 1", "item 2"])
        #expect(items.allSatisfy { $0.library == .expoSecureStore && $0.platform == .ios })
    }

    @Test(
        "generated plist of every version's layout: SDK 47/48 ck, SDK 49 akpu, ≤ 11 userPresence, 12.8 suffixes, access groups"
    )
    func generatedPlist() throws {
        let items = try Expo.run([try Expo.iosPlist("expo-generated/ios-keychain.plist")], Expo.app)
        #expect(items.count == 8)
        #expect(!items.contains { $0.source.account == "user@example.com" })
        func at(_ key: String, _ service: String) throws -> SourceItem {
            try #require(Expo.find(items, key: key, service: service))
        }
        let session = try at("session", "app:no-auth")
        #expect(session.verdict == .migrate)
        #expect(session.value == .value(Data("made-up-value-5".utf8)))
        #expect(session.target?.options.accessible == .whenUnlocked)
        guard case .shadowed(let old) = try at("session", "app").verdict else {
            Issue.record("SDK 47 copy kept")
            return
        }
        #expect(old.contains("'app:no-auth'"))

        let bio = try at("bio_token", "app:auth")
        #expect(bio.verdict == .migrate)
        #expect(bio.target?.options.accessControl == .biometryCurrentSet)
        guard case .shadowed = try at("bio_token", "app").verdict else {
            Issue.record("SDK 47 auth copy kept")
            return
        }

        let akpu = try at("device_secret", "app")
        #expect(akpu.target?.options.accessible == .whenPasscodeSetThisDeviceOnly)
        #expect(Expo.notes(akpu, contain: "WHEN_UNLOCKED_THIS_DEVICE_ONLY"))

        let presence = try at("legacy_auth", "app")
        #expect(presence.target?.options.accessControl == .biometryAnyOrPasscode)
        #expect(presence.source.protection["accessControl"]?.isEmpty == false)

        let custom = try at("api-key", "my-service:no-auth")
        #expect(custom.target?.service == "my-service")
        #expect(custom.target?.options.accessible == .whenUnlockedThisDeviceOnly)

        let shared = try at("shared_token", "app:no-auth")
        #expect(shared.target?.accessGroup == "ABCDE12345.group.com.example.shared")
        #expect(shared.verdict == .migrate)
    }

    @Test("target: service without suffix, the Expo key, a string value; the source as found")
    func mapsOneItem() throws {
        let items = try Expo.run([
            Expo.keychain([Expo.item("item 1", service: "app:no-auth", key: "auth.token", value: "abc")])
        ])
        let item = try #require(items.first)
        #expect(item.verdict == .migrate)
        #expect(item.value == .value(Data("abc".utf8)))
        #expect(
            item.target
                == TargetItem(
                    service: "app", key: "auth.token", kind: .string,
                    options: SetOptions(
                        accessible: .whenUnlocked, accessControl: AccessControl.none, synchronizable: false)))
        #expect(item.source.service == "app:no-auth")
        #expect(item.source.account == "auth.token")
        #expect(item.source.itemClass == "genp")
        #expect(item.source.accessGroup == Expo.group)
        #expect(item.source.protection["pdmn"] == "ak")
        #expect(item.source.protection["sync"] == "0")
        #expect(item.origin == SourceOrigin(path: "keychain.plist", format: .iosPlist, location: "item 1"))
    }

    /// The three spellings of one key, in every order of the records: expo reads no-auth, then auth, then bare.
    @Test(
        "one key under S:no-auth, S:auth and S: the copy expo reads first wins",
        arguments: [
            [0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0],
        ])
    func shadowingOrder(order: [Int]) throws {
        let spellings = [
            Expo.item("bare", service: "app", pdmn: "ck"),
            Expo.item("auth", service: "app:auth", flags: .biometryCurrentSet),
            Expo.item("no-auth", service: "app:no-auth"),
        ]
        let items = try Expo.run([Expo.keychain(order.map { spellings[$0] })])
        let byLocation = Dictionary(uniqueKeysWithValues: items.map { ($0.origin.location, $0) })
        #expect(byLocation["no-auth"]?.verdict == .migrate)
        for loser in ["auth", "bare"] {
            guard case .shadowed(let reason)? = byLocation[loser]?.verdict else {
                Issue.record("\(loser) not shadowed")
                continue
            }
            #expect(reason.contains("'app:no-auth'"))
        }
    }

    @Test("without a no-auth copy, the auth copy wins over the pre-12.8 bare one")
    func authBeatsBare() throws {
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("bare", service: "svc"), Expo.item("auth", service: "svc:auth", flags: .biometryCurrentSet),
            ])
        ])
        #expect(Expo.find(items, key: "token", service: "svc:auth")?.verdict == .migrate)
        let bare = try #require(Expo.find(items, key: "token", service: "svc"))
        guard case .shadowed(let why) = bare.verdict else {
            Issue.record("bare copy not shadowed")
            return
        }
        #expect(why.contains("'svc:auth'"))
        #expect(bare.target?.service == "svc")
    }

    @Test("other keys, other services and other access groups don't shadow each other")
    func noFalseShadowing() throws {
        let items = try Expo.run(
            [
                Expo.keychain([
                    Expo.item("1", service: "app:no-auth", key: "a"),
                    Expo.item("2", service: "app", key: "b"),
                    Expo.item("3", service: "other", key: "a"),
                    Expo.item("4", service: "app", key: "a", group: "ABCDE12345.group.shared"),
                ])
            ], ImportOptions(bundleID: "com.example.app"))
        #expect(items.count == 4)
        #expect(items.allSatisfy { $0.verdict == .migrate })
        #expect(items[3].target?.accessGroup == "ABCDE12345.group.shared")
    }

    @Test("a duplicate of the same item from a second dump is shadowed by the first")
    func duplicateAcrossDumps() throws {
        let items = try Expo.run([
            Expo.keychain([Expo.item("item 1")], path: "a.plist"),
            Expo.keychain([Expo.item("item 1")], path: "b.plist"),
        ])
        #expect(items[0].verdict == .migrate)
        guard case .shadowed(let why) = items[1].verdict else {
            Issue.record("duplicate not shadowed")
            return
        }
        #expect(why.contains("a.plist item 1"))
    }

    @Test("SDK 49 akpu bug: the stored class is kept, with a note")
    func sdk49Akpu() throws {
        let item = try #require(try Expo.run([Expo.keychain([Expo.item("1", service: "app", pdmn: "akpu")])]).first)
        #expect(item.verdict == .migrate)
        #expect(item.target?.options.accessible == .whenPasscodeSetThisDeviceOnly)
        #expect(Expo.notes(item, contain: "WHEN_UNLOCKED_THIS_DEVICE_ONLY"))
        #expect(Expo.notes(item, contain: "12.6.0"))
    }

    @Test("SDK 47/48 items are afterFirstUnlock: the stored class wins over the documented default")
    func storedClassOverDefault() throws {
        let item = try #require(
            try Expo.run([Expo.keychain([Expo.item("1", service: "app", pdmn: "ck")])], Expo.app).first)
        #expect(item.target?.options.accessible == .afterFirstUnlock)
        #expect(item.notes.isEmpty)
    }

    @Test("requireAuthentication: biometryCurrentSet (12.0.0+) and userPresence (≤ 11.x), prompting on every read")
    func requireAuthentication() throws {
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("new", service: "app:auth", key: "a", flags: .biometryCurrentSet),
                Expo.item("old", service: "app", key: "b", pdmn: "ck", flags: .userPresence),
            ])
        ])
        #expect(items[0].target?.options.accessControl == .biometryCurrentSet)
        #expect(items[0].target?.options.authValidity == 0)
        #expect(items[1].target?.options.accessControl == .biometryAnyOrPasscode)
        #expect(items[1].target?.options.accessible == .afterFirstUnlock)
        #expect(items[1].target?.options.authValidity == 0)
    }

    @Test("a suffix that disagrees with the item's access control is noted, the item kept as found")
    func suffixDisagreement() throws {
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("1", service: "app:auth", key: "a"),
                Expo.item("2", service: "app:no-auth", key: "b", flags: .biometryCurrentSet),
            ])
        ])
        #expect(items[0].target?.options.accessControl == AccessControl.none)
        #expect(Expo.notes(items[0], contain: "no access control"))
        #expect(items[1].target?.options.accessControl == .biometryCurrentSet)
        #expect(Expo.notes(items[1], contain: "has access control"))
    }

    @Test(
        "synchronizable items: synced when the package allows it, blocked otherwise, and never over a non-synced copy")
    func synchronizable() throws {
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("ok", key: "a", pdmn: "ak", sync: true),
                Expo.item("thisDevice", key: "b", pdmn: "aku", sync: true),
                Expo.item("acl", key: "c", pdmn: "ak", flags: .biometryAny, sync: true),
                Expo.item("synced copy", service: "app:no-auth", key: "d", sync: true),
                Expo.item("local copy", service: "app", key: "d"),
            ])
        ])
        let at = Dictionary(uniqueKeysWithValues: items.map { ($0.origin.location, $0) })
        #expect(at["ok"]?.verdict == .migrate)
        #expect(at["ok"]?.target?.options.synchronizable == true)
        #expect(Expo.notes(at["ok"], contain: "synchronizable"))
        for blocked in ["thisDevice", "acl"] {
            guard case .blocked(let why)? = at[blocked]?.verdict else {
                Issue.record("\(blocked) not blocked")
                continue
            }
            #expect(why.contains("synchronizable"))
        }
        #expect(at["local copy"]?.verdict == .migrate)
        guard case .shadowed(let why)? = at["synced copy"]?.verdict else {
            Issue.record("synced copy not shadowed")
            return
        }
        #expect(why.contains("synchronizable") && why.contains("'app'"))
    }

    @Test("access groups: the app's default is dropped, others kept; without a bundle id the default is inferred")
    func accessGroups() throws {
        let records = [
            Expo.item("1", key: "a"), Expo.item("2", key: "b"),
            Expo.item("3", key: "c", group: "ABCDE12345.group.shared"), Expo.item("4", key: "d", group: nil),
        ]
        let given = try Expo.run(
            [Expo.keychain(records + [Expo.item("5", key: "e", group: "group.com.example.app")])],
            ImportOptions(bundleID: "com.example.app"))
        #expect(
            given.map(\.target?.accessGroup) == [nil, nil, "ABCDE12345.group.shared", nil, "group.com.example.app"])
        #expect(Expo.notes(given[2], contain: "not the app's default"))
        #expect(given[0].notes.isEmpty)

        let inferred = try Expo.run([Expo.keychain(records)])
        #expect(inferred.map(\.target?.accessGroup) == [nil, nil, "ABCDE12345.group.shared", nil])
        #expect(Expo.notes(inferred[0], contain: "taken as the app's default"))

        let other = try Expo.run([Expo.keychain(records)], ImportOptions(bundleID: "com.example.other"))
        #expect(other.map(\.target?.accessGroup) == [Expo.group, Expo.group, "ABCDE12345.group.shared", nil])
    }

    @Test("service filters match the service as found or without its suffix; skipped, and the winner is chosen first")
    func serviceFilters() throws {
        let records = [
            Expo.item("no-auth", service: "app:no-auth"), Expo.item("bare", service: "app"),
            Expo.item("other", service: "other", key: "x"),
        ]
        let included = try Expo.run([Expo.keychain(records)], ImportOptions(includeServices: ["app"]))
        #expect(included.map(\.origin.location) == ["no-auth", "bare", "other"])
        #expect(included[0].verdict == .migrate)
        guard case .skipped(let why) = included[2].verdict else {
            Issue.record("other not skipped")
            return
        }
        #expect(why.contains("'other'"))

        let excluded = try Expo.run([Expo.keychain(records)], ImportOptions(excludeServices: ["app:no-auth"]))
        guard case .skipped = excluded[0].verdict else {
            Issue.record("no-auth copy not skipped")
            return
        }
        guard case .shadowed = excluded[1].verdict else {
            Issue.record("bare copy promoted")
            return
        }
        #expect(excluded[2].verdict == .migrate)
    }

    @Test("the service map: the exact spelling first, then the service without its suffix")
    func serviceMap() throws {
        let records = [
            Expo.item("1", service: "app:no-auth", key: "a"), Expo.item("2", service: "app:auth", key: "b"),
            Expo.item("3", service: "app", key: "c"),
        ]
        let items = try Expo.run(
            [Expo.keychain(records)], ImportOptions(serviceMap: ["app": "com.example.app", "app:auth": "secure"]))
        #expect(items.map(\.target?.service) == ["com.example.app", "secure", "com.example.app"])
        #expect(Expo.notes(items[1], contain: "service map"))
    }

    @Test("values: U+0000 → bytes; not UTF-8 → skipped; absent → sealed; damaged → blocked, never written")
    func values() throws {
        var notUTF8 = Expo.item("bad", key: "b")
        notUTF8.value = .data(Data([0x61, 0xFF]))
        var damaged = Expo.item("damaged", key: "d")
        damaged.value = .damaged("odd-length hex")
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("nul", key: "a", value: "x\u{0}y"), notUTF8, Expo.item("absent", key: "c", value: nil),
                damaged,
            ])
        ])
        #expect(items[0].target?.kind == .bytes)
        #expect(items[0].value == .value(Data("x\u{0}y".utf8)))
        #expect(Expo.notes(items[0], contain: "U+0000"))
        guard case .skipped(let why) = items[1].verdict else {
            Issue.record("non-UTF-8 value not skipped")
            return
        }
        #expect(why.contains("UTF-8"))
        guard case .sealed = items[2].value, case .sealed(let damage) = items[3].value else {
            Issue.record("absent or damaged value not sealed")
            return
        }
        #expect(damage.contains("odd-length hex"))
        #expect(items[2].verdict == .migrate && items[3].verdict == .blocked("damaged value: odd-length hex"))
    }

    @Test("keys: outside expo's JavaScript alphabet noted; beyond the package's rules blocked")
    func keys() throws {
        let long = String(repeating: "k", count: 257)
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("scoped", key: "@owner/slug-token"), Expo.item("long", key: long),
                Expo.item("empty service", service: ":no-auth", key: "e"),
            ])
        ])
        #expect(items[0].verdict == .migrate)
        #expect(items[0].target?.key == "@owner/slug-token")
        #expect(Expo.notes(items[0], contain: "scoped key"))
        guard case .blocked(let why) = items[1].verdict, case .blocked(let empty) = items[2].verdict else {
            Issue.record("invalid names not blocked")
            return
        }
        #expect(why.contains("256"))
        #expect(empty.contains("empty"))
        #expect(items[1].target == nil)
    }

    @Test("protection class: missing or unknown → blocked; the access control's own class wins a disagreement")
    func protectionClass() throws {
        var mismatch = Expo.item("mismatch", key: "c", pdmn: "ak", flags: .biometryAny)
        mismatch.accessControl?.protection = "aku"
        let items = try Expo.run([
            Expo.keychain([
                Expo.item("missing", key: "a", pdmn: nil), Expo.item("unknown", key: "b", pdmn: "f"), mismatch,
            ])
        ])
        guard case .blocked(let missing) = items[0].verdict, case .blocked(let unknown) = items[1].verdict else {
            Issue.record("bad classes not blocked")
            return
        }
        #expect(missing.contains("pdmn"))
        #expect(unknown.contains("'f'"))
        #expect(items[2].target?.options.accessible == .whenUnlockedThisDeviceOnly)
        #expect(Expo.notes(items[2], contain: "differs"))
    }
}
