import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter
import SampleDumps
import Testing

/// Builders of react-native-sensitive-info dumps.
enum RNSI {
    static let group = "ABCDE12345.com.example.app"
    static let app = ImportOptions(bundleID: "com.example.app")
    static let named = ImportOptions(libraries: [.reactNativeSensitiveInfo])

    /// A generic password as react-native-sensitive-info writes it: account = key (text), value = UTF-8.
    static func record(
        _ location: String = "item 1", service: String = "app", key: String = "token", value: String = "rnsi-v",
        pdmn: String? = "ak", flags: AccessControlFlags? = nil, generic: String? = nil, group: String? = RNSI.group,
        sync: Bool = false, label: String? = nil
    ) -> KeychainRecord {
        KeychainRecord(
            location: location, itemClass: "genp", service: .string(service), account: .string(key),
            generic: generic.map { .data(Data($0.utf8)) }, value: .data(Data(value.utf8)), protection: pdmn,
            accessGroup: group, label: label, synchronizable: sync,
            accessControl: flags.map {
                AccessControlDescription(flags: $0, protection: pdmn, raw: "flags 0x\(String($0.rawValue, radix: 16))")
            })
    }

    static let v56Metadata =
        #"{"accessControl":"secureEnclaveBiometry","securityLevel":"secureEnclave","timestamp":1761800000}"#
    static let v6Metadata =
        #"{"securityLevel":"software","backend":"keychain","accessControl":"none","timestamp":1765000000.5}"#

    /// A generated sample file, read by the real readers under its sample path.
    static func sample(_ path: String) throws -> Dump {
        let file = try #require(try SampleTree.files().first { $0.path == path }, "\(path) is not generated")
        let scratch = try ScratchFolder("rnsi")
        let url = scratch.file(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try file.data.write(to: url)
        var dump = try DumpReader.read(path: url.path)
        dump.path = path
        return dump
    }

    static func target(_ item: SourceItem) -> String {
        guard let t = item.target else { return "-" }
        return
            "\(t.service)/\(t.key) \(t.options.accessible?.rawValue ?? "default") \(t.options.accessControl?.rawValue ?? "default")"
    }
}

@Suite struct ReactNativeSensitiveInfoIOSTests {
    let importer = ReactNativeSensitiveInfoImporter()

    func run(_ records: [KeychainRecord], _ options: ImportOptions = RNSI.app) throws -> [SourceItem] {
        try importer.importItems(from: [keychainDump(records)], options: options)
    }

    /// objection's JSON does not say whether an item synchronizes: `sync` shows "unknown", and the item gets the
    /// note that it is migrated as not synchronizable (react-native-sensitive-info can write synchronizable items).
    @Test func unknownSyncIsShownAndNoted() throws {
        var record = RNSI.record()
        record.unrecorded.insert("sync")
        let items = try run([record, RNSI.record("item 2", key: "other")])
        #expect(items[0].source.protection["sync"] == "unknown")
        #expect(items[0].target?.options.synchronizable != true)
        #expect(items[0].notes.contains { $0.hasPrefix("the dump does not say whether the item synchronizes") })
        #expect(items[1].source.protection["sync"] == "0")
        #expect(!items[1].notes.contains { $0.contains("synchronizes") })
    }

