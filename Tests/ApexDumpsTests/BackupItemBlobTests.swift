import ApexDumps
import Foundation
import Testing

/// Issue 32, a backup's keychain items (`ios-encrypted-backups.md` §1.7): version-3 blobs, read from a real
/// iTunes backup's keychain file and sealed by this project's code from a known key.
@Suite("Encrypted backups: the keychain items")
struct BackupItemBlobTests {
    static let classKey = Array(UInt8(1)...32)
    static let itemKey = Array(UInt8(101)...132)
    static let plaintext = Array("0\u{3}\u{C}\u{1}x".utf8) + [UInt8](repeating: 0x42, count: 40)

    @Test("a real iOS 7 backup's items are version 3, class 11 (ThisDeviceOnly): read, and not openable off the phone")
    func realBackup() throws {
        let data = try IOSFixtures.data("real-world", "itunes-backup-keychain-backup-OTAPKI.plist")
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        var blobs: [BackupItemBlob] = []
        for itemClass in ["genp", "inet", "cert", "keys"] {
            for item in plist[itemClass] as? [[String: Any]] ?? [] {
                let bytes = try #require(item["v_Data"] as? Data, "\(itemClass) without v_Data")
                blobs.append(try BackupItemBlob(Array(bytes)))
            }
        }
        #expect(blobs.count > 10)
        #expect(blobs.allSatisfy { $0.protectionClass == 11 && $0.wrappedKey.count == 40 })
        #expect(throws: BackupItemBlob.Failure.classNotOpen(11)) {
            try blobs[0].open(classKeys: [6: Self.classKey, 7: Self.classKey, 8: Self.classKey])
        }
        // Read back as they are, byte for byte.
        let first = try #require((plist["genp"] as? [[String: Any]])?.first?["v_Data"] as? Data)
        #expect(try BackupItemBlob(Array(first)).bytes == Array(first))
    }

    @Test("an item sealed from a known key opens to its DER, and round-trips through its bytes")
    func sealsAndOpens() throws {
        let blob = BackupItemBlob.seal(
            Self.plaintext, protectionClass: 7, classKey: Self.classKey, itemKey: Self.itemKey)
        let read = try BackupItemBlob(blob.bytes)
        #expect(read == blob)
        #expect(Array(blob.bytes.prefix(12)) == [3, 0, 0, 0, 7, 0, 0, 0, 40, 0, 0, 0])
        #expect(try read.open(classKeys: [7: Self.classKey]) == Self.plaintext)
    }

    @Test("a changed ciphertext or a wrong class key is damaged; a short or other-version blob is malformed")
    func damaged() throws {
        let bytes = BackupItemBlob.seal(
            Self.plaintext, protectionClass: 6, classKey: Self.classKey, itemKey: Self.itemKey
        ).bytes
        var changed = bytes
        changed[60] ^= 1
        #expect(throws: BackupItemBlob.Failure.damaged("the item's tag does not match: its bytes were changed")) {
            try BackupItemBlob(changed).open(classKeys: [6: Self.classKey])
        }
        #expect(throws: BackupItemBlob.Failure.damaged("the item's key does not unwrap under its class key")) {
            try BackupItemBlob(bytes).open(classKeys: [6: Self.itemKey])
        }
        #expect(throws: BackupItemBlob.Failure.self) { try BackupItemBlob(Array(bytes.prefix(40))) }
        var version = bytes
        version[0] = 2
        #expect(throws: BackupItemBlob.Failure.malformed("version 2, not 3 (a backup holds version-3 items only)")) {
            try BackupItemBlob(version)
        }
    }

    @Test("a blob cut in its header, its wrapped key or its tag is malformed with its length; a whole one is read")
    func lengths() throws {
        let bytes = BackupItemBlob.seal(
            Self.plaintext, protectionClass: 6, classKey: Self.classKey, itemKey: Self.itemKey
        ).bytes
        #expect(throws: BackupItemBlob.Failure.malformed("11 bytes, shorter than the 12-byte header")) {
            try BackupItemBlob(Array(bytes.prefix(11)))
        }
        var shortKey = bytes
        shortKey[8] = 20
        #expect(throws: BackupItemBlob.Failure.malformed("a wrapped key of 20 bytes")) { try BackupItemBlob(shortKey) }
        // The header, the 40-byte wrapped key and the tag are 68 bytes: those alone are read, one less, or a cut
        // key, is too short.
        let least = Array(bytes.prefix(12 + 40)) + Array(bytes.suffix(16))
        let read = try BackupItemBlob(least)
        #expect(read.ciphertext.isEmpty && read.tag == Array(bytes.suffix(16)) && read.protectionClass == 6)
        for cut in [40, 67] {
            #expect(
                throws: BackupItemBlob.Failure.malformed(
                    "\(cut) bytes, too short for its 40-byte wrapped key and the tag")
            ) { try BackupItemBlob(Array(least.prefix(cut))) }
        }
    }
}
