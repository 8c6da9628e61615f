import ApexDumps
import ApexMigration
import ExpoSecureStoreImporter
import Foundation
import ReactNativeEncryptedStorageImporter
import ReactNativeKeychainImporter
import ReactNativeSensitiveInfoImporter
import Testing

/// An item whose `pdmn`, `sync` or `accc` the dump holds but can't be read: its protection is unknown, so each
/// importer blocks it, naming the attribute, and the dump's other items go on (issue 28).
@Suite struct UnreadableProtectionTests {
    /// The attributes that make each item's protection unknown, by the key of the item.
    static let faults: [(key: String, xml: String, attribute: String)] = [
        ("k-pdmn", "<key>pdmn</key><integer>7</integer>", "pdmn"),
        ("k-sync", "<key>pdmn</key><string>ak</string><key>sync</key><integer>2</integer>", "sync"),
        ("k-accc", "<key>pdmn</key><string>ak</string><key>accc</key><data>AAEC</data>", "accc"),
        ("k-accc-text", "<key>pdmn</key><string>ak</string><key>accc</key><string>not one</string>", "accc"),
    ]

    /// A plist of one good item, then one for each fault; `identity` writes an item's service, account and generic
    /// attribute for its key.
    static func dump(
        _ faults: [(key: String, xml: String, attribute: String)] = faults, _ identity: (String) -> String
    ) throws -> Dump {
        var xml = "<plist version=\"1.0\"><array>"
        xml += "<dict><key>class</key><string>genp</string>\(identity("k-good"))<key>pdmn</key><string>ak</string>"
        xml += "<key>sync</key><integer>0</integer><key>v_Data</key><data>dW5yZWFkYWJsZS12YWx1ZQ==</data></dict>"
        for fault in faults {
            xml += "<dict><key>class</key><string>genp</string>\(identity(fault.key))\(fault.xml)"
            xml += "<key>v_Data</key><data>dW5yZWFkYWJsZS12YWx1ZQ==</data></dict>"
        }
        xml += "</array></plist>"
        let records = try IOSPlistReader.read(Data(xml.utf8), path: "keychain.plist")
        return Dump(path: "keychain.plist", format: .iosPlist, content: .keychain(records))
    }

    static func data(_ text: String) -> String { "<data>\(Data(text.utf8).base64EncodedString())</data>" }

    /// Checks that the good item migrates and every other is blocked for its attribute.
    static func check(
        _ items: [SourceItem], _ faults: [(key: String, xml: String, attribute: String)] = faults,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(items.count == 1 + faults.count, sourceLocation: sourceLocation)
        let good = items.first { $0.source.account == "k-good" }
        #expect(good?.verdict == .migrate, "\(String(describing: good?.verdict))", sourceLocation: sourceLocation)
        for fault in faults {
            let item = items.first { $0.source.account == fault.key }
            guard case .blocked(let reason) = item?.verdict else {
                Issue.record("\(fault.key): \(String(describing: item?.verdict))", sourceLocation: sourceLocation)
                continue
            }
            #expect(reason.contains("protection is unknown"), "\(reason)", sourceLocation: sourceLocation)
            #expect(reason.contains(fault.attribute), "\(reason)", sourceLocation: sourceLocation)
        }
        expectNoSecrets(items, ["unreadable-value"], sourceLocation: sourceLocation)
    }

    @Test("react-native-keychain")
    func reactNativeKeychain() throws {
        let dump = try Self.dump {
            "<key>svce</key><string>com.example.app</string><key>acct</key><string>\($0)</string>"
        }
        let items = try ReactNativeKeychainImporter().importItems(
            from: [dump], options: ImportOptions(bundleID: "com.example.app"))
        Self.check(items)
    }

    @Test("expo-secure-store")
    func expoSecureStore() throws {
        let dump = try Self.dump {
            "<key>svce</key><string>app:no-auth</string><key>acct</key>\(Self.data($0))<key>gena</key>\(Self.data($0))"
        }
        let items = try ExpoSecureStoreImporter().importItems(
            from: [dump], options: ImportOptions(bundleID: "com.example.app"))
        Self.check(items)
    }

    @Test("react-native-sensitive-info")
    func reactNativeSensitiveInfo() throws {
        let dump = try Self.dump { "<key>svce</key><string>app</string><key>acct</key><string>\($0)</string>" }
        let items = try ReactNativeSensitiveInfoImporter().importItems(
            from: [dump], options: ImportOptions(bundleID: "com.example.app"))
        Self.check(items)
    }

    /// react-native-encrypted-storage never sets `accc` (an item with one is another SDK's, skipped), so only
    /// `pdmn` and `sync` apply.
    @Test("react-native-encrypted-storage")
    func reactNativeEncryptedStorage() throws {
        let faults = Self.faults.filter { $0.attribute != "accc" }
        let dump = try Self.dump(faults) { "<key>acct</key><string>\($0)</string>" }
        let items = try ReactNativeEncryptedStorageImporter().importItems(
            from: [dump], options: ImportOptions(bundleID: "com.example.app"))
        Self.check(items, faults)
    }
}
