import ApexSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How a store file is opened: read-write when this process can write it, read-only when it can't, and what
/// SQLite's failures to read it mean.
///
/// 1. The file is opened read-write and its header read. SQLite falls back to reading on its own when the file
///    is read-only; a WAL store then still needs its `-shm` file, which it creates when the folder is writable.
/// 2. When that read fails for want of write access (a read-only folder where the `-shm` or `-wal` file can't be
///    created), the file is opened read-only as immutable: SQLite takes no lock and reads the file alone, which
///    holds the whole store when no `-wal` file with changes is beside it (a store closed cleanly has none).
///    With changes in the `-wal` file, the store can't be read there, and the error says so.
///
/// An immutable read assumes that no one writes the store meanwhile: in a read-only folder no one can, unless
/// another user has write access to it.
enum StoreConnection {
    /// How long a statement waits for another connection's lock before it fails as busy: a writer's
    /// transaction, or a closing connection folding the WAL into the file. Set before the first read.
    static let busyTimeout: Int32 = 10_000

    /// Opens the store file at `path` and reads its schema version.
    /// - Throws: `unreadable`, `notAStore`, `damaged` or `io`, naming the file and the cause.
    static func open(_ path: String) throws(StoreError) -> (Connection, version: Int, readOnly: Bool) {
        let connection: Connection
        do {
            connection = try Connection(path: path, mode: .readWrite)
        } catch {
            throw openError(error, path: path)
        }
        connection.setBusyTimeout(milliseconds: busyTimeout)
        do {
            let version = try schemaVersion(connection)
            return (connection, version, connection.isReadOnly)
        } catch
            where error.primary == .readOnly || error.primary == .cantOpen || error.primary == .perm
        {
            // Falls through to the read-only open below.
        } catch {
            throw readError(error, path: path, otherwise: "not a store: the file is not a SQLite database")
        }
        let wal = path + "-wal"
        var info = stat()
        if stat(wal, &info) == 0, info.st_size > 0 {
            let folder = (path as NSString).deletingLastPathComponent
            let cause =
                access(folder.isEmpty ? "." : folder, W_OK) != 0
                ? "the store's folder is read-only" : "SQLite can't open the store's -wal and -shm files for writing"
            throw StoreError(
                .unreadable, path: path,
                "\(cause), and the store's latest changes are in \(wal), which SQLite reads only with write access "
                    + "(it needs \(path)-shm beside it): make the folder writable, or copy the store with its -wal "
                    + "file to a writable folder and read the copy")
        }
        let immutable: Connection
        do {
            immutable = try Connection(
                path: Connection.immutableURI(path: path), mode: [.readOnly, .uri])
        } catch {
            throw openError(error, path: path)
        }
        do {
            return (immutable, try schemaVersion(immutable), true)
        } catch {
            throw readError(error, path: path, otherwise: "not a store: the file is not a SQLite database")
        }
    }

    /// `PRAGMA user_version`: the first read of the file (its header, and its WAL).
    private static func schemaVersion(_ connection: Connection) throws(SQLiteError) -> Int {
        Int(try connection.prepare("PRAGMA user_version").firstRow { $0.int64(0) } ?? 0)
    }

    /// The error of a file SQLite can't open at all.
    static func openError(_ error: SQLiteError, path: String) -> StoreError {
        switch error.systemError {
        case EACCES, EPERM:
            return StoreError(
                .unreadable, path: path, "can't open the store: \(String(cString: strerror(error.systemError)))")
        case ENOENT:
            return StoreError(.notFound, path: path, "no store here (create one with 'store init')")
        default:
            return StoreError(.io, path: path, "can't open the store: \(error.message)")
        }
    }

    /// The error of a failed read while opening: a damaged or truncated store, a file that is not SQLite, a busy
    /// or failing disk, or else `otherwise` (`notAStore`).
    static func readError(_ error: any Error, path: String, otherwise: String) -> StoreError {
        guard let error = error as? SQLiteError else {
            return StoreError(.io, path: path, "can't read the store: \(error)")
        }
        let isSQLite = startsWithSQLiteHeader(path)
        switch error.primary {
        case .corrupt:
            return damaged(error, path: path)
        case .notADB where isSQLite:
            return damaged(error, path: path)
        case .notADB:
            return StoreError(.notAStore, path: path, "not a store: the file is not a SQLite database")
        case .busy, .locked:
            return StoreError(.io, path: path, "the store stayed busy (another process is writing); try again")
        case .ioErr, .nomem, .full, .readOnly, .cantOpen, .perm:
            return StoreError(.io, path: path, "can't read the store: \(error.message)")
        default:
            if !isSQLite, fileSize(path) == 0 {
                return StoreError(.notAStore, path: path, "not a store: the file is empty")
            }
            return StoreError(.notAStore, path: path, otherwise)
        }
    }

    /// A SQLite file that SQLite finds inconsistent.
    private static func damaged(_ error: SQLiteError, path: String) -> StoreError {
        StoreError(
            .damaged, path: path,
            "the store is damaged or truncated (SQLite: \(error.message)); don't delete it: restore it from a backup, "
                + "or keep it for recovery")
    }

    /// Whether the file at `path` starts as every SQLite database does.
    private static func startsWithSQLiteHeader(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: sqliteMagic.count)) == sqliteMagic
    }

    private static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : -1
    }
}
