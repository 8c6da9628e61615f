import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import Testing

/// Builders for the react-native-encrypted-storage tests.
enum RNES {
    static let group = "ABCDE12345.com.example.app"
    static let app = ImportOptions(bundleID: "com.example.app")
    static let named = ImportOptions(libraries: [.reactNativeEncryptedStorage])

    /// An item as the library writes it: no service (empty), account = key, UTF-8 value, nothing else.
    static func item(
        _ location: String, key: String = "token", value: String = "v", service: DumpBytes? = .string(""),
        pdmn: String? = "ak", group: String? = RNES.group, label: String? = nil
    ) -> KeychainRecord {
        KeychainRecord(
            location: location, itemClass: "genp", service: service, account: .string(key),
            value: .data(Data(value.utf8)), protection: pdmn, accessGroup: group, label: label)
    }

    static func run(_ dumps: [Dump], _ options: ImportOptions = ImportOptions()) throws -> [SourceItem] {
        try ReactNativeEncryptedStorageImporter().importItems(from: dumps, options: options)
    }

    static func reason(_ verdict: SourceVerdict) -> String? {
        verdict.reason
    }

    /// The samples folder of the repository.
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples").path

    /// Every dump file under `samples/<library>/`, read by the real readers.
    static func sampleDumps(_ library: String) throws -> [Dump] {
        let root = samples + "/" + library
        let files = try FileManager.default.subpathsOfDirectory(atPath: root).sorted()
        return try files.compactMap { file in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + file, isDirectory: &isFolder),
                !isFolder.boolValue,
                DumpReader.detect(try Data(contentsOf: URL(fileURLWithPath: root + "/" + file))) != nil
            else {
                return nil
            }
            return try DumpReader.read(path: root + "/" + file)
        }
    }
}

@Suite("react-native-encrypted-storage on iOS")
struct ReactNativeEncryptedStorageIOSTests {
    @Test("an empty-service generic password becomes a string under the app's default service, whenUnlocked")
    func maps() throws {
        let items = try RNES.run([keychainDump([RNES.item("genp item 1", key: "session", value: "s3cret")])], RNES.app)
        let item = try #require(items.first)
        #expect(items.count == 1)
        #expect(item.library == .reactNativeEncryptedStorage && item.verdict == .migrate)
        #expect(item.value == .value(Data("s3cret".utf8)))
        let target = try #require(item.target)
        #expect(target.service == "com.example.app" && target.key == "session" && target.kind == .string)
        #expect(target.options.accessible == .whenUnlocked && target.options.accessControl == AccessControl.none)
        #expect(target.accessGroup == nil)
        #expect(item.notes.contains { $0.contains("weak evidence") })
        #expect(item.notes.contains { $0.contains("the bundle id given (--bundle-id, or the store's") })
    }

    @Test("a key the package can't take (too long, or holding U+0000) is blocked, saying why")
    func nameProblems() throws {
        let long = String(repeating: "k", count: 257)
        let items = try RNES.run(
            [keychainDump([RNES.item("1", key: long), RNES.item("2", key: "a\u{0}b"), RNES.item("3")])], RNES.app)
        #expect(items.map { $0.verdict == .migrate } == [false, false, true])
        #expect(RNES.reason(items[0].verdict) == "the target key would be longer than the package's 256 characters")
        #expect(RNES.reason(items[1].verdict) == "the target key would contain U+0000, which the package refuses")
    }

