import ApexDumps
import ApexKeychain
import ApexMigration
import ApexTestSupport
import ExpoSecureStoreImporter
import Foundation
import Testing

/// Builders of expo-secure-store dumps and helpers for the expo tests.
enum Expo {
    /// The team-prefixed default access group of the made-up app.
    static let group = "ABCDE12345.com.example.app"
    /// Options naming the made-up app, whose default access group is ``group``.
    static let app = ImportOptions(bundleID: "com.example.app")

    struct FixtureMissing: Error { let name: String }

    /// The bytes of a file under `Fixtures/`.
    static func fixture(_ name: String) throws -> Data {
        guard let folder = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            throw FixtureMissing(name: name)
        }
        return try Data(contentsOf: folder.appendingPathComponent(name))
    }

    /// A SharedPreferences fixture, read by the real reader and handed over under `path`.
    static func prefs(
        _ fixture: String, as path: String = "/data/data/com.example.app/shared_prefs/SecureStore.xml"
    )
        throws -> Dump
    {
        let entries = try SharedPreferencesReader.read(Self.fixture(fixture), path: path)
        return Dump(path: path, format: .sharedPreferences, content: .preferences(entries))
    }

    /// An iOS plist fixture, read by the real reader.
    static func iosPlist(_ fixture: String, as path: String = "keychain-dump.plist") throws -> Dump {
        Dump(
            path: path, format: .iosPlist,
            content: .keychain(try IOSPlistReader.read(Self.fixture(fixture), path: path)))
    }

    /// A SharedPreferences dump built from entries.
    static func prefs(
        _ entries: [(String, String)], path: String = "/data/data/com.example.app/shared_prefs/SecureStore.xml"
    )
        -> Dump
    {
        Dump(
            path: path, format: .sharedPreferences,
            content: .preferences(entries.map { PreferenceEntry(name: $0.0, value: .string($0.1)) }))
    }

    /// An iOS dump of `records`.
    static func keychain(_ records: [KeychainRecord], path: String = "keychain.plist") -> Dump {
        keychainDump(records, path: path)
    }

    /// An item as expo-secure-store writes it: the key's UTF-8 as data in account and generic, the value's UTF-8.
    static func item(
        _ location: String, service: String = "app:no-auth", key: String = "token", value: String? = "v",
        pdmn: String? = "ak", flags: AccessControlFlags? = nil, group: String? = Expo.group, sync: Bool = false
    ) -> KeychainRecord {
        KeychainRecord(
            location: location, itemClass: "genp", service: .string(service), account: .data(Data(key.utf8)),
            generic: .data(Data(key.utf8)), value: value.map { .data(Data($0.utf8)) } ?? .absent, protection: pdmn,
            accessGroup: group, synchronizable: sync,
            accessControl: flags.map { accessControl($0, pdmn: pdmn) })
    }

    /// An access control as a dump describes it.
    static func accessControl(_ flags: AccessControlFlags, pdmn: String?) -> AccessControlDescription {
        AccessControlDescription(flags: flags, protection: pdmn, raw: "flags 0x\(String(flags.rawValue, radix: 16))")
    }

    /// expo's Android entry JSON as org.json writes it (compact, `/` as `\/`); `fields` in order, values already
    /// JSON.
    static func json(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A 12.5.0+ entry's JSON.
    static func newEntry(
        alias: String = "key_v1", auth: String = "false", ct: String = "AAECAwQFBgcICQoLDA0ODxAREhM="
    )
        -> String
    {
        json([
            ("ct", "\"\(ct)\""), ("iv", "\"AAECAwQFBgcICQoL\""), ("tlen", "128"), ("scheme", "\"aes\""),
            ("usesKeystoreSuffix", "true"), ("keystoreAlias", "\"\(alias)\""), ("requireAuthentication", auth),
        ])
    }

    /// Runs the importer.
    static func run(_ dumps: [Dump], _ options: ImportOptions = ImportOptions()) throws -> [SourceItem] {
        try ExpoSecureStoreImporter().importItems(from: dumps, options: options)
    }

    /// The item whose source account is `key` under the service `service` as found.
    static func find(_ items: [SourceItem], key: String, service: String?) -> SourceItem? {
        items.first { $0.source.account == key && $0.source.service == service }
    }

    /// The verdict's reason, or nil for `migrate`.
    static func reason(_ verdict: SourceVerdict) -> String? {
        verdict.reason
    }

    /// Every text a report may show of an item: its description, its value's, its verdict's reason, its notes.
    static func texts(_ item: SourceItem) -> [String] {
        [
            item.description, String(describing: item.value), String(reflecting: item.value),
            String(describing: item.verdict),
        ]
            + [reason(item.verdict)].compactMap { $0 } + item.notes
    }

    /// Whether some note holds `fragment`.
    static func notes(_ item: SourceItem?, contain fragment: String) -> Bool {
        item?.notes.contains { $0.contains(fragment) } ?? false
    }
}
