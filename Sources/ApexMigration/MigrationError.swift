import ApexKeychain

/// Why a migration stopped as a whole, and which thing failed: the migration as given, the source, the target, or
/// the putting back of what an interrupted run moved aside. Messages never hold a secret.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source or the target can't be used now (the device is locked): nothing was removed or marked;
    /// run again later.
    case tryLater(String)
    /// The plan has conflicts and the policy says to stop: nothing was written.
    case conflicts(Int)
    /// The migration can't run as given: it has no importer (its first run would find nothing and complete the
    /// migration for good). Refused before anything is read or written; only a change of the app's code fixes it.
    case invalidPolicy(String)
    /// The source can't be read: an on-device source's keychain failed, or its database and device don't belong
    /// together (`KeychainDatabase.problem(with:)`, refused before anything is read or written).
    case source(String)
    /// The target keychain failed (a database fault, a ledger record that can't be written), or its database and
    /// device don't belong together (`INVALID_ARGUMENT`, refused before anything is read or written). A locked
    /// device is ``tryLater(_:)`` instead.
    case target(KeychainError)
    /// The source items an interrupted run moved aside could not be put back (or deleted, once their copy was
    /// verified): they stay parked, and the next run tries again.
    case restoringParkedItems(String)
    /// An importer could not use its data.
    case importer(ImportError)

    /// For people.
    public var description: String {
        switch self {
        case .tryLater(let why): "not now: \(why); nothing was lost, run again later"
        case .conflicts(let count): "\(count) item(s) conflict with what the target holds; nothing was written"
        case .invalidPolicy(let why): why
        case .source(let why): why
        case .target(let error): "target: \(error)"
        case .restoringParkedItems(let why): "can't put back the source items an interrupted run moved aside: \(why)"
        case .importer(let error): error.description
        }
    }
}
