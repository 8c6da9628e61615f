import Foundation

/// Writes a whole encrypted backup folder from a known password (`ios-encrypted-backups.md` §1.1): `Manifest.plist`
/// with the keybag and `ManifestKey`, the encrypted `Manifest.db` listing the keychain's file, and that file, at
/// `51/51a4…`, holding `items`. Small round counts keep tests fast unless asked otherwise.
public enum BackupFolderWriter {
    /// Writes the backup into `folder` (created if needed).
    public static func write(
        to folder: URL, password: String, items: [BackupKeychainWriter.Item], iterations: UInt32 = 10,
        passwordIterations: UInt32? = 100, encrypted: Bool = true
    ) throws {
        let keybag = BackupKeybagWriter(
            password: password, iterations: iterations, passwordIterations: passwordIterations
        ).write()
        let keychain = BackupKeychainWriter.write(items, classKeys: keybag.classKeys)
        let file = BackupFilesWriter.encrypt(Array(keychain), classKey: keybag.classKeys[3]!)
        let manifest = BackupManifestWriter.write(
            keybag: keybag.keybag, classKeys: keybag.classKeys, database: try BackupFilesWriter.database([file]),
            encrypted: encrypted)
        let files = FileManager.default
        try files.createDirectory(at: folder, withIntermediateDirectories: true)
        try manifest.plist.write(to: folder.appendingPathComponent("Manifest.plist"))
        try Data(manifest.database).write(to: folder.appendingPathComponent("Manifest.db"))
        let place = folder.appendingPathComponent(String(file.fileID.prefix(2)))
        try files.createDirectory(at: place, withIntermediateDirectories: true)
        try Data(file.encrypted).write(to: place.appendingPathComponent(file.fileID))
    }
}
