import ApexDumps
import Foundation
import SampleDumps
import Testing

/// Issue 32: a backup's `Manifest.plist` and its `Manifest.db`, decrypted in memory (`ios-encrypted-backups.md`
/// §1.2, §1.5), from this project's writer and a known password.
@Suite("Encrypted backups: the manifest")
struct BackupManifestTests {
    static let keybag = BackupKeybagWriter(password: "sample-backup-password").write()
    static let database = Array("SQLite format 3\u{0}".utf8) + [UInt8](repeating: 0x11, count: 4096 - 16)

    static func classKeys(_ manifest: BackupManifest, _ password: String) throws -> [UInt32: [UInt8]] {
        try manifest.keybag.classKeys(passwordKey: manifest.keybag.passwordKey(Array(password.utf8)))
    }

    @Test("the keybag and ManifestKey are read, and Manifest.db decrypts to its SQLite bytes")
    func opens() throws {
        let written = BackupManifestWriter.write(
            keybag: Self.keybag.keybag, classKeys: Self.keybag.classKeys, database: Self.database)
        #expect(written.database != Self.database, "encrypted")
        let manifest = try BackupManifest(plist: written.plist)
        #expect(manifest.manifestKey?.protectionClass == 3 && manifest.manifestKey?.wrapped.count == 40)
        let keys = try Self.classKeys(manifest, "sample-backup-password")
        #expect(try manifest.database(written.database, classKeys: keys) == Self.database)
    }

    @Test("an unencrypted backup is refused with what to do; a wrong password is the keybag's")
    func refusals() throws {
        let plain = BackupManifestWriter.write(
            keybag: Self.keybag.keybag, classKeys: Self.keybag.classKeys, database: Self.database, encrypted: false)
        #expect(throws: BackupManifest.Failure.notEncrypted) { try BackupManifest(plist: plain.plist) }
        let written = BackupManifestWriter.write(
            keybag: Self.keybag.keybag, classKeys: Self.keybag.classKeys, database: Self.database)
        let manifest = try BackupManifest(plist: written.plist)
        #expect(throws: BackupKeybag.Failure.wrongPassword) { try Self.classKeys(manifest, "wrong") }
    }

    @Test("a Manifest.db that does not decrypt, or is cut, is named so; a manifest without a keybag is malformed")
    func damaged() throws {
        let written = BackupManifestWriter.write(
            keybag: Self.keybag.keybag, classKeys: Self.keybag.classKeys, database: Self.database)
        let manifest = try BackupManifest(plist: written.plist)
        let keys = try Self.classKeys(manifest, "sample-backup-password")
        var changed = written.database
        changed[3] ^= 0xFF
        #expect(throws: BackupManifest.Failure.self) { try manifest.database(changed, classKeys: keys) }
        #expect(throws: BackupManifest.Failure.database("4095 bytes, not a whole number of AES blocks")) {
            try manifest.database(Array(written.database.dropLast()), classKeys: keys)
        }
        #expect(
            throws: BackupManifest.Failure.database("its key is wrapped by class 3, which the password does not open")
        ) {
            try manifest.database(written.database, classKeys: [:])
        }
        let info = Data(#"<plist version="1.0"><dict><key>IsEncrypted</key><true/></dict></plist>"#.utf8)
        #expect(throws: BackupManifest.Failure.malformed("no 'BackupKeyBag' data: an encrypted backup has one")) {
            try BackupManifest(plist: info)
        }
    }
}
