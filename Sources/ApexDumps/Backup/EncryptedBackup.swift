import ApexNettle
import Foundation

/// An encrypted Finder/iTunes backup's keychain, read from the backup's folder with its password
/// (`ios-encrypted-backups.md` §1.1): `Manifest.plist`'s keybag opened with the password, `Manifest.db`
/// decrypted in memory, the keychain's file found in it and decrypted in memory, its items opened. Nothing
/// decrypted is written to disk; the password's key and the class keys are wiped when done.
///
/// Opening a backup (``init(folder:)``) reads only `Manifest.plist`, so that an unencrypted backup is refused
/// before anyone is asked for a password; ``keychain(password:progress:)`` then derives the key and reads the rest.
public struct EncryptedBackup: Sendable {
    /// Why a backup can't be read. Each names the file and what is wrong; none holds a key or the password.
    public enum Failure: Error, Sendable, Equatable {
        /// The password does not open the keybag.
        case wrongPassword
        /// The backup was made without a password: its keychain is sealed with the phone's own key.
        case notEncrypted(path: String)
        /// A file of the backup is missing, can't be read, or is not what it should be.
        case damaged(path: String, String)
    }

    /// What ``keychain(password:progress:)`` is doing, for a progress line: the key derivation takes seconds.
    public enum Progress: Sendable, Equatable {
        /// The password's key is being derived: `rounds` of PBKDF2-HMAC-SHA256 (0 for a backup made before iOS
        /// 10.2), then `sha1Rounds` of PBKDF2-HMAC-SHA1.
        case derivingKey(rounds: Int, sha1Rounds: Int)
        /// The key is derived; the files are being decrypted.
        case keyDerived
    }

    /// The backup's folder.
    public let folder: URL
    /// Its `Manifest.plist`, read.
    public let manifest: BackupManifest

    /// Whether `folder` is a backup's folder: it holds `Manifest.plist` and `Manifest.db`.
    public static func isBackup(_ folder: URL) -> Bool {
        let files = FileManager.default
        return files.fileExists(atPath: folder.appendingPathComponent("Manifest.plist").path)
            && files.fileExists(atPath: folder.appendingPathComponent("Manifest.db").path)
    }

    /// Opens the backup in `folder`: reads its `Manifest.plist`.
    /// - Throws: ``Failure/notEncrypted(path:)`` for a backup made without a password, ``Failure/damaged(path:_:)``
    ///   for a manifest that can't be read or is not a backup's.
    public init(folder: URL) throws(Failure) {
        self.folder = folder
        let path = folder.appendingPathComponent("Manifest.plist").path
        do throws(BackupManifest.Failure) {
            manifest = try BackupManifest(plist: try Self.read(path))
        } catch {
            throw Self.failure(error, path: path)
        }
    }

    /// The keychain of the backup in `folder`, opened with `password` (UTF-8 bytes; the caller wipes them).
    public static func keychain(in folder: URL, password: [UInt8]) throws(Failure) -> BackupKeychain {
        try EncryptedBackup(folder: folder).keychain(password: password)
    }

    /// The backup's keychain, opened with `password` (UTF-8 bytes; the caller wipes them). `progress` is told
    /// when the key derivation starts and ends.
    /// - Throws: ``Failure/wrongPassword`` after the key derivation when the password does not open the keybag;
    ///   ``Failure/damaged(path:_:)`` naming the file for a keybag, `Manifest.db` or keychain file that is damaged
    ///   or missing.
    public func keychain(
        password: [UInt8], progress: (Progress) -> Void = { _ in }
    ) throws(Failure) -> BackupKeychain {
        let manifestPath = folder.appendingPathComponent("Manifest.plist").path
        let keybag = manifest.keybag
        progress(
            .derivingKey(
                rounds: Int(keybag.passwordSalt == nil ? 0 : keybag.passwordIterations ?? 0),
                sha1Rounds: Int(keybag.iterations)))
        var key = keybag.passwordKey(password)
        progress(.keyDerived)
        var classKeys: [UInt32: [UInt8]]
        do throws(BackupKeybag.Failure) {
            defer { Nettle.wipe(&key) }
            classKeys = try keybag.classKeys(passwordKey: key)
        } catch {
            throw Self.failure(.keybag(error), path: manifestPath)
        }
        defer { for index in classKeys.keys { Nettle.wipe(&classKeys[index]!) } }
        let databasePath = folder.appendingPathComponent("Manifest.db").path
        let file: BackupFile
        do throws(BackupManifest.Failure) {
            var database = try manifest.database(Array(try Self.read(databasePath)), classKeys: classKeys)
            defer { Nettle.wipe(&database) }
            guard
                let found = try BackupFile.find(
                    domain: BackupFile.keychain.domain, relativePath: BackupFile.keychain.relativePath, in: database)
            else { throw .malformed("it lists no keychain file (KeychainDomain, keychain-backup.plist)") }
            file = found
        } catch {
            throw Self.failure(error, path: databasePath)
        }
        let candidates = file.relativePaths.map { folder.appendingPathComponent($0).path }
        guard let keychainPath = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw .damaged(path: candidates[0], "the keychain's file is missing from the backup")
        }
        do throws(BackupManifest.Failure) {
            var plain = try file.decrypt(Array(try Self.read(keychainPath)), classKeys: classKeys)
            defer { Nettle.wipe(&plain) }
            do {
                return try BackupKeychain(file: plain, classKeys: classKeys, path: keychainPath)
            } catch {
                throw BackupManifest.Failure.malformed(error.message)
            }
        } catch {
            throw Self.failure(error, path: keychainPath)
        }
    }

    private static func read(_ path: String) throws(BackupManifest.Failure) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .malformed("can't be read")
        }
    }

    private static func failure(_ error: BackupManifest.Failure, path: String) -> Failure {
        switch error {
        case .keybag(.wrongPassword): .wrongPassword
        case .notEncrypted: .notEncrypted(path: path)
        case .keybag(.malformed(let why)): .damaged(path: path, "its keybag: \(why)")
        case .malformed(let why), .database(let why): .damaged(path: path, why)
        }
    }
}
