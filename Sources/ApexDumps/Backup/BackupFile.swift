import ApexNettle
import ApexSQLite
import Foundation

/// A file of a backup as `Manifest.db` lists it (`ios-encrypted-backups.md` §1.5): its `fileID`, the place it
/// has in the folder, its size, and its key, wrapped under a class key (`MBFile.EncryptionKey`: a little-endian
/// class, then 40 bytes), read out of the row's NSKeyedArchiver `file` blob.
public struct BackupFile: Sendable, Equatable {
    /// The keychain's file: domain and relative path.
    public static let keychain = (domain: "KeychainDomain", relativePath: "keychain-backup.plist")

    /// `SHA-1(domain-relativePath)` in hex: the file's name in the folder.
    public var fileID: String
    /// The plaintext's size (`MBFile.Size`).
    public var size: Int
    /// The class whose key wraps the file's key.
    public var protectionClass: UInt32
    /// The file's key, wrapped.
    public var wrappedKey: [UInt8]

    /// Where the file is in the backup folder: `fileID[0:2]/fileID` since iOS 10, `fileID` before.
    public var relativePaths: [String] { [String(fileID.prefix(2)) + "/" + fileID, fileID] }

    /// The file of `domain` and `relativePath` in `database` (``BackupManifest/database(_:classKeys:)``'s bytes,
    /// read in memory); nil when it lists none.
    public static func find(
        domain: String, relativePath: String, in database: [UInt8]
    ) throws(BackupManifest.Failure) -> BackupFile? {
        let image = DatabaseImage(count: database.count)
        database.withUnsafeBytes { image.write($0, at: 0) }
        let row: (String, Data)?
        do {
            let connection = try Connection.readOnlyImage(image.bytes.baseAddress!, count: image.count, owner: image)
            try connection.execute("PRAGMA trusted_schema = OFF")
            let statement = try connection.prepare(
                "SELECT fileID, file FROM Files WHERE domain = ?1 AND relativePath = ?2 LIMIT 1")
            try statement.bind(1, domain)
            try statement.bind(2, relativePath)
            row = try statement.firstRow { ($0.string(0) ?? "", $0.data(1) ?? Data()) }
        } catch {
            throw .database("its Files table can't be read: \(error.message)")
        }
        guard let (fileID, archive) = row else { return nil }
        guard fileID.count == 40, fileID.allSatisfy(\.isHexDigit) else {
            throw .malformed("Manifest.db names the file \(relativePath) by '\(fileID)', not a 40-digit SHA-1")
        }
        return try Self(fileID: fileID, archive: archive, what: "\(domain)/\(relativePath)")
    }

    /// Reads an `MBFile` out of its NSKeyedArchiver property list (binary, or XML with `CF$UID` references).
    init(fileID: String, archive: Data, what: String) throws(BackupManifest.Failure) {
        func fail(_ problem: String) -> BackupManifest.Failure { .malformed("\(what)'s MBFile \(problem)") }
        guard case .dictionary(let root)? = try? PlistParser.parse(archive),
            case .array(let objects)? = root["$objects"], case .dictionary(let top)? = root["$top"]
        else { throw fail("is not a keyed archive") }
        func object(_ reference: PlistNode?) -> PlistNode? {
            let index: UInt64? =
                switch reference {
                case .uid(let uid)?: uid
                case .dictionary(let d)?:
                    if case .integer(let n)? = d["CF$UID"], n >= 0 { UInt64(n) } else { nil }
                default: nil
                }
            guard let index, index < objects.count else { return nil }
            return objects[Int(index)]
        }
        guard case .dictionary(let file)? = object(top["root"]) else { throw fail("has no root object") }
        let keyData: Data? =
            switch object(file["EncryptionKey"]) {
            case .data(let data)?: data
            case .dictionary(let d)?: if case .data(let data)? = d["NS.data"] { data } else { nil }
            default: nil
            }
        guard let keyData, keyData.count == 44 else { throw fail("has no 44-byte EncryptionKey") }
        guard case .integer(let size)? = file["Size"], size >= 0 else { throw fail("has no Size") }
        let bytes = Array(keyData)
        self.fileID = fileID
        self.size = Int(size)
        protectionClass = BackupItemBlob.le32(bytes, 0)
        wrappedKey = Array(bytes[4...])
    }

    /// The file's plaintext: AES-256-CBC with a zero IV under its key, the PKCS#7 padding removed, `size` bytes.
    /// The caller wipes it.
    public func decrypt(_ encrypted: [UInt8], classKeys: [UInt32: [UInt8]]) throws(BackupManifest.Failure) -> [UInt8] {
        guard let classKey = classKeys[protectionClass] else {
            throw .database("file \(fileID)'s key is wrapped by class \(protectionClass), which is not open")
        }
        guard var key = Nettle.aes256KeyUnwrap(kek: classKey, wrapped: wrappedKey) else {
            throw .database("file \(fileID)'s key does not unwrap under class \(protectionClass)'s key")
        }
        defer { Nettle.wipe(&key) }
        guard var plain = Nettle.aes256CBCDecrypt(key: key, iv: [UInt8](repeating: 0, count: 16), data: encrypted)
        else { throw .database("file \(fileID) is \(encrypted.count) bytes, not a whole number of AES blocks") }
        let pad = Int(plain.last ?? 0)
        guard (1...16).contains(pad), plain.count - pad == size, plain.suffix(pad).allSatisfy({ Int($0) == pad }) else {
            Nettle.wipe(&plain)
            throw .database("file \(fileID) does not decrypt to its \(size) bytes: damaged or cut")
        }
        plain.removeLast(pad)
        return plain
    }
}
