import ApexNettle
import Foundation

/// A backup folder's `Manifest.plist` (`ios-encrypted-backups.md` §1.2): whether the backup is encrypted, its
/// keybag, and the wrapped key of its `Manifest.db`; and that database, decrypted in memory (§1.5).
public struct BackupManifest: Sendable {
    /// The keybag (`BackupKeyBag`).
    public var keybag: BackupKeybag
    /// The protection class whose key wraps `Manifest.db`'s key, and that wrapped key (`ManifestKey`: a
    /// little-endian class, then 40 bytes); nil before iOS 10.2, whose `Manifest.db` is not encrypted.
    public var manifestKey: (protectionClass: UInt32, wrapped: [UInt8])?
    /// The bundle IDs of the apps the backup holds (the keys of `Applications`), sorted; empty when it names none.
    public var apps: [String]

    /// Why a manifest can't be read or opened. Messages name what is wrong, never a key.
    public enum Failure: Error, Sendable, Equatable {
        /// The plist is not a backup's manifest, or a field is not what it should be.
        case malformed(String)
        /// `IsEncrypted` is false: the backup's keychain is sealed with the phone's own key.
        case notEncrypted
        /// The keybag is malformed, or the password is wrong.
        case keybag(BackupKeybag.Failure)
        /// `Manifest.db` does not decrypt to an SQLite database.
        case database(String)
    }

    /// Reads `Manifest.plist`'s bytes (binary or XML).
    public init(plist data: Data) throws(Failure) {
        let root: PlistNode
        do {
            root = try PlistParser.parse(data)
        } catch {
            throw .malformed("not a property list: \(error)")
        }
        guard case .dictionary(let manifest) = root else { throw .malformed("the property list is not a dictionary") }
        switch manifest["IsEncrypted"] {
        case .boolean(true)?: break
        case .boolean(false)?: throw .notEncrypted
        case nil: throw .malformed("no 'IsEncrypted': not a backup's Manifest.plist")
        case let other?: throw .malformed("'IsEncrypted' is \(other.kindName), not a boolean")
        }
        guard case .data(let keybag)? = manifest["BackupKeyBag"] else {
            throw .malformed("no 'BackupKeyBag' data: an encrypted backup has one")
        }
        do throws(BackupKeybag.Failure) {
            self.keybag = try BackupKeybag(Array(keybag))
        } catch {
            throw .keybag(error)
        }
        switch manifest["ManifestKey"] {
        case nil: manifestKey = nil
        case .data(let key)? where key.count == 44:
            let bytes = Array(key)
            let protectionClass = BackupItemBlob.le32(bytes, 0)
            manifestKey = (protectionClass, Array(bytes[4...]))
        case .data(let key)?: throw .malformed("'ManifestKey' is \(key.count) bytes, not 44")
        case let other?: throw .malformed("'ManifestKey' is \(other.kindName), not data")
        }
        switch manifest["Applications"] {
        case nil: apps = []
        case .dictionary(let applications)?:
            apps = applications.entries.compactMap { if case .string(let id) = $0.key { id } else { nil } }.sorted()
        case let other?: throw .malformed("'Applications' is \(other.kindName), not a dictionary")
        }
    }

    /// `Manifest.db`'s bytes, decrypted with the open class keys (AES-256-CBC, a zero IV, under the key
    /// `ManifestKey` wraps); as they are when the manifest has no `ManifestKey`. Never written to disk; the caller
    /// wipes them.
    public func database(_ encrypted: [UInt8], classKeys: [UInt32: [UInt8]]) throws(Failure) -> [UInt8] {
        guard let manifestKey else { return try Self.checked(encrypted) }
        guard let classKey = classKeys[manifestKey.protectionClass] else {
            throw .database(
                "its key is wrapped by class \(manifestKey.protectionClass), which the password does not open")
        }
        guard var key = Nettle.aes256KeyUnwrap(kek: classKey, wrapped: manifestKey.wrapped) else {
            throw .database("its key does not unwrap under class \(manifestKey.protectionClass)'s key")
        }
        defer { Nettle.wipe(&key) }
        guard
            let plain = Nettle.aes256CBCDecrypt(
                key: key, iv: [UInt8](repeating: 0, count: Nettle.blockSize), data: encrypted)
        else { throw .database("\(encrypted.count) bytes, not a whole number of AES blocks") }
        return try Self.checked(plain)
    }

    private static func checked(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        guard bytes.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            throw .database("it does not decrypt to an SQLite database (no 'SQLite format 3' header)")
        }
        return bytes
    }
}
