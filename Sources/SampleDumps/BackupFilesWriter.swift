import ApexNettle
import ApexSQLite
import Foundation

/// Writes what `Manifest.db` lists of a backup's files, and encrypts a file as a phone does
/// (`ios-encrypted-backups.md` §1.5): the `Files` table (fileID, domain, relativePath, flags, file), each `file`
/// an NSKeyedArchiver property list of an `MBFile` (a binary plist, as on a phone), and each file's
/// bytes padded with PKCS#7 and encrypted with AES-256-CBC and a zero IV under a key of its own.
public enum BackupFilesWriter {
    /// The keychain file's `fileID`: SHA-1 of `KeychainDomain-keychain-backup.plist`.
    public static let keychainFileID = "51a4616e576dd33cd2abadfea874eb8ff246bf0e"

    /// One file: where it is, and its encrypted bytes and wrapped key.
    public struct File: Sendable {
        /// The file's name in the folder, its domain and its path in the domain.
        public var fileID: String, domain: String, relativePath: String
        /// The plaintext's size.
        public var size: Int
        /// `MBFile.EncryptionKey`: the class, little-endian, then the file key wrapped under the class key.
        public var encryptionKey: [UInt8]
        /// The file's encrypted bytes.
        public var encrypted: [UInt8]
    }

    /// `plaintext` encrypted under a key of its own (from `seed`), that key wrapped under `classKey`.
    public static func encrypt(
        _ plaintext: [UInt8], fileID: String = keychainFileID, domain: String = "KeychainDomain",
        relativePath: String = "keychain-backup.plist", protectionClass: UInt32 = 3, classKey: [UInt8],
        seed: UInt64 = 3
    ) -> File {
        var random = SampleRandom(seed: seed)
        let key = Array(random.bytes(32))
        let pad = 16 - plaintext.count % 16
        let padded = plaintext + [UInt8](repeating: UInt8(pad), count: pad)
        return File(
            fileID: fileID, domain: domain, relativePath: relativePath, size: plaintext.count,
            encryptionKey: BackupKeybagWriter.le32(protectionClass) + Nettle.aes256KeyWrap(kek: classKey, key: key),
            encrypted: Nettle.aes256CBCEncrypt(key: key, iv: [UInt8](repeating: 0, count: 16), data: padded))
    }

    /// `file`'s `MBFile`, archived as NSKeyedArchiver writes it: `$top.root` refers to the MBFile dictionary, whose
    /// `EncryptionKey` refers to an `NSMutableData` holding the key. A binary plist with UID references, as a
    /// phone's Manifest.db holds them, or (`binary: false`) the XML form, its references `{CF$UID: n}`.
    public static func archive(_ file: File, binary: Bool = true) -> Data {
        func uid(_ index: Int) -> PlistValue { .uid(UInt64(index)) }
        let objects: [PlistValue] = [
            .string("$null"),
            .dictionary([
                ("$class", uid(4)), ("EncryptionKey", uid(2)), ("Mode", .integer(33188)),
                ("ProtectionClass", .integer(3)), ("RelativePath", uid(3)), ("Size", .integer(Int64(file.size))),
            ]),
            .dictionary([("$class", uid(5)), ("NS.data", .data(Data(file.encryptionKey)))]),
            .string(file.relativePath),
            .dictionary([
                ("$classname", .string("MBFile")), ("$classes", .array([.string("MBFile"), .string("NSObject")])),
            ]),
            .dictionary([
                ("$classname", .string("NSMutableData")),
                ("$classes", .array([.string("NSMutableData"), .string("NSData"), .string("NSObject")])),
            ]),
        ]
        let root = PlistValue.dictionary([
            ("$archiver", .string("NSKeyedArchiver")), ("$objects", .array(objects)),
            ("$top", .dictionary([("root", uid(1))])), ("$version", .integer(100000)),
        ])
        return binary ? BinaryPlistWriter.write(root) : XMLPlistWriter.write(root)
    }

    /// A `Manifest.db` listing `files`, as its bytes; each file's `MBFile` archived as ``archive(_:binary:)``.
    public static func database(_ files: [File], binaryArchives: Bool = true) throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "backup-samples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("Manifest.db").path
        let connection = try Connection(path: path, mode: [.readWrite, .create], extendedResultCodes: false)
        try connection.execute(
            "CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB)")
        try connection.execute("CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB)")
        for file in files {
            let insert = try connection.prepare("INSERT INTO Files VALUES (?1, ?2, ?3, 1, ?4)")
            try insert.bind(1, file.fileID)
            try insert.bind(2, file.domain)
            try insert.bind(3, file.relativePath)
            try insert.bind(4, archive(file, binary: binaryArchives))
            try insert.run()
        }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
