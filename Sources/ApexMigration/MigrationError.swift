/// Why a migration stopped as a whole. Messages never hold a secret.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source or the target can't be used now (the device is locked): nothing was removed or marked;
    /// run again later.
    case tryLater(String)
    /// The plan has conflicts and the policy says to stop: nothing was written.
    case conflicts(Int)
    /// The source can't be read.
    case source(String)
    /// An importer could not use its data.
    case importer(ImportError)

    /// For people.
    public var description: String {
        switch self {
        case .tryLater(let why): "not now: \(why); nothing was lost, run again later"
        case .conflicts(let count): "\(count) item(s) conflict with what the target holds; nothing was written"
        case .source(let why): why
        case .importer(let error): error.description
        }
    }
}
