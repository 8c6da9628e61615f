import ApexSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The temporary files of ``SQLiteKeychainDatabase/create(at:key:device:)``, and what an interrupted creation
/// leaves behind.
///
/// A creation writes the key file and the store under temporary names in their folders
/// (`.NAME.creating-PID-UUID`), each held under an exclusive `flock(2)` for as long as the creation runs, then
/// links the key file into place, then the store. A creation killed before the links leaves temporaries only;
/// killed between them, the key file too, with no store beside it. The next creation of the same store:
/// - removes the temporaries whose creation is over: their process is gone (`kill(pid, 0)`) and no one holds
///   their lock; a running creation's are left alone;
/// - removes a key file with no store beside it when it is certain that no store uses it: it unwraps the master
///   key of such a temporary store (so it was made by that creation, and the store never got into place). Any
///   other key file there is refused, naming it and the fix, since it may belong to a store moved elsewhere.
enum CreationLeftovers {
    /// What a temporary name has after the file's own name.
    static let marker = ".creating-"
    /// SQLite's files beside a database file.
    static let sqliteSuffixes = ["-wal", "-shm", "-journal"]

    /// A new temporary name for `url`, in its folder.
    static func temporary(for url: URL, id: String) -> String {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent)\(marker)\(id)").path
    }

    /// Creates `path` (0600, exclusively) and locks it; the descriptor keeps the lock until it is closed.
    static func createLocked(_ path: String, for target: String, what: String) throws(StoreError) -> Int32 {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(
                .cannotCreate, path: target, "can't create the \(what): \(String(cString: strerror(errno)))")
        }
        _ = flock(fd, LOCK_EX)
        return fd
    }

    /// Removes a file and SQLite's files beside it (the file last), ignoring files that are not there.
    static func removeDatabaseFiles(_ path: String) {
        for suffix in sqliteSuffixes { unlink(path + suffix) }
        unlink(path)
    }

    /// Clears what interrupted creations of the store at `url` (with the key file `keyFile`) left, before a
    /// new creation.
    /// - Throws: `cannotCreate` naming the key file when one is there that can't be shown to be a leftover.
    static func clear(store url: URL, keyFile: URL?) throws(StoreError) {
        let stores = finished(temporariesOf: url)
        let keys = keyFile.map { finished(temporariesOf: $0) } ?? []
        defer {
            for temporary in stores + keys {
                removeDatabaseFiles(temporary.path)
                close(temporary.lock)
            }
        }
        guard let keyFile, FileManager.default.fileExists(atPath: keyFile.path) else { return }
        if stores.contains(where: { isWrapped(store: $0.path, by: keyFile.path) }) {
            unlink(keyFile.path)
            return
        }
        throw StoreError(
            .cannotCreate, path: keyFile.path,
            "a key file is already there, with no store at \(url.path): a 'store init' of an earlier version may "
                + "have been interrupted, or the key file belongs to a store that was moved. If no store uses it, "
                + "remove it (rm '\(keyFile.path)') and run 'store init' again")
    }

    /// A temporary whose creation is over, locked by this process until it is closed.
    struct Temporary {
        let path: String
        let lock: Int32
    }

    /// The temporaries of `url` in its folder whose creation is over: their process is gone and their lock is
    /// free (a temporary of an earlier version has no lock).
    static func finished(temporariesOf url: URL) -> [Temporary] {
        let folder = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent)\(marker)"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        var found: [Temporary] = []
        for name in names where name.hasPrefix(prefix) && !sqliteSuffixes.contains(where: { name.hasSuffix($0) }) {
            let id = name.dropFirst(prefix.count)
            if let pid = id.split(separator: "-").first.flatMap({ pid_t($0) }), pid > 0,
                kill(pid, 0) == 0 || errno == EPERM
            {
                continue
            }
            let path = folder.appendingPathComponent(name).path
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                continue
            }
            found.append(Temporary(path: path, lock: fd))
        }
        return found
    }

    /// Whether the temporary store at `store` is complete and its master key is wrapped by the key file at
    /// `keyFile` (read as a key file is read to open a store: a key file others can read proves nothing).
    static func isWrapped(store: String, by keyFile: String) -> Bool {
        guard let kek = try? SQLiteKeychainDatabase.readKeyFile(keyFile),
            let connection = try? Connection(path: store, mode: .readOnly),
            let statement = try? connection.prepare("SELECT value FROM meta WHERE name = 'wrapped_master'"),
            let wrapped = (try? statement.firstRow({ $0.data(0) })) ?? nil
        else { return false }
        return SQLiteKeychainDatabase.unwraps(kek, wrapped)
    }
}
