import ApexDumps
import Foundation
import SampleDumps
import Testing

/// A backup item whose tag matches but whose DER is damaged: the DER parser it shares with the access-control
/// decoder names no caller, so the report says what is wrong with the item's DER and never speaks of an access
/// control the item may not have.
@Suite("Encrypted backups: an item's damaged DER")
struct BackupDERMessageTests {
    static let keybag = BackupKeybagWriter(password: "sample-backup-password").write()
    static let classKey = keybag.classKeys[7]!

    /// The DER an item of the writer's holds, opened from its sealed blob.
    static func itemDER() throws -> [UInt8] {
        let item = BackupKeychainWriter.Item(service: "auth", account: "u", value: Array("backup-secret-9".utf8))
        let file = BackupKeychainWriter.write([item], classKeys: keybag.classKeys)
        let plist = try #require(try PropertyListSerialization.propertyList(from: file, format: nil) as? [String: Any])
        let items = try #require(plist["genp"] as? [[String: Any]])
        let blob = try #require(items.first?["v_Data"] as? Data)
        return try BackupItemBlob(Array(blob)).open(classKeys: [7: classKey])
    }

    /// A keychain file of `ders`, each sealed as a backup seals an item under class 7 (`ck`).
    static func file(_ ders: [[UInt8]]) throws -> [UInt8] {
        let items = ders.enumerated().map { index, der in
            let blob = BackupItemBlob.seal(
                der, protectionClass: 7, classKey: classKey, itemKey: [UInt8](repeating: UInt8(index + 1), count: 32))
            return ["v_Data": Data(blob.bytes)]
        }
        return Array(try PropertyListSerialization.data(fromPropertyList: ["genp": items], format: .xml, options: 0))
    }

    @Test("an empty, cut or overlong DER is that item's damage, named as DER, not as an access control")
    func damagedDERIsNamedAsDER() throws {
        let der = try Self.itemDER()
        let file = try Self.file([der, [], Array(der.prefix(der.count / 2)), der + [0]])
        let keychain = try BackupKeychain(file: file, classKeys: [7: Self.classKey], path: "backup/")
        #expect(keychain.records.map(\.location) == ["genp item 1"])
        #expect(keychain.records.first?.value == .data(Data("backup-secret-9".utf8)))
        #expect(keychain.damaged.map(\.location) == ["genp item 2", "genp item 3", "genp item 4"])
        for (location, problem) in keychain.damaged {
            #expect(problem.contains("DER"), "\(location): \(problem)")
            #expect(!problem.lowercased().contains("access control"), "\(location): \(problem)")
            #expect(!problem.contains("backup-secret"), "\(location): \(problem)")
        }
        #expect(keychain.damaged.first?.problem.hasSuffix("the DER data is empty") == true)
    }
}
