/// Why a store could not be created or opened. The message names the file and the cause, never a secret.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure, for programs (the CLI maps kinds to exit codes).
    public enum Kind: String, Sendable, Equatable {
        /// The store does not exist.
        case notFound
        /// The file is not a store: not SQLite, or SQLite without the store's tables.
        case notAStore
        /// The store was written by a newer version of the package.
        case newerVersion
        /// The store could not be created (it exists, the folder is not writable, the passphrase is empty).
        case cannotCreate
        /// The key file is missing, malformed or readable by others.
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
