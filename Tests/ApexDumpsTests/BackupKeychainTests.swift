import ApexDumps
import Foundation
import SampleDumps
import Testing

/// Issue 32: a backup's keychain file, opened item by item into records (`ios-encrypted-backups.md` §1.6–1.8):
/// the items of the classes the password opens become records as a keychain plist's do; the ThisDeviceOnly ones
/// are counted by class; a damaged item spoils only itself.
@Suite("Encrypted backups: the keychain file's items")
struct BackupKeychainTests {
    static let keybag = BackupKeybagWriter(password: "sample-backup-password").write()
    static var openKeys: [UInt32: [UInt8]] { keybag.classKeys.filter { $0.key <= 8 } }

    static let items = [
        BackupKeychainWriter.Item(service: "auth", account: "user@example.com", value: Array("backup-secret-1".utf8)),
        BackupKeychainWriter.Item(
            service: "app:no-auth", account: "token", value: Array("backup-secret-2".utf8), protectionClass: 6),
        BackupKeychainWriter.Item(
            service: "pin", account: "u", value: Array("backup-secret-3".utf8), protectionClass: 9),
        BackupKeychainWriter.Item(
            itemClass: "inet", service: "https://example.com", account: "u", value: Array("backup-secret-4".utf8)),
        BackupKeychainWriter.Item(service: "x", account: "y", value: [1], protectionClass: 11),
    ]

    @Test("the items the password opens are records with their attributes and secret; ThisDeviceOnly ones are counted")
    func opens() throws {
        let file = BackupKeychainWriter.write(Self.items, classKeys: Self.keybag.classKeys)
        let keychain = try BackupKeychain(file: Array(file), classKeys: Self.openKeys, path: "backup/")
        #expect(keychain.records.map(\.location) == ["genp item 1", "genp item 2", "inet item 1"])
        #expect(keychain.records.map(\.itemClass) == ["genp", "genp", "inet"])
        #expect(keychain.records[0].service?.text == "auth" && keychain.records[0].account?.text == "user@example.com")
        #expect(keychain.records[0].value == .data(Data("backup-secret-1".utf8)))
        #expect(keychain.records[1].protection == "ak" && keychain.records[0].protection == "ck")
        #expect(keychain.records[0].accessGroup == "ABCDE12345.com.example.app")
        #expect(keychain.records[2].server == "https://example.com")
        #expect(keychain.sealedByClass == [9: 1, 11: 1])
        #expect(keychain.damaged.isEmpty)
    }

    @Test("a damaged item is reported by its place and the others are read")
    func damagedItem() throws {
        let file = try Self.changingFirstItem(BackupKeychainWriter.write(Self.items, classKeys: Self.keybag.classKeys))
        let keychain = try BackupKeychain(file: Array(file), classKeys: Self.openKeys, path: "backup/")
        #expect(keychain.damaged.map(\.location) == ["genp item 1"], "\(keychain.damaged)")
        #expect(keychain.records.map(\.location) == ["genp item 2", "inet item 1"])
    }

    /// `file` (a keychain file) with one byte of its first `genp` item's ciphertext changed, its length kept.
    static func changingFirstItem(_ file: Data) throws -> Data {
        let root = try PropertyListSerialization.propertyList(from: file, format: nil) as? [String: Any]
        let first = (root?["genp"] as? [[String: Any]])?.first
        let blob = try #require(first?["v_Data"] as? Data)
        let found = try #require(file.firstRange(of: blob))
        var changed = file
        // Past the 12-byte header and the 40-byte wrapped key: inside the ciphertext.
        changed[found.lowerBound + 60] ^= 0x5A
        return changed
    }

    @Test("a keychain file that is not a property list is a clear error naming the backup")
    func notAPlist() {
        #expect(throws: DumpError.self) {
            try BackupKeychain(file: Array("nope".utf8), classKeys: Self.openKeys, path: "backup/")
        }
    }

    @Test("an item's gena (expo-secure-store's key) is the record's generic attribute; without it there is none")
    func generic() throws {
        let items = [
            BackupKeychainWriter.Item(
                service: "app:no-auth", account: "key-1", value: Array("backup-secret-5".utf8),
                generic: Array("key-1".utf8)),
            BackupKeychainWriter.Item(service: "service-1", account: "user-1", value: Array("backup-secret-6".utf8)),
        ]
        let file = BackupKeychainWriter.write(items, classKeys: Self.keybag.classKeys)
        let keychain = try BackupKeychain(file: Array(file), classKeys: Self.openKeys, path: "backup/")
        #expect(keychain.records.map { $0.generic?.bytes } == [Data("key-1".utf8), nil])
    }
}
