import Foundation

/// Writes a whole encrypted backup folder from a known password (`ios-encrypted-backups.md` §1.1): `Manifest.plist`
/// with the keybag and `ManifestKey`, the encrypted `Manifest.db` listing the keychain's file, and that file, at
/// `51/51a4…`, holding `items`. Small round counts keep tests fast unless asked otherwise.
public enum BackupFolderWriter {
    /// Writes the backup into `folder` (created if needed); `apps` are the bundle IDs `Manifest.plist` lists.
    public static func write(
        to folder: URL, password: String, items: [BackupKeychainWriter.Item], apps: [String] = [],
        iterations: UInt32 = 10, passwordIterations: UInt32? = 100, encrypted: Bool = true
    ) throws {
        try write(
            to: folder, password: password, apps: apps, iterations: iterations,
            passwordIterations: passwordIterations, encrypted: encrypted
        ) { BackupKeychainWriter.write(items, classKeys: $0) }
    }

    /// Writes the backup into `folder` with the keychain file `keychain` makes from the class keys (a test's own
    /// bytes: a damaged item, say).
    public static func write(
        to folder: URL, password: String, apps: [String] = [], iterations: UInt32 = 10,
        passwordIterations: UInt32? = 100, encrypted: Bool = true, keychain: ([UInt32: [UInt8]]) throws -> Data
    ) throws {
        let files = try files(
            password: password, apps: apps, iterations: iterations, passwordIterations: passwordIterations,
            encrypted: encrypted, keychain: keychain)
        for (path, data) in files {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
    }

    /// The backup's files, by path inside its folder: `Manifest.plist`, `Manifest.db` and the keychain's file,
    /// whose plaintext `keychain` makes from the class keys.
    static func files(
        password: String, apps: [String], iterations: UInt32, passwordIterations: UInt32?, encrypted: Bool,
        keychain: ([UInt32: [UInt8]]) throws -> Data
    ) throws -> [(path: String, data: Data)] {
        let keybag = BackupKeybagWriter(
            password: password, iterations: iterations, passwordIterations: passwordIterations
        ).write()
        let file = BackupFilesWriter.encrypt(Array(try keychain(keybag.classKeys)), classKey: keybag.classKeys[3]!)
        let manifest = BackupManifestWriter.write(
            keybag: keybag.keybag, classKeys: keybag.classKeys, database: try BackupFilesWriter.database([file]),
            apps: apps, encrypted: encrypted)
        return [
            ("Manifest.plist", manifest.plist), ("Manifest.db", Data(manifest.database)),
            ("\(file.fileID.prefix(2))/\(file.fileID)", Data(file.encrypted)),
        ]
    }
}
