import ApexDumps
import Foundation
import SampleDumps
import Testing

/// Issue 32: the keychain's file of a backup, found in the decrypted `Manifest.db` and decrypted with its own key
/// (`ios-encrypted-backups.md` §1.5), all in memory; from this project's writers and a known password.
@Suite("Encrypted backups: the keychain's file")
struct BackupFileTests {
    static let keybag = BackupKeybagWriter(password: "sample-backup-password").write()
    static let plaintext = Array(#"<plist version="1.0"><dict><key>genp</key><array/></dict></plist>"#.utf8)

    static func listed(
        _ files: [BackupFilesWriter.File], binaryArchives: Bool = true
    ) throws -> (BackupManifest, [UInt8], [UInt32: [UInt8]]) {
        let written = BackupManifestWriter.write(
            keybag: keybag.keybag, classKeys: keybag.classKeys,
            database: try BackupFilesWriter.database(files, binaryArchives: binaryArchives))
        let manifest = try BackupManifest(plist: written.plist)
        let keys = try manifest.keybag.classKeys(
            passwordKey: manifest.keybag.passwordKey(Array("sample-backup-password".utf8)))
        return (manifest, try manifest.database(written.database, classKeys: keys), keys)
    }

    @Test("the keychain's file is found by domain and path, in its folder, and decrypts to its bytes")
    func findsAndDecrypts() throws {
        let file = BackupFilesWriter.encrypt(Self.plaintext, classKey: Self.keybag.classKeys[3]!)
        let other = BackupFilesWriter.encrypt(
            Array("photos".utf8), fileID: String(repeating: "ab", count: 20), domain: "CameraRollDomain",
            relativePath: "Media/a.jpg", classKey: Self.keybag.classKeys[3]!)
        let (_, database, keys) = try Self.listed([other, file])
        let found = try #require(
            try BackupFile.find(
                domain: BackupFile.keychain.domain, relativePath: BackupFile.keychain.relativePath, in: database))
        #expect(found.fileID == BackupFilesWriter.keychainFileID)
        #expect(found.relativePaths.first == "51/" + BackupFilesWriter.keychainFileID)
        #expect(found.size == Self.plaintext.count && found.protectionClass == 3)
        #expect(try found.decrypt(file.encrypted, classKeys: keys) == Self.plaintext)
        #expect(try BackupFile.find(domain: "KeychainDomain", relativePath: "nothing", in: database) == nil)
    }

    @Test(
        "an MBFile archived as a binary plist (UID references, as on a phone) or as XML (CF$UID) reads the same",
        arguments: [true, false])
    func archiveForms(binary: Bool) throws {
        let file = BackupFilesWriter.encrypt(Self.plaintext, classKey: Self.keybag.classKeys[3]!)
        #expect(BackupFilesWriter.archive(file, binary: binary).starts(with: Array("bplist00".utf8)) == binary)
        let (_, database, keys) = try Self.listed([file], binaryArchives: binary)
        let found = try #require(
            try BackupFile.find(domain: "KeychainDomain", relativePath: "keychain-backup.plist", in: database))
        #expect(found.size == Self.plaintext.count && found.protectionClass == 3)
        #expect(try found.decrypt(file.encrypted, classKeys: keys) == Self.plaintext)
    }

    @Test("a file cut or changed, or whose class is not open, is named as such")
    func damaged() throws {
        let file = BackupFilesWriter.encrypt(Self.plaintext, classKey: Self.keybag.classKeys[3]!)
        let (_, database, keys) = try Self.listed([file])
        let found = try #require(
            try BackupFile.find(domain: "KeychainDomain", relativePath: "keychain-backup.plist", in: database))
        #expect(throws: BackupManifest.Failure.self) {
            try found.decrypt(Array(file.encrypted.dropLast(16)), classKeys: keys)
        }
        var changed = file.encrypted
        changed[changed.count - 1] ^= 0x5A
        #expect(throws: BackupManifest.Failure.self) { try found.decrypt(changed, classKeys: keys) }
        #expect(
            throws: BackupManifest.Failure.database(
                "file \(found.fileID)'s key is wrapped by class 3, which is not open")
        ) {
            try found.decrypt(file.encrypted, classKeys: [:])
        }
        #expect(throws: BackupManifest.Failure.self) {
            try BackupFile.find(
                domain: "KeychainDomain", relativePath: "keychain-backup.plist", in: Array("not sqlite".utf8))
        }
    }
}
