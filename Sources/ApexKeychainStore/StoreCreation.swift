import ApexSQLite
import ApexSodium
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SQLiteKeychainDatabase {
    /// The longest passphrase a store is created with: 1 KiB.
    public static let maximumPassphraseLength = 1024

    /// Creates a store: a new file, a random master key, and (for ``StoreKeySource/keyFile(_:)``) a new key file.
    /// `bundleIdentifier`, when given, is recorded as the app of the store's device: its default service.
    ///
    /// The key file and the store are written under temporary names and linked into place, the key file first,
    /// so an interrupted creation leaves neither (or, interrupted between the two links, a key file that the
    /// next creation recognises as its own leftover and removes: see `CreationLeftovers`). Temporaries of
    /// creations that are over are removed first. Nothing is left behind if creation fails.
    /// - Throws: ``StoreError`` `cannotCreate` when the store exists, when a key file is there that may belong to
    ///   another store, when a file can't be written, or when the passphrase is empty or longer than
    ///   ``maximumPassphraseLength``.
    public static func create(
        at url: URL, key source: StoreKeySource, device: DeviceProfile = .linux, bundleIdentifier: String? = nil
    ) throws(StoreError) -> SQLiteKeychainDatabase {
        let path = url.path
        if FileManager.default.fileExists(atPath: path) {
            throw StoreError(.cannotCreate, path: path, "a file already exists there")
        }
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw StoreError(.cannotCreate, path: path, "the folder \(folder) does not exist")
        }
        var keyURL: URL?
        switch source {
        case .keyFile(let url): keyURL = url
        case .passphrase(let passphrase):
            guard !passphrase.isEmpty else { throw StoreError(.cannotCreate, path: path, "the passphrase is empty") }
            guard passphrase.count <= maximumPassphraseLength else {
                throw StoreError(
                    .cannotCreate, path: path, "the passphrase is longer than \(maximumPassphraseLength) bytes")
            }
        }
        try CreationLeftovers.clear(store: url, keyFile: keyURL)

        let id = "\(getpid())-\(UUID().uuidString)"
        let temporary = CreationLeftovers.temporary(for: url, id: id)
        let keyTemporary = keyURL.map { CreationLeftovers.temporary(for: $0, id: id) }
        var locks: [Int32] = []
        var linkedKeyFile: String?
        func removeTemporaries() {
            CreationLeftovers.removeDatabaseFiles(temporary)
            if let keyTemporary { unlink(keyTemporary) }
        }
        defer {
            removeTemporaries()
            for fd in locks { close(fd) }
        }
        do throws(StoreError) {
            let master = SecretKey.random()
            var meta: [(String, Data)] = [
                ("format", Data(StoreSchema.format.utf8)), ("device", Data(device.rawValue.utf8)),
            ]
            if let bundleIdentifier { meta.append(("bundle_id", Data(bundleIdentifier.utf8))) }
            let kek: SecretKey
            switch source {
            case .keyFile:
                kek = SecretKey.random()
                let fd = try CreationLeftovers.createLocked(keyTemporary!, for: keyURL!.path, what: "key file")
                locks.append(fd)
                try writeKeyFile(fd: fd, path: keyURL!.path, kek)
                meta.append(("keywrap", Data("keyfile".utf8)))
            case .passphrase(let passphrase):
                let salt = Sodium.randomBytes(Sodium.saltLength)
                let parameters = Sodium.PasswordHashParameters.interactive
                kek = try stretch(passphrase, salt: salt, parameters: parameters, path: path)
                meta += [
                    ("keywrap", Data("passphrase".utf8)), ("pwhash_salt", Data(salt)),
                    ("pwhash_ops", Data(String(parameters.opsLimit).utf8)),
                    ("pwhash_mem", Data(String(parameters.memLimit).utf8)),
                ]
            }
            let wrapped = master.withBytes { bytes in
                Sodium.seal(Data(bytes: bytes, count: SecretKey.length), key: kek, associatedData: masterAssociatedData)
            }
            meta.append(("wrapped_master", wrapped))
            // Services, keys and labels are readable in the file: it is the owner's only, as are the WAL and
            // shared-memory files, which SQLite creates with the database file's mode.
            locks.append(try CreationLeftovers.createLocked(temporary, for: path, what: "store"))
            try writeSchema(temporary, meta: meta, path: path)
            // link(2) never replaces: of two creations racing for one path, exactly one wins.
            if let keyURL, let keyTemporary {
                guard Glibc.link(keyTemporary, keyURL.path) == 0 else {
                    let reason = errno == EEXIST ? "a file already exists there" : String(cString: strerror(errno))
                    throw StoreError(
                        .cannotCreate, path: keyURL.path, "can't move the new key file into place: \(reason)")
                }
                linkedKeyFile = keyURL.path
                syncFolder(of: keyURL)
            }
            guard Glibc.link(temporary, path) == 0 else {
                let reason = errno == EEXIST ? "a file already exists there" : String(cString: strerror(errno))
                throw StoreError(.cannotCreate, path: path, "can't move the new store into place: \(reason)")
            }
            removeTemporaries()
            syncFolder(of: url)
        } catch {
            if let linkedKeyFile { unlink(linkedKeyFile) }
            throw error
        }
        do {
            return try SQLiteKeychainDatabase(opening: url, key: source)
        } catch {
            // The store just made, with whatever journal files the failed open left beside it.
            CreationLeftovers.removeDatabaseFiles(path)
            if let keyURL { try? FileManager.default.removeItem(at: keyURL) }
            throw error
        }
    }

    /// Writes the schema and the metadata rows into the new, empty file at `temporary`, in one transaction.
    private static func writeSchema(_ temporary: String, meta: [(String, Data)], path: String) throws(StoreError) {
        do throws(SQLiteError) {
            let connection = try Connection(path: temporary, mode: .readWrite)
            try configure(connection, readOnly: false)
            try connection.transaction(.immediate) { () throws(SQLiteError) in
                for step in StoreSchema.migrations { try connection.execute(step) }
                try connection.execute("PRAGMA user_version = \(StoreSchema.currentVersion)")
                let statement = try connection.prepare("INSERT INTO meta(name, value) VALUES (?, ?)")
                for (name, value) in meta {
                    statement.reset()
                    try statement.bind(1, name)
                    try statement.bind(2, value)
                    try statement.run()
                }
            }
        } catch {
            throw StoreError(.cannotCreate, path: path, "can't write the store: \(error)")
        }
    }

    /// Flushes the folder of `url`, so that a name just linked there survives a power loss.
    private static func syncFolder(of url: URL) {
        let fd = Glibc.open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
