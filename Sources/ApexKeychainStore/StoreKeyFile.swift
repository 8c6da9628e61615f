import ApexSodium
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What unwraps a store's master key.
public enum StoreKeySource: Sendable {
    /// A key file (created 0600 beside the store by
    /// ``SQLiteKeychainDatabase/create(at:key:device:bundleIdentifier:)``). A key file that others can read is
    /// refused.
    case keyFile(URL)
    /// A passphrase, stretched with Argon2id. It is also the passcode of the `linux` device profile. At most
    /// ``SQLiteKeychainDatabase/maximumPassphraseLength`` bytes when a store is created.
    case passphrase(Data)
}

/// Key files: `apex-keychain key v1`, then the key in base64, mode 0600.
extension SQLiteKeychainDatabase {
    static let keyFileHeader = "apex-keychain key v1\n"
    static let masterAssociatedData = Array("apxk-master-v1".utf8)

    /// The default key file of a store: the store's path with `.key` appended.
    public static func defaultKeyFile(for store: URL) -> URL {
        URL(fileURLWithPath: store.path + ".key")
    }

    /// Writes the key file's contents to `fd` (a new, empty file) and flushes them to disk.
    /// - Throws: `cannotCreate` naming `path`.
    static func writeKeyFile(fd: Int32, path: String, _ key: SecretKey) throws(StoreError) {
        var text = Array(
            (keyFileHeader + key.withBytes { Data(bytes: $0, count: SecretKey.length) }.base64EncodedString() + "\n")
                .utf8)
        defer { Sodium.wipe(&text) }
        let written = text.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == text.count, fsync(fd) == 0 else {
            throw StoreError(.cannotCreate, path: path, "can't write the key file: \(String(cString: strerror(errno)))")
        }
    }

    /// The key in the key file at `path`.
    /// - Throws: `keyFileMissing` when there is no such file or it is not a regular file (a folder, a pipe);
    ///   `keyFile` when it can't be read, is accessible by others, or is not a key file.
    static func readKeyFile(_ path: String) throws(StoreError) -> SecretKey {
        // One open: the mode checked is that of the very file whose bytes are read (no swap in between). Without
        // blocking: a pipe at the path is refused below, not waited on.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let missing = errno == ENOENT || errno == ENOTDIR
            throw StoreError(
                missing ? .keyFileMissing : .keyFile, path: path,
                "the key file can't be read: \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StoreError(.keyFile, path: path, "the key file can't be read: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            let what = info.st_mode & S_IFMT == S_IFDIR ? "a folder" : "a pipe, socket or device"
            throw StoreError(.keyFileMissing, path: path, "\(what), not a key file")
        }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw StoreError(
                .keyFile, path: path, "the key file is accessible by others (mode \(mode)); run: chmod 600 \(path)")
        }
        // A key file is one short line: more than 4 KiB is not one, and is not read further.
        var contents: Data
        do {
            contents = try handle.read(upToCount: 4096) ?? Data()
        } catch {
            throw StoreError(.keyFile, path: path, "the key file can't be read")
        }
        defer { Sodium.wipe(&contents) }
        let header = Data(keyFileHeader.utf8)
        guard contents.starts(with: header), contents.last == UInt8(ascii: "\n"),
            var raw = Data(base64Encoded: contents.dropFirst(header.count).dropLast()), raw.count == SecretKey.length
        else {
            throw StoreError(.keyFile, path: path, "not an apex-keychain key file")
        }
        defer { Sodium.wipe(&raw) }
        return SecretKey(bytes: Array(raw))
    }

    /// Whether `kek` unwraps `wrapped` (a store's `wrapped_master`).
    static func unwraps(_ kek: SecretKey, _ wrapped: Data) -> Bool {
        guard var master = Sodium.open(wrapped, key: kek, associatedData: masterAssociatedData) else { return false }
        Sodium.wipe(&master)
        return true
    }
}
