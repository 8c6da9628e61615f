import ApexKeychain
import ApexKeychainStore
import ApexMigration

/// How the libraries' errors become ``CLIError``s: the exit code of each kind, and a message that names the
/// store and the cause.
enum ErrorMapping {
    /// A store that can't be created or opened.
    ///
    /// The message starts with the store path; when the error concerns another file (the key file), that file
    /// is named too.
    static func store(_ error: StoreError, store: String) -> CLIError {
        let exitCode: ExitCode =
            switch error.kind {
            case .notFound, .unreadable, .keyFileMissing: .noInput
            case .notAStore, .damaged, .newerVersion: .dataError
            case .cannotCreate: .cannotCreate
            case .keyFile, .wrongKey: .permissionDenied
            case .io: .ioError
            }
        let subject = error.path == store ? store : "\(store): \(error.path)"
        return CLIError(exitCode, "\(subject): \(error.message)")
    }

    /// A keychain call that failed: `STORE: CODE: message`.
    static func keychain(_ error: KeychainError, store: String) -> CLIError {
        CLIError(exitCode(of: error.code), "\(store): \(error.code.rawValue): \(error.message)")
    }

    /// A database call made directly (not through a ``Keychain``), as ``Keychain`` would report it.
    static func database(_ error: KeychainDatabaseError, store: String) -> CLIError {
        let code: KeychainErrorCode = error.status == .interactionNotAllowed ? .INTERACTION_NOT_ALLOWED : .INTERNAL
        return keychain(KeychainError(code, "database error: \(error.message)"), store: store)
    }

    /// The exit code of a keychain error code.
    static func exitCode(of code: KeychainErrorCode) -> ExitCode {
        switch code {
        case .INVALID_ARGUMENT: .usage
        case .INTERACTION_NOT_ALLOWED: .temporaryFailure
        case .INTERNAL: .ioError
        case .USER_CANCELED, .USER_FALLBACK, .KEY_INVALIDATED, .BIOMETRY_NOT_ENROLLED, .BIOMETRY_NOT_AVAILABLE,
            .BIOMETRY_LOCKOUT, .PASSCODE_NOT_SET, .AUTHENTICATION_FAILED, .UNSUPPORTED, .MISSING_USAGE_DESCRIPTION,
            .MISSING_ENTITLEMENT, .HARDWARE_UNAVAILABLE:
            .failure
        }
    }

    /// A migration that stopped as a whole: 75 try later, 1 conflicts (nothing written), 65 an importer
    /// can't use a dump, 74 the source or the target failed, the parked items could not be put back, or the
    /// migration can't run as given. `store` is the store's path, or nil for a plan without one.
    static func migration(_ error: MigrationError, store: String?) -> CLIError {
        let prefix = store.map { "\($0): " } ?? ""
        switch error {
        case .tryLater: return CLIError(.temporaryFailure, prefix + error.description)
        case .conflicts: return CLIError(.failure, prefix + error.description)
        case .importer(let importError): return CLIError(.dataError, importError.description)
        case .source, .target, .restoringParkedItems, .invalidPolicy:
            return CLIError(.ioError, prefix + error.description)
        }
    }
}
