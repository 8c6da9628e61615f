import ApexKeychain
import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What unwraps a store's master key.
public enum StoreKeySource: Sendable {
    /// A key file (created 0600 beside the store by ``SQLiteKeychainDatabase/create(at:key:device:)``). A key
    /// file that others can read is refused.
    case keyFile(URL)
    /// A passphrase, stretched with Argon2id. It is also the passcode of the `linux` device profile. At most
    /// ``SQLiteKeychainDatabase/maximumPassphraseLength`` bytes when a store is created.
    case passphrase(Data)
}

extension SQLiteKeychainDatabase {
    /// The longest passphrase a store is created with: 1 KiB.
    public static let maximumPassphraseLength = 1024

    private static let keyFileHeader = "apex-keychain key v1\n"
    private static let masterAssociatedData = Array("apxk-master-v1".utf8)

    /// The default key file of a store: the store's path with `.key` appended.
    public static func defaultKeyFile(for store: URL) -> URL {
        URL(fileURLWithPath: store.path + ".key")
    }

    /// Creates a store: a new file, a random master key, and (for ``StoreKeySource/keyFile(_:)``) a new key file.
    ///
    /// Nothing is left behind if creation fails: the store is built under a temporary name and moved into place.
    /// - Throws: ``StoreError`` `cannotCreate` when the store or key file exists or can't be written, or when the
    ///   passphrase is empty or longer than ``maximumPassphraseLength``.
    public static func create(
        at url: URL, key source: StoreKeySource, device: DeviceProfile = .linux
    ) throws(StoreError) -> SQLiteKeychainDatabase {
        let path = url.path
        let fm = FileManager.default
        if fm.fileExists(atPath: path) { throw StoreError(.cannotCreate, path: path, "a file already exists there") }
        let master = SecretKey.random()
        var createdKeyFile: String?
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).creating-\(getpid())-\(UUID().uuidString)").path
        func cleanUp() {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? fm.removeItem(atPath: temporary + suffix) }
            if let createdKeyFile { try? fm.removeItem(atPath: createdKeyFile) }
        }
        do {
            var meta: [(String, Data)] = [("format", Data(StoreSchema.format.utf8)), ("device", Data(device.rawValue.utf8))]
            let kek: SecretKey
            switch source {
            case .keyFile(let keyURL):
                kek = SecretKey.random()
                try writeKeyFile(keyURL.path, kek)
                createdKeyFile = keyURL.path
                meta.append(("keywrap", Data("keyfile".utf8)))
            case .passphrase(let passphrase):
                guard !passphrase.isEmpty else { throw StoreError(.cannotCreate, path: path, "the passphrase is empty") }
                guard passphrase.count <= maximumPassphraseLength else {
                    throw StoreError(.cannotCreate, path: path, "the passphrase is longer than \(maximumPassphraseLength) bytes")
                }
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
            let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw StoreError(.cannotCreate, path: path, "can't create the store: \(String(cString: strerror(errno)))")
            }
            close(fd)
            do {
                let connection = try Connection(path: temporary, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
                try configure(connection, readOnly: false)
                try connection.execute("BEGIN IMMEDIATE")
                for step in StoreSchema.migrations { try connection.execute(step) }
                try connection.execute("PRAGMA user_version = \(StoreSchema.currentVersion)")
                for (name, value) in meta {
                    let statement = try connection.statement("INSERT INTO meta(name, value) VALUES (?, ?)")
                    statement.bind(1, name)
                    statement.bind(2, value)
                    try statement.run()
                }
                try connection.execute("COMMIT")
            } catch {
                throw StoreError(.cannotCreate, path: path, "can't write the store: \(error)")
            }
            // link(2) never replaces: of two creations racing for one path, exactly one wins.
            guard Glibc.link(temporary, path) == 0 else {
                let reason = errno == EEXIST ? "a file already exists there" : String(cString: strerror(errno))
                throw StoreError(.cannotCreate, path: path, "can't move the new store into place: \(reason)")
            }
            for suffix in ["", "-wal", "-shm"] { try? fm.removeItem(atPath: temporary + suffix) }
        } catch {
            cleanUp()
            throw error as? StoreError ?? StoreError(.cannotCreate, path: path, "\(error)")
        }
        do {
            return try SQLiteKeychainDatabase(opening: url, key: source)
        } catch {
            try? fm.removeItem(atPath: path)
            if let createdKeyFile { try? fm.removeItem(atPath: createdKeyFile) }
            throw error
        }
    }

    /// Opens an existing store.
    ///
    /// A store this process can't write (a read-only file or folder) is opened read-only (``isReadOnly``): it is
    /// not migrated to the current schema version, and writes fail. See ``StoreConnection`` for how.
    /// - Throws: ``StoreError``: `notFound`, `notAStore` (not SQLite, or not a store), `damaged` (damaged or
    ///   truncated), `unreadable` (no permission, or a read-only folder with changes in the `-wal` file),
    ///   `newerVersion`, `keyFile` (missing, malformed, or readable by others), `wrongKey`, `io`.
    public convenience init(opening url: URL, key source: StoreKeySource) throws(StoreError) {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.notFound, path: path, "no store here (create one with 'store init')")
        }
        let (connection, version, readOnly) = try StoreConnection.open(path)
        // Every schema version keeps `meta(name, value)` with its `format` row, so that a store is recognised
        // as one before its version is judged.
        var meta: [String: Data] = [:]
        do {
            for (name, value) in try connection.statement("SELECT name, value FROM meta").allRows({ ($0.string(0) ?? "", $0.data(1)) }) {
                meta[name] = value
            }
        } catch {
            throw StoreConnection.readError(error, path: path, otherwise: "not a store: a SQLite database without the store's tables")
        }
        guard meta["format"].flatMap({ String(data: $0, encoding: .utf8) }) == StoreSchema.format else {
            throw StoreError(.notAStore, path: path, "not a store: a SQLite database of another kind")
        }
        if version > StoreSchema.currentVersion {
            throw StoreError(
                .newerVersion, path: path,
                "the store has schema version \(version); this version of apex-keychain reads up to \(StoreSchema.currentVersion)")
        }
        guard version >= 1, let wrapped = meta["wrapped_master"],
            let keywrap = meta["keywrap"].flatMap({ String(data: $0, encoding: .utf8) }),
            let profile = meta["device"].flatMap({ String(data: $0, encoding: .utf8) }).flatMap(DeviceProfile.init(rawValue:))
        else {
            throw StoreError(.notAStore, path: path, "not a store: its metadata is missing or damaged")
        }
        do {
            try Self.configure(connection, readOnly: readOnly)
            if version < StoreSchema.currentVersion, !readOnly {
                try connection.execute("BEGIN IMMEDIATE")
                for step in StoreSchema.migrations[version...] { try connection.execute(step) }
                try connection.execute("PRAGMA user_version = \(StoreSchema.currentVersion)")
                try connection.execute("COMMIT")
            }
        } catch {
            throw StoreError(.io, path: path, "can't prepare the store: \(error.message)")
        }
        let kek: SecretKey
        switch source {
        case .keyFile(let keyURL):
            guard keywrap == "keyfile" else {
                throw StoreError(.wrongKey, path: path, "this store is locked with a passphrase, not a key file")
            }
            kek = try Self.readKeyFile(keyURL.path)
        case .passphrase(let passphrase):
            guard keywrap == "passphrase" else {
                throw StoreError(.wrongKey, path: path, "this store is locked with a key file, not a passphrase")
            }
            guard let salt = meta["pwhash_salt"], salt.count == Sodium.saltLength,
                let ops = meta["pwhash_ops"].flatMap({ String(data: $0, encoding: .utf8) }).flatMap(UInt64.init),
                let mem = meta["pwhash_mem"].flatMap({ String(data: $0, encoding: .utf8) }).flatMap(Int.init)
            else { throw StoreError(.notAStore, path: path, "not a store: its passphrase parameters are damaged") }
            kek = try Self.stretch(passphrase, salt: Array(salt), parameters: .init(opsLimit: ops, memLimit: mem), path: path)
        }
        guard var masterBytes = Sodium.open(wrapped, key: kek, associatedData: Self.masterAssociatedData),
            masterBytes.count == SecretKey.length
        else {
            switch source {
            case .keyFile(let keyURL):
                throw StoreError(.wrongKey, path: path, "the key file \(keyURL.path) does not open this store")
            case .passphrase:
                throw StoreError(.wrongKey, path: path, "the passphrase does not open this store")
            }
        }
        let master = SecretKey(bytes: Array(masterBytes))
        Sodium.wipe(&masterBytes)
        self.init(
            url: url, connection: connection, schemaVersion: readOnly ? version : StoreSchema.currentVersion,
            isReadOnly: readOnly, deviceProfile: profile, usesPassphrase: keywrap == "passphrase", master: master)
    }

    /// The connection's settings: a busy timeout, foreign keys, and for a connection that writes, WAL with
    /// `synchronous=FULL` (a read-only connection keeps the file's journal mode).
    static func configure(_ connection: Connection, readOnly: Bool) throws(SQLiteError) {
        sqlite3_busy_timeout(connection.handle, 10_000)
        try connection.execute("PRAGMA foreign_keys = ON;")
        if !readOnly { try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;") }
    }

    private static func stretch(
        _ passphrase: Data, salt: [UInt8], parameters: Sodium.PasswordHashParameters, path: String
    ) throws(StoreError) -> SecretKey {
        guard !passphrase.isEmpty else { throw StoreError(.wrongKey, path: path, "the passphrase is empty") }
        var bytes = Array(passphrase)
        defer { Sodium.wipe(&bytes) }
        guard let key = Sodium.keyFromPassphrase(bytes, salt: salt, parameters: parameters) else {
            throw StoreError(.io, path: path, "Argon2id could not run (out of memory?)")
        }
        return key
    }

    private static func writeKeyFile(_ path: String, _ key: SecretKey) throws(StoreError) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(.cannotCreate, path: path, "can't create the key file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var text = Array((keyFileHeader + key.withBytes { Data(bytes: $0, count: SecretKey.length) }.base64EncodedString() + "\n").utf8)
        defer { Sodium.wipe(&text) }
        let written = text.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == text.count, fsync(fd) == 0 else {
            unlink(path)
            throw StoreError(.cannotCreate, path: path, "can't write the key file: \(String(cString: strerror(errno)))")
        }
    }

    private static func readKeyFile(_ path: String) throws(StoreError) -> SecretKey {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw StoreError(.keyFile, path: path, "the key file can't be read: \(String(cString: strerror(errno)))")
        }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw StoreError(.keyFile, path: path, "the key file is accessible by others (mode \(mode)); run: chmod 600 \(path)")
        }
        guard var contents = FileManager.default.contents(atPath: path) else {
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
}
