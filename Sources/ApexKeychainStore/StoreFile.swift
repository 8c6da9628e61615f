import ApexKeychain
import ApexSQLite
import ApexSodium
import Foundation

/// Opening a store file.
extension SQLiteKeychainDatabase {
    /// Opens an existing store.
    ///
    /// A store this process can't write (a read-only file or folder) is opened read-only (``isReadOnly``): it is
    /// not migrated to the current schema version, and writes fail. See `StoreConnection` for how.
    /// - Throws: ``StoreError``: `notFound`, `notAStore` (not SQLite, or not a store), `damaged` (damaged or
    ///   truncated), `unreadable` (no permission, a read-only folder with changes in the `-wal` file, or not a
    ///   regular file: a folder, a pipe, a socket or a device), `newerVersion`, `keyFile` (missing, malformed, or
    ///   readable by others), `wrongKey`, `io`.
    public convenience init(opening url: URL, key source: StoreKeySource) throws(StoreError) {
        let path = url.path
        try Self.checkIsAFile(path)
        let (connection, version, readOnly) = try StoreConnection.open(path)
        // Every schema version keeps `meta(name, value)` with its `format` row, so that a store is recognised
        // as one before its version is judged.
        var meta: [String: Data] = [:]
        do {
            for (name, value) in try connection.prepare("SELECT name, value FROM meta").allRows({
                ($0.string(0) ?? "", $0.data(1))
            }) {
                meta[name] = value
            }
        } catch {
            throw StoreConnection.readError(
                error, path: path, otherwise: "not a store: a SQLite database without the store's tables")
        }
        guard meta["format"].flatMap({ String(data: $0, encoding: .utf8) }) == StoreSchema.format else {
            throw StoreError(.notAStore, path: path, "not a store: a SQLite database of another kind")
        }
        if version > StoreSchema.currentVersion {
            throw StoreError(
                .newerVersion, path: path,
                "the store has schema version \(version); this version of apex-keychain reads up to \(StoreSchema.currentVersion)"
            )
        }
        guard version >= 1, let wrapped = meta["wrapped_master"],
            let keywrap = meta["keywrap"].flatMap({ String(data: $0, encoding: .utf8) }),
            let profile = meta["device"].flatMap({ String(data: $0, encoding: .utf8) }).flatMap(
                DeviceProfile.init(rawValue:))
        else {
            throw StoreError(.notAStore, path: path, "not a store: its metadata is missing or damaged")
        }
        do throws(SQLiteError) {
            try Self.configure(connection, readOnly: readOnly)
            if version < StoreSchema.currentVersion, !readOnly {
                try connection.transaction(.immediate) { () throws(SQLiteError) in
                    for step in StoreSchema.migrations[version...] { try connection.execute(step) }
                    try connection.execute("PRAGMA user_version = \(StoreSchema.currentVersion)")
                }
            }
        } catch {
            throw StoreError(
                .io, path: path, "can't prepare the store: \(error.message)")
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
            kek = try Self.stretch(
                passphrase, salt: Array(salt), parameters: .init(opsLimit: ops, memLimit: mem), path: path)
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
            isReadOnly: readOnly, deviceProfile: profile,
            bundleIdentifier: meta["bundle_id"].flatMap { String(data: $0, encoding: .utf8) },
            usesPassphrase: keywrap == "passphrase", master: master)
    }

    /// Refuses, before SQLite opens it, a path with nothing there (`notFound`) or that names something other
    /// than a regular file, links followed (`unreadable`): a folder, or a pipe, which a read would wait on.
    static func checkIsAFile(_ path: String) throws(StoreError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw StoreError(.notFound, path: path, "no store here (create one with 'store init')")
        }
        let what: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: what = "a folder"
        case S_IFIFO: what = "a pipe"
        case S_IFSOCK: what = "a socket"
        default: what = "a device"
        }
        throw StoreError(.unreadable, path: path, "it is \(what), not a store file")
    }

    /// The connection's settings: a busy timeout, foreign keys, statement journals in memory (a write inside a
    /// batch keeps the pages it changes there until the statement ends: in a temporary file, each write would
    /// cost system calls), and for a connection that writes, WAL with `synchronous=FULL` (a read-only connection
    /// keeps the file's journal mode).
    static func configure(_ connection: Connection, readOnly: Bool) throws(SQLiteError) {
        connection.setBusyTimeout(milliseconds: StoreConnection.busyTimeout)
        try connection.execute("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;")
        if !readOnly { try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;") }
    }

    static func stretch(
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
}
