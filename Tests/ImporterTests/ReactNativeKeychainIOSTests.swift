import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import Foundation
import ReactNativeKeychainImporter
import Testing

/// A react-native-keychain iOS record: a generic password by default.
func rnkRecord(
    _ itemClass: String = "genp", service: String? = "com.example.app", server: String? = nil,
    account: DumpBytes? = .string("rnk-user-0001"), password: String = "rnk-pass-0001", pdmn: String? = "ck",
    group: String? = "ABCDE12345.com.example.app", flags: AccessControlFlags? = nil, insideProtection: String? = nil,
    sync: Bool = false, location: String = "item 1"
) -> KeychainRecord {
    KeychainRecord(
        location: location, itemClass: itemClass, service: service.map { .string($0) }, account: account,
        value: .data(Data(password.utf8)), protection: pdmn, accessGroup: group, synchronizable: sync, server: server,
        accessControl: flags.map {
            AccessControlDescription(flags: $0, protection: insideProtection, raw: "flags \($0.rawValue)")
        })
}

/// react-native-keychain on iOS: services, the default service, other SDKs' items, filters and values.
@Suite struct ReactNativeKeychainIOSTests {
    let importer = ReactNativeKeychainImporter()

    func run(_ records: [KeychainRecord], _ options: ImportOptions = ImportOptions()) throws -> [SourceItem] {
        try importer.importItems(from: [keychainDump(records)], options: options)
    }

