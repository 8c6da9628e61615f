import ApexDumps
import ApexTestSupport
import Foundation
import SampleDumps
import Testing

/// Issue 32: a whole encrypted backup folder, read with its password: the keychain's items as records, nothing
/// decrypted left on disk, and each documented error naming its file.
@Suite("Encrypted backups: a backup's folder")
struct EncryptedBackupTests {
    static let password = "sample-backup-password"
    static let canary = "backup-canary-7d1c"
    static let items = [
        BackupKeychainWriter.Item(service: "auth", account: "someone", value: Array(canary.utf8)),
        BackupKeychainWriter.Item(service: "pin", account: "u", value: [7], protectionClass: 9),
    ]

    @Test("read with the password: the items as records, the ThisDeviceOnly ones counted, nothing new on disk")
    func reads() throws {
        let scratch = try ScratchFolder()
        let folder = scratch.url.appendingPathComponent("backup")
        try BackupFolderWriter.write(to: folder, password: Self.password, items: Self.items)
        #expect(EncryptedBackup.isBackup(folder))
        let before = try FileManager.default.subpathsOfDirectory(atPath: scratch.url.path).sorted()
        let keychain = try EncryptedBackup.keychain(in: folder, password: Array(Self.password.utf8))
        #expect(keychain.records.map { $0.service?.text } == ["auth"])
        #expect(keychain.records.first?.value == .data(Data(Self.canary.utf8)))
        #expect(keychain.sealedByClass == [9: 1])
        // Nothing decrypted was written: the folder holds what it held, and no file anywhere in it has the secret.
        let after = try FileManager.default.subpathsOfDirectory(atPath: scratch.url.path).sorted()
        #expect(before == after)
        for path in after {
            let data = (try? Data(contentsOf: scratch.url.appendingPathComponent(path))) ?? Data()
            #expect(data.range(of: Data(Self.canary.utf8)) == nil, "\(path) holds the secret in plaintext")
        }
    }

    @Test("a wrong password, an unencrypted backup, a missing keychain file, a cut Manifest.db: each named")
    func errors() throws {
        let scratch = try ScratchFolder()
        let folder = scratch.url.appendingPathComponent("backup")
        try BackupFolderWriter.write(to: folder, password: Self.password, items: Self.items)
        #expect(throws: EncryptedBackup.Failure.wrongPassword) {
            try EncryptedBackup.keychain(in: folder, password: Array("wrong".utf8))
        }
        let plain = scratch.url.appendingPathComponent("plain")
        try BackupFolderWriter.write(to: plain, password: "", items: Self.items, encrypted: false)
        #expect(
            throws: EncryptedBackup.Failure.notEncrypted(path: plain.appendingPathComponent("Manifest.plist").path)
        ) { try EncryptedBackup.keychain(in: plain, password: []) }
        let database = folder.appendingPathComponent("Manifest.db")
        let bytes = try Data(contentsOf: database)
        try bytes.prefix(bytes.count - 5).write(to: database)
        #expect(
            throws: EncryptedBackup.Failure.damaged(
                path: database.path, "\(bytes.count - 5) bytes, not a whole number of AES blocks")
        ) { try EncryptedBackup.keychain(in: folder, password: Array(Self.password.utf8)) }
        try bytes.write(to: database)
        let keychainFile = folder.appendingPathComponent("51/" + BackupFilesWriter.keychainFileID)
        try FileManager.default.removeItem(at: keychainFile)
        #expect(
            throws: EncryptedBackup.Failure.damaged(
                path: keychainFile.path, "the keychain's file is missing from the backup")
        ) { try EncryptedBackup.keychain(in: folder, password: Array(Self.password.utf8)) }
    }

    @Test("a cut keychain file, cut by a block or inside one, and a cut Manifest.plist: each named, with what is wrong")
    func truncated() throws {
        let scratch = try ScratchFolder()
        let folder = scratch.url.appendingPathComponent("backup")
        try BackupFolderWriter.write(to: folder, password: Self.password, items: Self.items)
        let keychainFile = folder.appendingPathComponent("51/" + BackupFilesWriter.keychainFileID)
        let bytes = try Data(contentsOf: keychainFile)
        for cut in [16, 7] {
            try bytes.prefix(bytes.count - cut).write(to: keychainFile)
            #expect {
                try EncryptedBackup.keychain(in: folder, password: Array(Self.password.utf8))
            } throws: { error in
                guard case .damaged(let path, let why)? = error as? EncryptedBackup.Failure else { return false }
                return path == keychainFile.path
                    && (why.contains("damaged or cut") || why.contains("not a whole number of AES blocks"))
            }
        }
        try bytes.write(to: keychainFile)
        let manifest = folder.appendingPathComponent("Manifest.plist")
        let plist = try Data(contentsOf: manifest)
        try plist.prefix(plist.count / 2).write(to: manifest)
        #expect {
            try EncryptedBackup(folder: folder)
        } throws: { error in
            guard case .damaged(let path, let why)? = error as? EncryptedBackup.Failure else { return false }
            return path == manifest.path && why.hasPrefix("not a property list")
        }
    }
}