    @Test("the default service is inferred from the access group, with a note; unknown, the item needs the bundle id")
    func inferred() throws {
        let inferred = try #require(try RNES.run([keychainDump([RNES.item("1")])]).first)
        #expect(inferred.target?.service == "com.example.app")
        #expect(inferred.notes.contains { $0.contains("inferred from access group") })
        let unknown = try #require(try RNES.run([keychainDump([RNES.item("1", group: nil)])]).first)
        #expect(unknown.target == nil)
        #expect(RNES.reason(unknown.verdict)?.contains("pass --bundle-id") == true)
        if case .needsInput = unknown.verdict {} else { Issue.record("not needsInput: \(unknown.verdict)") }
        let mapped = try #require(
            try RNES.run([keychainDump([RNES.item("1", group: nil)])], ImportOptions(serviceMap: ["": "store"])).first)
        #expect(mapped.target?.service == "store" && mapped.verdict == .migrate)
        // Mapping the default service moves them with it.
        let moved = try #require(
            try RNES.run([keychainDump([RNES.item("1")])], ImportOptions(serviceMap: ["com.example.app": "main"])).first
        )
        #expect(moved.target?.service == "main")
        #expect(moved.notes.contains { $0.contains("the service map writes 'com.example.app' to 'main'") })
    }

    @Test("an absent service counts as empty, unless the dump's format can't record it")
    func absentService() throws {
        let absent = RNES.item("1", service: nil)
        #expect(try RNES.run([keychainDump([absent])], RNES.app).count == 1)
        let unrecorded = KeychainRecord(
            location: "2", itemClass: "genp", account: .string("k"), value: .data(Data("v".utf8)),
            unrecorded: ["svce"])
        #expect(try RNES.run([keychainDump([unrecorded])], RNES.app).isEmpty)
        let named = RNES.item("3", service: .string("com.example.app"))
        #expect(try RNES.run([keychainDump([named])], RNES.app).isEmpty)
    }

    @Test("the stored pdmn is trusted; none recorded or an unknown one is blocked (Apple's default is never assumed)")
    func protection() throws {
        let records = [
            RNES.item("1", key: "a", pdmn: nil), RNES.item("2", key: "b", pdmn: "aku"),
            RNES.item("3", key: "c", pdmn: "dk"), RNES.item("4", key: "d", pdmn: "akpu"),
            RNES.item("5", key: "e", pdmn: "zz"),
        ]
        let items = try RNES.run([keychainDump(records)], RNES.app)
        #expect(
            items.map { $0.target?.options.accessible } == [
                nil, .whenUnlockedThisDeviceOnly, .afterFirstUnlock, .whenPasscodeSetThisDeviceOnly, nil,
            ])
        #expect(items[0].target?.protectionKnown == false)
        #expect(RNES.reason(items[0].verdict)?.contains("whenUnlocked is not assumed") == true)
        #expect(items[1].notes.contains { $0.contains("issue #104") })
        #expect(items[2].notes.contains { $0.contains("nearest stronger") })
        #expect(items[4].target?.protectionKnown == false)
        #expect(RNES.reason(items[4].verdict)?.contains("unknown protection class") == true)
    }

    @Test("another SDK's empty-service item is skipped, and the unmarked ones then need --from")
    func contradicted() throws {
        let dump = keychainDump([RNES.item("1", key: "a"), RNES.item("2", key: "b", label: "Some SDK")])
        let items = try RNES.run([dump], RNES.app)
        #expect(RNES.reason(items[1].verdict)?.contains("a label (labl)") == true)
        #expect(RNES.reason(items[0].verdict)?.contains("pass --from react-native-encrypted-storage") == true)
        var named = RNES.named
        named.bundleID = "com.example.app"
        let claimed = try RNES.run([dump], named)
        #expect(claimed[0].verdict == .migrate)
        #expect(claimed[0].notes.contains { $0.contains("--from react-native-encrypted-storage names the library") })
        #expect(RNES.reason(claimed[1].verdict)?.contains("a label (labl)") == true)
        // Another dump, without the other SDK's item, is not contradicted.
        let clean = try RNES.run([dump, keychainDump([RNES.item("1", key: "a")], path: "other.plist")], RNES.app)
        #expect(clean.last?.verdict == .migrate)
        // Another team's group is recognised too, once the app's team is known.
        let foreign = try RNES.run(
            [keychainDump([RNES.item("1"), RNES.item("2", key: "b", group: "ZZZZZ99999.com.other.app")])], RNES.app)
        #expect(RNES.reason(foreign[1].verdict)?.contains("belongs to team") == true)
        #expect(foreign[0].verdict == .migrate, "another app's item says nothing of this app's")
        if case .skipped = foreign.last?.verdict {
        } else {
            Issue.record("not skipped: \(String(describing: foreign.first))")
        }
    }

    @Test("a value that is not UTF-8, a missing value and an excluded empty service")
    func oddItems() throws {
        let bad = KeychainRecord(
            location: "1", itemClass: "genp", service: .string(""), account: .string("k"),
            value: .data(Data([0xFF, 0xFE])), protection: "ak", accessGroup: RNES.group)
        let blocked = try #require(try RNES.run([keychainDump([bad])], RNES.app).first)
        #expect(RNES.reason(blocked.verdict)?.contains("not valid UTF-8") == true)
        let absent = KeychainRecord(
            location: "1", itemClass: "genp", service: .string(""), account: .string("k"), protection: "ak")
        if case .sealed = try #require(try RNES.run([keychainDump([absent])], RNES.app).first).value {
        } else {
            Issue.record("a missing value is not sealed")
        }
        var guarded = RNES.item("1")
        guarded.accessControl = AccessControlDescription(flags: [.biometryAny], raw: "flags 2")
        var none = RNES.item("2", key: "b")
        none.accessControl = AccessControlDescription(flags: [], raw: "None")
        let controlled = try RNES.run([keychainDump([guarded]), keychainDump([none], path: "b.json")], RNES.app)
        #expect(RNES.reason(controlled[0].verdict)?.contains("an access control (accc)") == true)
        #expect(controlled[1].verdict == .migrate, "objection's \"None\" is no access control")
        let excluded = try RNES.run(
            [keychainDump([RNES.item("1")])], ImportOptions(bundleID: "b", excludeServices: [""]))
        #expect(RNES.reason(excluded[0].verdict)?.contains("excluded") == true)
    }

    @Test("react-native-keychain and expo-secure-store leave empty-service items to it, and it leaves theirs")
    func claimedOnce() throws {
        let dump = keychainDump([
            RNES.item("1", key: "a"),
            RNES.item("2", key: "b", service: nil),
            RNES.item("3", key: "alice", service: .string("com.example.app")),
            KeychainRecord(
                location: "4", itemClass: "genp", service: .string(""), account: .data(Data("k".utf8)),
                generic: .data(Data("k".utf8)), value: .data(Data("v".utf8)), protection: "ak"),
            KeychainRecord(
                location: "5", itemClass: "genp", service: .string("app"), account: .data(Data("k".utf8)),
                generic: .data(Data("k".utf8)), value: .data(Data("v".utf8)), protection: "ak"),
        ])
        let rnes = Set(try RNES.run([dump], RNES.app).map(\.origin.location))
        let rnk = Set(
            try ReactNativeKeychainImporter().importItems(from: [dump], options: RNES.app).map(\.origin.location))
        let expo = Set(
            try ExpoSecureStoreImporter().importItems(from: [dump], options: RNES.app).map(\.origin.location))
        #expect(rnes == ["1", "2"])
        #expect(rnk == ["3"])
        #expect(expo == ["4", "5"])
    }

    @Test("the sample's plist and objection exports give the same targets, all migrated")
    func exports() throws {
        let root = RNES.samples + "/react-native-encrypted-storage/ios/"
        var targets: [[TargetItem?]] = []
        for file in ["keychain.plist", "objection-dump.json"] {
            let items = try RNES.run([try DumpReader.read(path: root + file)])
            #expect(items.count == 3 && items.allSatisfy { $0.verdict == .migrate }, "\(file): \(items)")
            targets.append(items.map(\.target))
        }
        #expect(targets[0] == targets[1])
        #expect(targets[0].map { $0?.service } == Array(repeating: "com.example.rnesapp", count: 3))
    }
}