    @Test func genericPasswordInTheBundleIDService() throws {
        let items = try run([rnkRecord()], ImportOptions(bundleID: "com.example.app"))
        let item = try #require(items.first)
        #expect(items.count == 1)
        #expect(item.library == .reactNativeKeychain && item.platform == .ios)
        #expect(item.value == .credentials(username: "rnk-user-0001", password: "rnk-pass-0001"))
        #expect(item.verdict == .migrate)
        #expect(
            item.target
                == TargetItem(
                    service: "com.example.app", key: "credentials", kind: .credentials,
                    options: SetOptions(
                        accessible: .afterFirstUnlock, accessControl: AccessControl.none, synchronizable: false)))
        #expect(
            item.source
                == SourceDescription(
                    itemClass: "genp", service: "com.example.app", account: "rnk-user-0001",
                    accessGroup: "ABCDE12345.com.example.app", protection: ["pdmn": "ck", "synchronizable": "false"]))
        #expect(
            item.notes == [
                "the app's default service 'com.example.app' is the bundle id given (--bundle-id, or the store's from 'store init --bundle-id')"
            ])
    }

    @Test func defaultServiceInferredFromTheAccessGroup() throws {
        let records = [
            rnkRecord(),
            rnkRecord("inet", service: nil, server: "https://example.com", location: "item 2"),
        ]
        let items = try run(records)
        let inferred =
            "the app's default service 'com.example.app' is the bundle id inferred from access group 'ABCDE12345.com.example.app'; to set it yourself, pass --bundle-id to migrate"
        #expect(items.allSatisfy { $0.notes.contains(inferred) })
        #expect(items[1].target?.service == "com.example.app")
        #expect(items[1].target?.key == "credentials:https://example.com")
        #expect(items[1].target?.accessGroup == nil)
        #expect(items[1].source.server == "https://example.com")
    }

    @Test func internetCredentialsWithoutAKnownDefaultServiceNeedTheBundleID() throws {
        let records = [
            rnkRecord(service: "auth", group: "ABCDE12345.com.example.one"),
            rnkRecord("inet", service: nil, server: "https://example.com", group: "ABCDE12345.com.example.two"),
        ]
        let items = try run(records)
        #expect(items[0].verdict == .migrate)
        guard case .needsInput(let reason) = items[1].verdict else {
            Issue.record("\(items[1].verdict)")
            return
        }
        #expect(reason.contains("--bundle-id"))
        // Without a bundle id, a group can't be told from the default one: it is kept.
        #expect(items[0].target?.accessGroup == "ABCDE12345.com.example.one")
        // Given the bundle id, the inet item goes to it and the other group stays explicit.
        let given = try run(records, ImportOptions(bundleID: "com.example.two"))
        #expect(given[1].target?.service == "com.example.two")
        #expect(given[1].target?.accessGroup == nil)
        #expect(given[0].target?.accessGroup == "ABCDE12345.com.example.one")
    }

    @Test func serviceMapRenamesServices() throws {
        let records = [rnkRecord(service: "auth"), rnkRecord("inet", service: nil, server: "api", location: "item 2")]
        let items = try run(
            records, ImportOptions(bundleID: "com.example.app", serviceMap: ["auth": "main", "com.example.app": "app"]))
        #expect(items[0].target?.service == "main")
        #expect(items[0].notes.contains("service 'auth' is written to 'main', as the service map says"))
        #expect(items[1].target?.service == "app")
        #expect(items[1].target?.key == "credentials:api")
    }

    @Test func otherSDKsItemsAreSkipped() throws {
        var labelled = rnkRecord(service: "airship", location: "item 3")
        labelled.label = "com.urbanairship.channel"
        var generic = rnkRecord(service: "other", location: "item 4")
        generic.generic = .string("something")
        let records = [
            rnkRecord(),
            rnkRecord(account: .string("_pfo"), password: "1", location: "item 2"),
            labelled, generic,
            rnkRecord(service: "wifi", group: "apple", location: "item 5"),
            rnkRecord(service: "signal", group: "U68MSDN6DR.org.whispersystems.signal", location: "item 6"),
        ]
        let items = try run(records, ImportOptions(bundleID: "com.example.app"))
        #expect(
            items.map(\.verdict) == [
                .migrate,
                .skipped(
                    "another SDK's item: Firebase's marker item, which shares the app's default service (react-native-keychain issues #363 and #648)"
                ),
                .skipped(
                    "not react-native-keychain's item: it has a label (labl), which react-native-keychain never sets"),
                .skipped(
                    "not react-native-keychain's item: it has a generic attribute (gena), which react-native-keychain never sets"
                ),
                .skipped("not the app's item: access group 'apple' is Apple's"),
                .skipped(
                    "not the app's item: access group 'U68MSDN6DR.org.whispersystems.signal' belongs to team 'U68MSDN6DR', not the app's team 'ABCDE12345'"
                ),
            ])
        #expect(items.dropFirst().allSatisfy { $0.target == nil })
    }

    @Test func expoItemsAndOtherClassesAreLeftOut() throws {
        let key = Data("token".utf8)
        var expo = rnkRecord(service: "app", account: .data(key), location: "item 2")
        expo.generic = .data(key)
        var expoAuth = rnkRecord(service: "app:auth", account: .string("token"), location: "item 3")
        expoAuth.generic = .string("token")
        let certificate = KeychainRecord(location: "item 4", itemClass: "cert")
        let key4 = KeychainRecord(location: "item 5", itemClass: "keys", value: .data(Data([1, 2, 3])))
        let items = try run([rnkRecord(), expo, expoAuth, certificate, key4])
        #expect(items.map(\.origin.location) == ["item 1"])
    }

    @Test func includeAndExcludeServices() throws {
        let records = [
            rnkRecord(service: "auth"), rnkRecord(service: "other", location: "item 2"),
            rnkRecord("inet", service: nil, server: "https://example.com", location: "item 3"),
        ]
        let included = try run(records, ImportOptions(bundleID: "com.example.app", includeServices: ["auth"]))
        #expect(
            included.map(\.verdict) == [
                .migrate,
                .skipped("filtered by the user: service 'other' is not among the included services"),
                .skipped("filtered by the user: server 'https://example.com' is not among the included services"),
            ])
        #expect(included[1].target?.service == "other")
        let excluded = try run(
            records, ImportOptions(bundleID: "com.example.app", excludeServices: ["auth", "https://example.com"]))
        #expect(
            excluded.map(\.verdict) == [
                .skipped("filtered by the user: service 'auth' is excluded"), .migrate,
                .skipped("filtered by the user: server 'https://example.com' is excluded"),
            ])
    }

    @Test func cloudSyncItemsStaySynchronizableWithTheBugNoted() throws {
        let items = try run([rnkRecord(sync: true)], ImportOptions(bundleID: "com.example.app"))
        #expect(items[0].target?.options.synchronizable == true)
        #expect(items[0].source.protection["synchronizable"] == "true")
        #expect(items[0].notes.contains { $0.contains("cloudSync: false (issue #800)") })
    }

    /// objection's JSON does not say whether an item synchronizes: the protection shows "unknown", where it said
    /// "false", and a note says the item is migrated as not synchronizable and what to read instead.
    @Test func unknownSyncIsShownAndNoted() throws {
        var record = rnkRecord()
        record.unrecorded.insert("sync")
        let items = try run([record, rnkRecord(service: "plain")], ImportOptions(bundleID: "com.example.app"))
        #expect(items[0].source.protection["synchronizable"] == "unknown")
        #expect(items[0].target?.options.synchronizable != true)
        #expect(items[0].notes.contains { $0.hasPrefix("the dump does not say whether the item synchronizes") })
        #expect(items[1].source.protection["synchronizable"] == "false")
        #expect(!items[1].notes.contains { $0.contains("synchronizes") })
    }

    /// objection's JSON leaves out whether an item synchronizes and an internet password's server. Beside a
    /// dump that records them, its copy of an item (same class, service, account, group, protection and value) is
    /// shadowed by the fuller one, instead of conflicting with it or being blocked for its server.
    @Test func partialCopiesAreShadowedByTheFullerDump() throws {
        var synced = rnkRecord(service: "cloud")
        synced.unrecorded.insert("sync")
        var internet = rnkRecord("inet", service: nil, server: nil)
        internet.unrecorded.formUnion(["sync", "srvr", "ptcl", "port", "path"])
        var other = rnkRecord(service: "other", password: "another-value")
        other.unrecorded.insert("sync")
        let partial = keychainDump([synced, internet, other], path: "keychain.json", format: .objectionJSON)
        let full = keychainDump(
            [rnkRecord(service: "cloud", sync: true), rnkRecord("inet", service: nil, server: "https://example.com")],
            path: "keychain.plist")
        let items = try importer.importItems(
            from: [partial, full], options: ImportOptions(bundleID: "com.example.app"))
        #expect(
            items.map { $0.verdict.reason == nil ? "migrate" : String(describing: $0.verdict).prefix(8) } == [
                "shadowed", "shadowed", "migrate", "migrate", "migrate",
            ])
        #expect(
            items[0].verdict.reason?.hasPrefix("the same item is in keychain.plist item 1, which also records") == true)
        // Alone, the partial dump's items are what they were: the server unknown is blocked.
        let alone = try importer.importItems(from: [partial], options: ImportOptions(bundleID: "com.example.app"))
        #expect(
            alone.map { if case .blocked = $0.verdict { "blocked" } else { "\($0.verdict)" } } == [
                "migrate", "blocked", "migrate",
            ])
    }

    @Test func servicesWithColonsAndAccessGroups() throws {
        let records = [
            rnkRecord(service: "session:v2"),
            rnkRecord(service: "shared", group: "ABCDE12345.com.example.shared", location: "item 2"),
            rnkRecord(service: "group", group: "group.com.example", location: "item 3"),
        ]
        let items = try run(records, ImportOptions(bundleID: "com.example.app"))
        #expect(items.map { $0.target?.service } == ["session:v2", "shared", "group"])
        #expect(items.map { $0.target?.accessGroup } == [nil, "ABCDE12345.com.example.shared", "group.com.example"])
        #expect(
            items[1].notes.contains(
                "kept in access group 'ABCDE12345.com.example.shared', which is not the app's default group"))
    }

    @Test func valuesThatCantBeCredentialsAreBlocked() throws {
        var binary = rnkRecord(service: "binary")
        binary.value = .data(Data([0xFF, 0xFE, 0x00]))
        var absent = rnkRecord(service: "absent", location: "item 6")
        absent.value = .absent
        let records = [
            binary,
            rnkRecord(service: "nul", password: "a\u{0}b", location: "item 2"),
            rnkRecord(service: "empty", account: .string(""), location: "item 3"),
            rnkRecord(service: "noaccount", account: nil, location: "item 4"),
            rnkRecord(service: "dataaccount", account: .data(Data([0xC3])), location: "item 5"),
            absent,
        ]
        let items = try run(records, ImportOptions(bundleID: "com.example.app"))
        #expect(
            items.map(\.verdict) == [
                .blocked("the password (data) is not valid UTF-8, so it can't be a credentials password"),
                .blocked("the password (data) contains U+0000, which a credentials password can't hold"),
                .blocked("the account (the username) is empty; the package's credentials need one"),
                .blocked("the item has no account, so it holds no username"),
                .blocked("the account (the username) is not valid UTF-8"),
                .migrate,
            ])
        #expect(items[0].value == .value(Data([0xFF, 0xFE, 0x00])))
        // Issue 14, item 2: a blocked item keeps its intended target, with the protection it would have had.
        #expect(
            items[0].target
                == TargetItem(
                    service: "binary", key: "credentials", kind: .credentials,
                    options: SetOptions(
                        accessible: .afterFirstUnlock, accessControl: AccessControl.none, synchronizable: false)))
        #expect(items.dropLast().map { $0.target?.service } == ["binary", "nul", "empty", "noaccount", "dataaccount"])
        #expect(items.allSatisfy { $0.target?.protectionKnown == true })
        #expect(items[5].value == .sealed("the dump holds no value for this item"))
    }

    @Test func emptyOrOverlongTargetNamesAreBlocked() throws {
        let long = String(repeating: "s", count: 257)
        // A generic password with an empty service is react-native-encrypted-storage's layout: left to its importer.
        let items = try run([rnkRecord(service: ""), rnkRecord(service: long, location: "item 2")])
        #expect(items.map(\.origin.location) == ["item 2"])
        guard case .blocked(let overlong) = items.first?.verdict else {
            Issue.record("\(items.map(\.verdict))")
            return
        }
        #expect(overlong.contains("longer than 256"))
        #expect(try run([rnkRecord(service: "")], ImportOptions(serviceMap: ["": "main"])).isEmpty)
    }

    @Test func severalItemsInOneServiceAreNoted() throws {
        let records = [
            rnkRecord(service: "auth"),
            rnkRecord(service: "auth", account: .string("rnk-user-0002"), location: "item 2"),
        ]
        let items = try run(records, ImportOptions(bundleID: "com.example.app"))
        #expect(items.allSatisfy { $0.notes.contains { $0.hasPrefix("2 items share this service") } })
    }

    /// Review (command line, item 9): the count was taken across files, so two exports of one keychain said "2 items
    /// share this service" of every item. It counts the items of one dump.
    @Test func theSharedServiceCountIsPerDump() throws {
        let records = [
            rnkRecord(service: "auth"),
            rnkRecord(service: "auth", account: .string("rnk-user-0002"), location: "item 2"),
        ]
        let single = [rnkRecord(service: "solo")]
        let dumps = [
            keychainDump(records, path: "a.plist"), keychainDump(records, path: "b.plist", format: .keychainSQLite),
            keychainDump(single, path: "c.plist"), keychainDump(single, path: "d.plist"),
        ]
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        #expect(items.count == 6)
        for item in items {
            let shares = item.notes.filter { $0.contains("share this service") }
            #expect(shares == (item.source.service == "auth" ? [shares.first ?? ""] : []), "\(item.origin.path)")
            #expect(shares.allSatisfy { $0.hasPrefix("2 items share") }, "\(shares)")
        }
    }

    @Test func internetPasswordsWhoseServerTheDumpDoesNotRecordAreBlockedNotConflicting() throws {
        var first = rnkRecord("inet", service: nil, server: nil)
        first.unrecorded = ["srvr", "ptcl", "port", "path"]
        var second = first
        second.location = "item 2"
        let options = ImportOptions(bundleID: "com.example.app")
        let items = try importer.importItems(
            from: [keychainDump([first, second], path: "keychain.json", format: .objectionJSON)], options: options)
        #expect(items.count == 2)
        for item in items {
            #expect(
                item.verdict
                    == .blocked(
                        "the server, which names the target key (credentials:<server>), is unknown: objection's JSON has no server field; read a plist or SQLite export of the same keychain, or add \"server\" to this item"
                    ))
            #expect(item.target == nil)
            // Not two items of one server: nothing is known of their servers.
            #expect(!item.notes.contains { $0.contains("share this server") })
        }
        // A server the dump records, even an empty one, names the key.
        var empty = first
        empty.server = ""
        empty.unrecorded = []
        let known = try run([empty], options)
        #expect(known[0].verdict == .migrate && known[0].target?.key == "credentials:")
    }

    @Test func undecodedAccessControlIsBlocked() throws {
        var record = rnkRecord()
        record.extra["accc"] = "hex:310d300b"
        let items = try run([record], ImportOptions(bundleID: "com.example.app"))
        #expect(
            items[0].verdict
                == .blocked(
                    "the item has an access control (accc) the dump reader could not decode, so its protection is unknown"
                ))
        #expect(items[0].source.protection["accessControl"] == "hex:310d300b")
    }

    @Test func itemsOfEveryDumpAreRead() throws {
        let dumps = [
            keychainDump([rnkRecord(service: "a")], path: "a.plist"),
            keychainDump([rnkRecord(service: "b", location: "genp row 1")], path: "b.sqlite", format: .keychainSQLite),
        ]
        let items = try importer.importItems(from: dumps, options: ImportOptions(bundleID: "com.example.app"))
        #expect(
            items.map(\.origin) == [
                SourceOrigin(path: "a.plist", format: .iosPlist, location: "item 1"),
                SourceOrigin(path: "b.sqlite", format: .keychainSQLite, location: "genp row 1"),
            ])
    }
}