    @Test("the generated plist: classic, 5.6.x and 6.x items mapped from the item as found")
    func samplePlist() throws {
        let dump = try RNSI.sample("react-native-sensitive-info/ios/keychain.plist")
        let items = try importer.importItems(
            from: [dump], options: ImportOptions(bundleID: "com.example.rnsiapp"))
        let rows = items.map { "\($0.source.service ?? "")/\($0.source.account ?? "") → \(RNSI.target($0))" }
        #expect(
            rows == [
                "app/authToken → app/authToken whenUnlocked none",
                "app/refreshToken → app/refreshToken afterFirstUnlock none",
                "app/pin → app/pin whenPasscodeSetThisDeviceOnly biometryAnyOrPasscode",
                "app/faceSecret → app/faceSecret whenPasscodeSetThisDeviceOnly biometryCurrentSet",
                "app/legacyFlag → app/legacyFlag afterFirstUnlock none",
                "default/authToken → default/authToken whenUnlockedThisDeviceOnly biometryCurrentSet",
                "default/theme → default/theme whenUnlockedThisDeviceOnly none",
                "default/sessionKey → default/sessionKey whenPasscodeSetThisDeviceOnly biometryCurrentSet",
                "default/apiKey → default/apiKey afterFirstUnlock none",
                "vault/walletSeed → vault/walletSeed whenPasscodeSetThisDeviceOnly passcode",
                "default.rnsi.hmac/metadata → -",
            ])
        #expect(items.dropLast().allSatisfy { $0.verdict == .migrate && $0.target?.kind == .string })
        #expect(items.dropLast().allSatisfy { $0.target?.accessGroup == nil })
        guard case .skipped(let reason) = items.last?.verdict else {
            Issue.record("the HMAC key item is not skipped")
            return
        }
        #expect(reason.contains("metadata HMAC key"))
        #expect(items[4].notes.contains { $0.contains("pdmn dk") })
        #expect(items[5].notes.contains { $0.contains("5.6.x") } && items[7].notes.contains { $0.contains("6.x") })
    }

