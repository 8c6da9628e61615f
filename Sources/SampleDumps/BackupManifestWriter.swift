import ApexNettle
import Foundation

/// Writes an encrypted backup's `Manifest.plist` and encrypts its `Manifest.db` as a phone does
/// (`ios-encrypted-backups.md` §1.2, §1.5): `IsEncrypted`, the keybag, and `ManifestKey` (the class, little-endian,
/// then the database's key wrapped under that class's key); the database under AES-256-CBC with a zero IV.
public enum BackupManifestWriter {
    /// The manifest's bytes (a binary plist) and the encrypted database, for `keybag` and its `classKeys`
    /// (``BackupKeybagWriter/write()``); `database` is padded with zeros to a whole number of blocks. `apps` are
    /// the bundle IDs of `Applications`.
    public static func write(
        keybag: [UInt8], classKeys: [UInt32: [UInt8]], database: [UInt8], apps: [String] = [],
        manifestClass: UInt32 = 3, encrypted: Bool = true, seed: UInt64 = 2
    ) -> (plist: Data, database: [UInt8]) {
        var random = SampleRandom(seed: seed)
        let key = Array(random.bytes(32))
        var padded = database
        padded += [UInt8](repeating: 0, count: (Nettle.blockSize - padded.count % Nettle.blockSize) % Nettle.blockSize)
        var fields: [(String, PlistValue)] = [
            ("IsEncrypted", .boolean(encrypted)), ("BackupKeyBag", .data(Data(keybag))), ("Version", .string("10.0")),
        ]
        if !apps.isEmpty {
            fields.append(
                (
                    "Applications",
                    .dictionary(
                        apps.map { app in
                            (
                                app,
                                .dictionary([
                                    ("CFBundleIdentifier", .string(app)), ("CFBundleVersion", .string("1")),
                                    ("ContainerContentClass", .string("Data/Application")),
                                ])
                            )
                        })
                ))
        }
        fields.append(("Lockdown", .dictionary([("ProductVersion", .string("17.5.1"))])))
        guard encrypted, let classKey = classKeys[manifestClass] else {
            return (BinaryPlistWriter.write(.dictionary(fields)), padded)
        }
        let wrapped = Nettle.aes256KeyWrap(kek: classKey, key: key)
        fields.append(("ManifestKey", .data(Data(BackupKeybagWriter.le32(manifestClass) + wrapped))))
        let sealed = Nettle.aes256CBCEncrypt(key: key, iv: [UInt8](repeating: 0, count: 16), data: padded)
        return (BinaryPlistWriter.write(.dictionary(fields)), sealed)
    }
}
