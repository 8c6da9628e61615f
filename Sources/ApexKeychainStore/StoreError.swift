/// Why a store could not be created or opened. The message names the file and the cause, never a secret.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure, for programs (the CLI maps kinds to exit codes).
    public enum Kind: String, Sendable, Equatable {
        /// The store does not exist.
        case notFound
        /// The file is not a store: not SQLite, or SQLite without the store's tables.
        case notAStore
        /// The file was a SQLite database (a store, as far as can be told) but is damaged or truncated: SQLite
        /// finds its pages inconsistent. Not to be thrown away lightly: a backup, or SQLite's `.recover`, may
        /// still hold its items.
        case damaged
        /// The store exists but can't be read: no permission to read it, or it is in a read-only folder with
        /// changes in its `-wal` file that SQLite can only read with write access to the folder.
        case unreadable
        /// The store was written by a newer version of the package.
        case newerVersion
        /// The store could not be created (it exists, a key file that may belong to another store is in the way,
        /// the folder is not writable, the passphrase is empty or too long).
        case cannotCreate
        /// The key file does not exist, or is not a regular file (a folder, a pipe, a device).
        case keyFileMissing
        /// The key file can't be read, is malformed, or is accessible by others.
        case keyFile
        /// The key file or passphrase does not open this store.
        case wrongKey
        /// Reading or writing the store failed.
        case io
    }

    /// The kind of failure.
    public let kind: Kind
    /// The file concerned.
    public let path: String
    /// What is wrong, for people.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, path: String, _ message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// `path: message`.
    public var description: String { "\(path): \(message)" }
}