    @Test("gena decides between expo-secure-store and react-native-sensitive-info under `app`, both ways")
    func genaDecides() throws {
        let rnsi = RNSI.record("item 1", key: "rnsiKey")
        let expo = Expo.item("item 2", service: "app", key: "expoKey")
        let dump = keychainDump([rnsi, expo])
        let mine = try importer.importItems(from: [dump], options: RNSI.app)
        #expect(mine.map(\.origin.location) == ["item 1"])
        #expect(
            mine.first?.notes.contains { $0.contains("expo-secure-store") && $0.contains("generic attribute") } == true)
        let theirs = try ExpoSecureStoreImporter().importItems(from: [dump], options: RNSI.app)
        #expect(theirs.map(\.origin.location) == ["item 2"])
        // Even with --from naming this library, an expo item is never taken: its gena is not the JSON.
        #expect(try importer.importItems(from: [dump], options: RNSI.named).map(\.origin.location) == ["item 1"])
        // react-native-keychain leaves both out.
        #expect(try ReactNativeKeychainImporter().importItems(from: [dump], options: RNSI.app).isEmpty)
    }

    @Test("which records are claimed: gena JSON anywhere; no gena only under `app`, or anywhere with --from")
    func claims() throws {
        let records = [
            RNSI.record("item 1", service: "custom", key: "a"),
            RNSI.record("item 2", service: "custom", key: "b", generic: RNSI.v56Metadata),
            RNSI.record("item 3", service: "default", key: "c", generic: RNSI.v6Metadata),
            RNSI.record("item 4", service: "default", key: "d"),
            RNSI.record("item 5", key: "e", label: "a label"),
            RNSI.record("item 6", service: "app", key: "f", generic: #"{"other":"json"}"#),
            RNSI.record("item 7", service: "com.example.app", key: "_pfo"),
        ]
        #expect(try run(records).map(\.origin.location) == ["item 2", "item 3"])
        let named = try run(records, RNSI.named)
        #expect(named.map(\.origin.location) == ["item 1", "item 2", "item 3", "item 4"])
        #expect(named[0].notes.contains(where: { $0.contains("--from react-native-sensitive-info") }))
        // react-native-keychain takes exactly what this importer leaves (items 1, 4, 5; item 6 is skipped for its
        // gena), and with --from react-native-keychain also the `app` items.
        let rnk = try ReactNativeKeychainImporter().importItems(from: [keychainDump(records)], options: RNSI.app)
        #expect(rnk.map(\.origin.location) == ["item 1", "item 4", "item 5", "item 6", "item 7"])
        let appItem = [RNSI.record("item 1")]
        #expect(try run(appItem).count == 1)
        #expect(try run(appItem, ImportOptions(libraries: [.reactNativeKeychain])).isEmpty)
        #expect(
            try ReactNativeKeychainImporter().importItems(
                from: [keychainDump(appItem)], options: ImportOptions(libraries: [.reactNativeKeychain])
            ).count == 1)
    }

    @Test("protection: the stored pdmn is trusted, a missing one blocks; flags as expo maps them; never weaker")
    func protection() throws {
        let items = try run([
            RNSI.record("item 1", key: "a", pdmn: nil),
            RNSI.record("item 2", key: "b", pdmn: "akpu", flags: [.userPresence]),
            RNSI.record("item 3", key: "c", pdmn: "akpu", flags: [.biometryAny]),
            RNSI.record("item 4", key: "d", pdmn: "akpu", flags: [.applicationPassword]),
            RNSI.record("item 5", key: "e", pdmn: "dku"),
            RNSI.record("item 6", key: "f", pdmn: "cku", generic: RNSI.v56Metadata),
            RNSI.record("item 7", key: "g", pdmn: "ck", flags: []),
        ])
        guard case .blocked(let reason) = items[0].verdict else {
            Issue.record("an item without pdmn is not blocked")
            return
        }
        #expect(reason.contains("whenUnlocked is not assumed"))
        #expect(items[0].target?.protectionKnown == false)
        #expect(RNSI.target(items[1]).hasSuffix("whenPasscodeSetThisDeviceOnly biometryAnyOrPasscode"))
        #expect(RNSI.target(items[2]).hasSuffix("whenPasscodeSetThisDeviceOnly biometryAny"))
        #expect(items[3].verdict.isBlocked)
        #expect(RNSI.target(items[4]).hasSuffix("afterFirstUnlockThisDeviceOnly none"))
        // The metadata says secureEnclaveBiometry, the item has no access control: kept as found, with a note.
        #expect(RNSI.target(items[5]).hasSuffix("afterFirstUnlockThisDeviceOnly none"))
        #expect(items[5].notes.contains { $0.contains("the metadata names an access control") })
        // An access control without a flag (objection's `None`) is not touchID's.
        #expect(RNSI.target(items[6]).hasSuffix("afterFirstUnlock none"))
        #expect(!items[6].notes.contains { $0.contains("touchID") }, "\(items[6].notes)")
        #expect(items[1].notes.contains { $0.contains("touchID: true and userPresence") })
        #expect(items[2].notes.contains { $0.contains("over protection class akpu") })
    }

    @Test("sync, access groups, service map, filters, values and duplicates")
    func targets() throws {
        var binary = RNSI.record("item 6", key: "bin")
        binary.value = .data(Data([0xFF, 0xFE]))
        let items = try run(
            [
                RNSI.record("item 1", key: "synced", pdmn: "ak", sync: true),
                RNSI.record("item 2", key: "syncedBio", pdmn: "akpu", flags: [.userPresence], sync: true),
                RNSI.record("item 3", key: "shared", group: "ABCDE12345.group.shared"),
                RNSI.record("item 4", key: "nul", value: "a\u{0}b"),
                RNSI.record("item 5", key: "synced", pdmn: "ck"),
                binary,
            ],
            ImportOptions(bundleID: "com.example.app", serviceMap: ["app": "main"]))
        #expect(items[0].target?.options.synchronizable == true && items[0].verdict == .migrate)
        #expect(items[1].verdict.isBlocked)
        #expect(items[2].target?.accessGroup == "ABCDE12345.group.shared")
        #expect(items[3].target?.kind == .bytes)
        #expect(items.allSatisfy { $0.target.map { $0.service == "main" } ?? true })
        #expect(items[4].verdict.isShadowed)
        #expect(items[5].verdict.isSkipped)
        let filtered = try run([RNSI.record()], ImportOptions(excludeServices: ["app"]))
        #expect(filtered.first?.verdict.isSkipped == true)
    }
}

extension SourceVerdict {
    var isBlocked: Bool { if case .blocked = self { true } else { false } }
    var isShadowed: Bool { if case .shadowed = self { true } else { false } }
    var isSkipped: Bool { if case .skipped = self { true } else { false } }
    var isNeedsInput: Bool { if case .needsInput = self { true } else { false } }
}
